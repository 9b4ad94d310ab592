#include "run/plausibility.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/i18n.hpp"

namespace gpusage::run {

namespace {

// "25600", "512", "9.87": a rate without an exponent.
std::string rate_text(double v) { return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }

}  // namespace

std::optional<Ceiling> compute_ceiling(const Expectation& e, const catalog::Gpu* gpu) {
  if (e.peak_tflops && *e.peak_tflops > 0)
    return Ceiling{*e.peak_tflops,
                   i18n::trf("{:.4g} dense {} tensor TFLOPS", *e.peak_tflops, catalog::to_string(e.precision))};
  if (!gpu) return std::nullopt;
  // No rate at the run's precision: the fastest dense rate the card lists at any precision (the most
  // generous reading of its peak).
  double fastest = gpu->fp32_tflops;
  for (const auto& rate : {gpu->tf32_tflops, gpu->fp16_tflops, gpu->fp16_acc16_tflops, gpu->bf16_tflops,
                           gpu->fp8_tflops, gpu->fp8_acc16_tflops, gpu->fp4_tflops})
    fastest = std::max(fastest, rate.value_or(0));
  if (fastest <= 0) return std::nullopt;
  return Ceiling{fastest, i18n::trf("{:.4g} TFLOPS, the fastest dense rate it lists at any precision", fastest)};
}

std::optional<diagnose::Finding> implausible_throughput(const Expectation& e, const catalog::Gpu* gpu,
                                                        double samples_per_s, double per_unit,
                                                        const std::string& unit) {
  const auto ceiling = compute_ceiling(e, gpu);
  const double achieved = efficiency(e, samples_per_s).achieved_tflops;
  if (!ceiling || e.model_flops_per_sample <= 0 || achieved <= ceiling->tflops) return std::nullopt;
  diagnose::Finding f;
  f.id = "run-throughput-implausible";
  f.severity = diagnose::Severity::warning;
  f.category = diagnose::Category::gpu;
  f.title = i18n::trf(
      "{} samples/s per GPU would be {:.4g} TFLOPS of {}, {:.1f}x what {} can do ({}): the throughput is not "
      "what the run trains, and no MFU is given",
      rate_text(samples_per_s), achieved, e.model, achieved / ceiling->tflops, e.gpu_name, ceiling->what);
  f.evidence = i18n::trf(
      "One '{}' is taken as {:.4g} samples per GPU (--batch {}{}{}); {} at {:.3g} GFLOP per sample (forward and "
      "backward).",
      unit, per_unit, e.batch, e.accumulation > 1 ? fmt::format(" x --accumulate {}", e.accumulation) : "",
      e.world_size > 1 ? i18n::trf(", {} GPUs", e.world_size) : "", e.model, e.model_flops_per_sample / 1e9);
  f.fix = i18n::trf(
      "Check what one '{}' counts: a micro-batch, one sample or an inner loop's step makes the rate {:.1f}x too "
      "high or more; give --batch as the per-GPU batch (not the global batch over all GPUs) and --accumulate as "
      "the micro-batches per step; check that the run trains {} at {} on {} and not a smaller model or another "
      "card.",
      unit, achieved / ceiling->tflops, e.model, catalog::to_string(e.precision), e.gpu_name);
  f.source_title =
      i18n::tr("MFU (PaLM, Chowdhery et al. 2022, appendix B) against the catalog's dense peak (data/gpus.toml)");
  return f;
}

std::optional<diagnose::Finding> implausible_reading(const Expectation& e, const catalog::Gpu* gpu,
                                                     const Throughput& reading) {
  const auto per_unit = samples_per_unit(e, reading.unit, reading.source);
  if (!per_unit) return std::nullopt;
  return implausible_throughput(e, gpu, reading.per_second * *per_unit, *per_unit, reading.unit);
}

std::optional<diagnose::Finding> withdraw_implausible(ExpectationSummary& s, const catalog::Gpu* gpu) {
  ExpectationOutcome& o = s.measured;
  if (!o.measured_samples_per_s || !o.samples_per_unit || !o.reading) return std::nullopt;
  auto f = implausible_throughput(s.expected, gpu, *o.measured_samples_per_s, *o.samples_per_unit, o.reading->unit);
  if (f) o.efficiency.reset();
  return f;
}

}  // namespace gpusage::run
