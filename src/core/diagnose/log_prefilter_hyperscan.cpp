// The block engine on Hyperscan (https://intel.github.io/hyperscan/dev-reference/): the trigger words
// compiled once as caseless literals (hs_compile_lit_multi) into a block-mode database; each scan reports
// every word's end offset, which the scanner maps to its line.
#include <hs.h>

#include <new>

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
    auto* space = static_cast<HyperscanScratch&>(scratch).space;
    // The scanner hands blocks of at most a few hundred KiB (log_scan.cpp), far below hs_scan's 4 GiB.
    if (hs_scan(database_, block.data(), static_cast<unsigned>(block.size()), 0, space, on_match, &collect) !=
        HS_SUCCESS) {
      throw std::bad_alloc();  // only a scratch too small or a corrupt database gets here: both are bugs
    }
  }

  std::string name() const override { return std::string("hyperscan ") + hs_version(); }

 private:
  hs_database_t* database_;
  std::vector<std::uint64_t> groups_;  // by word id
};

}  // namespace

std::unique_ptr<BlockEngine> make_block_engine(const std::vector<std::string>& words,
                                               const std::vector<std::uint64_t>& groups) {
  if (words.empty() || hs_valid_platform() != HS_SUCCESS) return nullptr;  // Hyperscan needs SSSE3
  std::vector<const char*> literals;
  std::vector<std::size_t> lengths;
  std::vector<unsigned> flags(words.size(), HS_FLAG_CASELESS);
  std::vector<unsigned> ids;
  for (const auto& word : words) {
    literals.push_back(word.data());
    lengths.push_back(word.size());
    ids.push_back(static_cast<unsigned>(ids.size()));
  }
  hs_database_t* database = nullptr;
  hs_compile_error_t* error = nullptr;
  if (hs_compile_lit_multi(literals.data(), flags.data(), ids.data(), lengths.data(),
                           static_cast<unsigned>(words.size()), HS_MODE_BLOCK, nullptr, &database,
                           &error) != HS_SUCCESS) {
    hs_free_compile_error(error);
    return nullptr;  // the automaton does the same job
  }
  return std::make_unique<HyperscanEngine>(database, groups);
}

}  // namespace gpusage::diagnose
