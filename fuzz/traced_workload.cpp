// The traced workload reader (plan --workload, python/gpusage/trace.py's JSON). An accepted file gives a
// workload with at least one layer whose sums are finite and non-negative; anything else is an InputError.
#include <cmath>

#include "core/workload/traced.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  return fuzz::accepting_input_errors([&] {
    const workload::Workload w = workload::from_traced_workload(fuzz::text_of(data, size), "fuzz.json");
    FUZZ_CHECK(!w.layers.empty());
    FUZZ_CHECK(w.params() >= 0 && w.frozen_params() >= 0);
    for (double v : {w.forward_flops(), w.backward_flops(), w.saved_elements(), w.saved_fixed_bytes()})
      FUZZ_CHECK(std::isfinite(v) && v >= 0);
  });
}
