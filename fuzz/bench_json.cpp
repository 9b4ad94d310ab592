// The bench result JSON (plan --calibration, report --bench). A file that parses has well-formed runs; one
// that calibrates sets finite, positive step-time scales for catalog GPUs only.
#include <cmath>

#include "core/catalog/catalog.hpp"
#include "core/estimate/bench_file.hpp"
#include "core/estimate/calibration_file.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const std::string text = fuzz::text_of(data, size);
  fuzz::accepting_input_errors([&] {
    const estimate::BenchFile file = estimate::parse_bench_file(text, "fuzz.json");
    for (const estimate::BenchRun& run : file.runs) {
      if (run.throughput) FUZZ_CHECK(!std::isnan(*run.throughput));
    }
  });
  return fuzz::accepting_input_errors([&] {
    const catalog::Catalog& catalog = catalog::Catalog::builtin();
    estimate::Calibration calibration;
    estimate::apply_bench_results(calibration, text, "fuzz.json", catalog);
    for (const auto& [gpu, scale] : calibration.step_time_scale) {
      FUZZ_CHECK(catalog.find(gpu) != nullptr);
      FUZZ_CHECK(std::isfinite(scale) && scale > 0);
    }
  });
}
