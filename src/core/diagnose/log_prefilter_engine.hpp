// The prefilter's block engine (issue 54): finds the trigger words in a whole block of lines at once, with SIMD,
// where the Aho-Corasick automaton of log_prefilter.hpp reads one byte at a time. Hyperscan (Intel's multi-
// literal matcher, Debian's libhyperscan-dev, x86-64 only) when the build found it; no engine otherwise, and
// the automaton scans the block line by line instead (the same groups, slower).
//
// Which implementation links is the executable's choice, as for fmt and toml++ (cmake/Portable.cmake):
// gpusage and the tests link log_prefilter_hyperscan.cpp where pkg-config finds libhs, gpusage-portable
// (glibc only, any x86-64) links log_prefilter_no_engine.cpp. This header depends on nothing of gpusage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::diagnose {

// A word found in a block: the offset just past it, and the groups of the words that end there. Hits come in
// order of `end`, several to a line possibly.
struct BlockHit {
  std::size_t end = 0;
  std::uint64_t groups = 0;
};

// One thread's working memory for an engine (Hyperscan's scratch space).
class BlockScratch {
 public:
  virtual ~BlockScratch() = default;
};

class BlockEngine {
 public:
  virtual ~BlockEngine() = default;
  virtual std::unique_ptr<BlockScratch> make_scratch() const = 0;
  // Appends the hits of `block` to `hits` (ASCII case ignored, as the automaton does).
  virtual void find(std::string_view block, BlockScratch& scratch, std::vector<BlockHit>& hits) const = 0;
  // The groups of every word in `text`, ORed (a single line; no hit list).
  virtual std::uint64_t groups_in(std::string_view text, BlockScratch& scratch) const = 0;
  // "hyperscan 5.4.0 …", for the benchmark's record.
  virtual std::string name() const = 0;
};

// The engine for these words (lower case, distinct, each with the groups it stands for), or null where the
// executable links none, the processor lacks what it needs, or it refuses the words.
std::unique_ptr<BlockEngine> make_block_engine(const std::vector<std::string>& words,
                                               const std::vector<std::uint64_t>& groups);

}  // namespace gpusage::diagnose
