// The GPU catalog loader (GPUSAGE_CATALOG=FILE, data/gpus.toml's format). A catalog that loads holds GPUs
// with unique ids that resolve to themselves, and rates every later step can use.
#include <cmath>
#include <set>

#include "core/catalog/catalog.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  return fuzz::accepting_input_errors([&] {
    const catalog::Catalog loaded = catalog::Catalog::parse(fuzz::text_of(data, size), "fuzz.toml");
    std::set<std::string> ids;
    for (const catalog::Gpu& gpu : loaded.gpus()) {
      FUZZ_CHECK(ids.insert(gpu.id).second);
      FUZZ_CHECK(loaded.find(gpu.id) == &gpu);
      FUZZ_CHECK(std::isfinite(gpu.fp32_tflops) && gpu.fp32_tflops >= 0);
      FUZZ_CHECK(std::isfinite(gpu.memory_gb) && gpu.memory_gb >= 0);
      FUZZ_CHECK(std::isfinite(gpu.memory_bandwidth_gbs) && gpu.memory_bandwidth_gbs >= 0);
      const catalog::Derived derived = catalog::derive(gpu);
      if (derived.ridge_point_flop_per_byte) FUZZ_CHECK(!std::isnan(*derived.ridge_point_flop_per_byte));
    }
    // Re-validation: the same text loads again to the same catalog.
    const catalog::Catalog again = catalog::Catalog::parse(fuzz::text_of(data, size), "fuzz.toml");
    FUZZ_CHECK(again.gpus().size() == loaded.gpus().size());
    (void)loaded.select("all");
  });
}
