// The --gpu list (gpus, plan, guide, report): names, ids, families, market groups or "all". A selection is
// never empty and names each catalog GPU at most once: a card a name was taken as by default (H800 -> SXM5) is
// the catalog's entry with a note, so it is held to its id, not to its address.
#include <set>
#include <string>

#include "core/catalog/catalog.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const catalog::Catalog& catalog = catalog::Catalog::builtin();
  return fuzz::accepting_input_errors([&] {
    const std::vector<const catalog::Gpu*> selected = catalog.select(fuzz::text_of(data, size));
    FUZZ_CHECK(!selected.empty());
    std::set<std::string> seen;
    for (const catalog::Gpu* gpu : selected) {
      const catalog::Gpu* entry = catalog.find(gpu->id);
      FUZZ_CHECK(entry != nullptr);
      FUZZ_CHECK(entry->id == gpu->id && entry->memory_gb == gpu->memory_gb);
      FUZZ_CHECK(seen.insert(gpu->id).second);
    }
  });
}
