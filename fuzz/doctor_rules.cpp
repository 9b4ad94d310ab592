// doctor's rule table (data/doctor/rules.toml's format). A table that loads answers every lookup the doctor
// makes of it: each rule by its id, each source a rule names, the driver minimum for every CUDA it lists.
#include <cmath>

#include "core/diagnose/rules.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  return fuzz::accepting_input_errors([&] {
    const diagnose::RuleTable table = diagnose::RuleTable::parse(fuzz::text_of(data, size), "fuzz-rules.toml");
    for (const diagnose::RuleText& rule : table.rules()) {
      FUZZ_CHECK(table.rule(rule.id).id == rule.id);
      if (!rule.source.empty()) FUZZ_CHECK(table.has_source(rule.source));
    }
    for (const diagnose::CudaDriverFact& fact : table.cuda_drivers()) FUZZ_CHECK(table.min_driver_for(fact.cuda));
    const diagnose::Thresholds& t = table.thresholds();
    FUZZ_CHECK(std::isfinite(t.grad_norm_explosion_factor) && std::isfinite(t.fragmentation_fraction));
    (void)table.cudnn_advice("CUDNN_STATUS_NOT_SUPPORTED");
  });
}
