// The Hugging Face config.json importer (plan --hf-config). An accepted config gives a language workload
// whose sums are finite and non-negative, within the bounds of hf_limits.hpp.
#include <cmath>

#include "core/workload/workload.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  return fuzz::accepting_input_errors([&] {
    const workload::Workload w = workload::from_hf_config(fuzz::text_of(data, size));
    FUZZ_CHECK(w.domain == workload::Domain::language);
    FUZZ_CHECK(!w.layers.empty());
    FUZZ_CHECK(w.seq_len > 0);
    FUZZ_CHECK(w.params() > 0);
    for (double v : {w.forward_flops(), w.backward_flops(), w.saved_elements(), w.saved_fixed_bytes()})
      FUZZ_CHECK(std::isfinite(v) && v >= 0);
  });
}
