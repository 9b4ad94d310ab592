// The log scanner's prefilter (issue 54): one pass over a line finds which of the scanner's trigger words it
// holds, so each rule group runs only on lines with one of its words and the lines with none (most of a
// healthy log) skip the rules altogether.
//
// The words come from where the rules are: each group of patterns in log_scan*.cpp declares the words its
// cheap gate looks for (a pattern can only match a line that holds one of them), and the error-code table
// gives the words identify() needs (ErrorCodeTable::trigger_words). A group is one bit of a 64-bit mask.
//
// Two matchers, the same groups:
//   - an Aho-Corasick automaton (Aho & Corasick, "Efficient string matching", CACM 18(6), 1975) turned into a
//     dense DFA over byte classes, ASCII case folded into the classes: one table load per byte, no lower-casing
//     pass, no allocation. Portable C++ with no dependency, so gpusage builds anywhere, statically too;
//   - a block engine (log_prefilter_engine.hpp: Hyperscan where the build has it) that reads a whole block of
//     lines with SIMD and reports where words end; the scanner then finds the lines around them.
// The scanner reads blocks (find_in_block), which uses the engine when there is one and the automaton line by
// line otherwise; groups_in serves single lines, with the same matcher. The automaton is built only where no
// engine answers: its table (about 1.4 MiB for the scanner's words) would be most of doctor's heap (issue 54:
// peak memory).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/log_prefilter_engine.hpp"

namespace gpusage::diagnose {

// A group of patterns and the words that gate it (ASCII case ignored).
struct TriggerWords {
  unsigned group = 0;  // a bit index, < 64
  std::vector<std::string_view> words;
};

// The block engine's input: every distinct word of `lists` folded to lower case, in byte order, each with the
// groups it stands for. The one place that builds it, for LiteralMatcher and for the generator that compiles
// the scanner's words into Hyperscan's database at build time (log_prefilter_hyperscan_generate.cpp).
struct EngineWords {
  std::vector<std::string> words;
  std::vector<std::uint64_t> groups;  // by word
};
EngineWords engine_words(const std::vector<TriggerWords>& lists);

class LiteralMatcher {
 public:
  // best: the block engine where one links, else the automaton; automaton: the automaton alone (tests).
  enum class Engine { best, automaton };
  // Throws std::logic_error for an empty word, a word with a line break or a group >= 64 (a bug in a list).
  explicit LiteralMatcher(const std::vector<TriggerWords>& lists, Engine engine = Engine::best);
  ~LiteralMatcher();
  LiteralMatcher(const LiteralMatcher&) = delete;
  LiteralMatcher& operator=(const LiteralMatcher&) = delete;

  // The groups with a word in `text`: bit g set when some word of group g occurs (ASCII case ignored).
  // `scratch`: from make_scratch(), for the engine (without one, a call with the engine makes its own).
  std::uint64_t groups_in(std::string_view text, BlockScratch* scratch = nullptr) const {
    if (engine_) return engine_groups_in(text, scratch);
    std::uint32_t state = 0;
    std::uint64_t found = 0;
    const std::uint8_t* cls = byte_class_.data();
    const std::uint32_t* next = next_.data();
    for (const char c : text) {
      state = next[state + cls[static_cast<unsigned char>(c)]];
      if (state >= first_output_) found |= output_[(state - first_output_) / classes_];
    }
    return found;
  }

  // The words of `block`, a run of whole lines each ending in '\n': appends hits in order of `end`, every line
  // with a word having at least one hit that ends within it (a line's hits OR to its groups). `scratch`: from
  // make_scratch(), one per thread (null: the engine makes one for the call).
  void find_in_block(std::string_view block, BlockScratch* scratch, std::vector<BlockHit>& hits) const;
  // The engine's working memory (null when the automaton does the work).
  std::unique_ptr<BlockScratch> make_scratch() const;
  // "hyperscan 5.4.0 …" or "aho-corasick".
  std::string engine_name() const;

  // The automaton's states: 0 where the engine answers and no automaton was built.
  std::size_t states() const { return next_.size() / classes_; }
  std::size_t words() const { return words_.size(); }
  // Every word, folded to lower case (for tests).
  const std::vector<std::string>& word_list() const { return words_; }

 private:
  void build_automaton(const std::vector<TriggerWords>& lists);
  std::uint64_t engine_groups_in(std::string_view text, BlockScratch* scratch) const;

  std::array<std::uint8_t, 256> byte_class_{};  // 0: a byte no word has
  std::uint32_t classes_ = 1;
  // The DFA: next_[state * classes_ + class], states stored pre-multiplied by classes_; states with an output
  // (a word ends there, directly or through a failure link) are numbered last, from first_output_ on.
  std::vector<std::uint32_t> next_;
  std::uint32_t first_output_ = 0;
  std::vector<std::uint64_t> output_;  // for states >= first_output_
  std::vector<std::string> words_;
  std::unique_ptr<BlockEngine> engine_;  // null: the automaton, line by line
};

}  // namespace gpusage::diagnose
