// validate's published-measurements CSV. Every accepted row is usable: a positive batch and GPU count, a
// finite value, and the line it came from.
#include <cmath>

#include "core/estimate/validate.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  return fuzz::accepting_input_errors([&] {
    const auto rows = estimate::parse_measurements(fuzz::text_of(data, size), "fuzz.csv");
    int last_line = 0;
    for (const estimate::Measurement& m : rows) {
      FUZZ_CHECK(m.line > last_line);
      last_line = m.line;
      FUZZ_CHECK(m.batch_per_gpu >= 1 && m.num_gpus >= 1);
      FUZZ_CHECK(std::isfinite(m.value));
      FUZZ_CHECK(!m.model.empty() && !m.gpu.empty());
    }
  });
}
