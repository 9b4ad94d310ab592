// The --gpu list (gpus, plan, guide, report): names, ids, families, market groups or "all". A selection is
// never empty and names each catalog GPU at most once.
#include <set>

#include "core/catalog/catalog.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const catalog::Catalog& catalog = catalog::Catalog::builtin();
  return fuzz::accepting_input_errors([&] {
    const std::vector<const catalog::Gpu*> selected = catalog.select(fuzz::text_of(data, size));
    FUZZ_CHECK(!selected.empty());
    std::set<const catalog::Gpu*> seen;
    const catalog::Gpu* first = catalog.gpus().data();
    const catalog::Gpu* end = first + catalog.gpus().size();
    for (const catalog::Gpu* gpu : selected) {
      FUZZ_CHECK(gpu >= first && gpu < end);
      FUZZ_CHECK(seen.insert(gpu).second);
    }
  });
}
