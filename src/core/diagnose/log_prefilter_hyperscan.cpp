// The block engine on Hyperscan (https://intel.github.io/hyperscan/dev-reference/): the scanner's trigger words
// compiled at build time as caseless literals into a block-mode database (log_prefilter_embedded.hpp), which
// this file only deserializes; each scan reports every word's end offset, which the scanner maps to its line.
// It links libhs_runtime, which holds no compiler: other words than the embedded ones get no engine.
#include <hs_runtime.h>

#include <algorithm>
#include <new>

#include "core/diagnose/log_prefilter_embedded.hpp"
#include "core/diagnose/log_prefilter_engine.hpp"

namespace gpusage::diagnose {

namespace {

struct HyperscanScratch final : BlockScratch {
  hs_scratch_t* space = nullptr;
  ~HyperscanScratch() override { hs_free_scratch(space); }
};

struct Collect {
  const std::vector<std::uint64_t>* groups;
  std::vector<BlockHit>* hits;
};

int on_match(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/, void* context) {
  auto& c = *static_cast<Collect*>(context);
  const std::uint64_t groups = (*c.groups)[id];
  // Words ending at the same byte are one hit.
  if (!c.hits->empty() && c.hits->back().end == to) {
    c.hits->back().groups |= groups;
  } else {
    c.hits->push_back({static_cast<std::size_t>(to), groups});
  }
  return 0;  // go on
}

// A single line's groups (LiteralMatcher::groups_in): every word's, ORed, no hit list.
struct Union {
  const std::vector<std::uint64_t>* groups;
  std::uint64_t found = 0;
};

int on_match_union(unsigned id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned /*flags*/,
                   void* context) {
  auto& u = *static_cast<Union*>(context);
  u.found |= (*u.groups)[id];
  return 0;
}

class HyperscanEngine final : public BlockEngine {
 public:
  HyperscanEngine(hs_database_t* database, std::vector<std::uint64_t> groups)
      : database_(database), groups_(std::move(groups)) {}
  ~HyperscanEngine() override { hs_free_database(database_); }
  HyperscanEngine(const HyperscanEngine&) = delete;
  HyperscanEngine& operator=(const HyperscanEngine&) = delete;

  std::unique_ptr<BlockScratch> make_scratch() const override {
    auto scratch = std::make_unique<HyperscanScratch>();
    if (hs_alloc_scratch(database_, &scratch->space) != HS_SUCCESS) throw std::bad_alloc();
    return scratch;
  }

  void find(std::string_view block, BlockScratch& scratch, std::vector<BlockHit>& hits) const override {
    Collect collect{&groups_, &hits};
    scan(block, scratch, on_match, &collect);
  }

  std::uint64_t groups_in(std::string_view text, BlockScratch& scratch) const override {
    Union found{&groups_};
    scan(text, scratch, on_match_union, &found);
    return found.found;
  }

  std::string name() const override { return std::string("hyperscan ") + hs_version(); }

 private:
  void scan(std::string_view text, BlockScratch& scratch, match_event_handler handler, void* context) const {
    auto* space = static_cast<HyperscanScratch&>(scratch).space;
    // The scanner hands blocks of at most a few hundred KiB and lines of about 1 MiB at most (log_scan.cpp), far
    // below hs_scan's 4 GiB.
    if (hs_scan(database_, text.data(), static_cast<unsigned>(text.size()), 0, space, handler, context) != HS_SUCCESS) {
      throw std::bad_alloc();  // only a scratch too small or a corrupt database gets here: both are bugs
    }
  }

  hs_database_t* database_;
  std::vector<std::uint64_t> groups_;  // by word id
};

}  // namespace

std::unique_ptr<BlockEngine> make_block_engine(const std::vector<std::string>& words,
                                               const std::vector<std::uint64_t>& groups) {
  if (hs_valid_platform() != HS_SUCCESS) return nullptr;  // Hyperscan needs SSSE3
  if (words.empty() || words.size() != embedded::hyperscan_word_count ||
      !std::equal(words.begin(), words.end(), embedded::hyperscan_words)) {
    return nullptr;  // not the words compiled at build time: the automaton does the same job
  }
  hs_database_t* database = nullptr;
  if (hs_deserialize_database(reinterpret_cast<const char*>(embedded::hyperscan_database),
                              embedded::hyperscan_database_size, &database) != HS_SUCCESS) {
    return nullptr;  // a library other than the generator's (HS_DB_VERSION_ERROR): the automaton again
  }
  return std::make_unique<HyperscanEngine>(database, groups);
}

}  // namespace gpusage::diagnose
