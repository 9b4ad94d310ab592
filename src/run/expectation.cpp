#include "run/expectation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/catalog/catalog.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/json.hpp"
#include "core/common/units.hpp"
#include "core/estimate/compare.hpp"
#include "core/setup/plan.hpp"

namespace gpusage::run {

std::string Expectation::label() const {
  return i18n::trf("{} {} batch {}{} on {}", model, catalog::to_string(precision), batch,
                   accumulation > 1 ? i18n::trf(" x {} accumulated", accumulation) : "", gpu_name);
}

double model_flops_per_sample(const workload::Workload& workload, bool lora) {
  // With a frozen base, backward computes the input gradients only: as many FLOPs as forward.
  return lora ? 2 * workload.forward_flops() : workload.forward_flops() + workload.backward_flops();
}

const catalog::Gpu& catalog_card(const device::GpuInfo& gpu, std::string* guess) {
  return estimate::resolve_device_name(gpu.name, catalog::Catalog::active(), gpu.memory_total_bytes, gpu.pci_device_id,
                                       guess);
}

namespace {

// The expectation's figures from plan's prediction on the card (with its completed tensor rates).
Expectation expectation_of(const estimate::Sweep& sweep) {
  const estimate::Prediction& p = sweep.predictions.front();
  const catalog::Gpu& gpu = *sweep.gpus.front();
  const workload::Workload& timed = sweep.timed_workload ? *sweep.timed_workload : sweep.workload;
  Expectation e;
  e.model = sweep.workload.display_name;
  e.gpu_id = gpu.id;
  e.gpu_name = gpu.name;
  e.precision = p.config.precision;
  e.batch = p.config.batch_per_gpu;
  e.accumulation = std::max(1, p.config.accumulation_steps);
  e.world_size = p.config.world_size();
  e.tokens_per_sample = timed.tokens_per_sample();
  e.lora = p.config.lora_rank.has_value() || p.config.qlora;
  e.samples_per_s = p.throughput;
  e.samples_per_s_low = p.throughput_low;
  e.samples_per_s_high = p.throughput_high;
  e.interval_basis = p.interval_basis;
  e.memory_bytes = p.memory.total_bytes();
  e.fits = p.fits;
  // NVML counts a sample period busy when any kernel ran in it; what plan's step leaves idle is the launch
  // and dispatch overhead that GPU work did not hide.
  e.utilization_percent = p.time.step_s > 0 ? 100 * (1 - p.time.overhead_s / p.time.step_s) : 0;
  e.model_flops_per_sample = model_flops_per_sample(timed, e.lora);
  e.peak_tflops = gpu.matmul_tflops(e.precision);  // completed (gpu_rates.hpp) where the catalog lists none
  return e;
}

}  // namespace

ExpectationResult make_expectation(const ExpectationRequest& request, const device::SystemInfo& system) {
  ExpectationResult out;
  const catalog::Gpu* gpu = request.gpu;
  std::string guess;  // what identifying the NVML device had to guess
  if (!gpu) {
    if (!system.available || system.gpus.empty()) {
      out.note = i18n::tr("no prediction: no GPU to predict for (give --gpu)");
      return out;
    }
    try {
      gpu = &catalog_card(system.gpus.front(), &guess);
    } catch (const InputError& e) {
      out.note = i18n::trf("no prediction: {} (give --gpu)", e.what());
      return out;
    }
  }
  try {
    estimate::SweepRequest sweep;
    sweep.gpus = {gpu};
    sweep.batches = parse_batch_list(request.setup.batch).sizes;
    if (sweep.batches.size() != 1) throw InputError("give one --batch (the per-GPU batch) for a prediction");
    out.expectation = expectation_of(setup::run_plan(request.setup, sweep));
    setup::TrainingSetup as_planned = request.setup;  // the card predicted, whether given or read from NVML
    as_planned.gpu = gpu->id;
    out.expectation->plan_command = "gpusage plan" + as_planned.to_flags();
  } catch (const InputError& e) {
    out.note = i18n::trf("no prediction on {}: {}", gpu->name, e.what());
    return out;
  }
  if (!request.gpu)
    out.note = i18n::trf("predicting for {} ({}; NVML: {}){}", gpu->name, gpu->id, system.gpus.front().name,
                         guess.empty() ? "" : "; " + guess);
  return out;
}

std::optional<double> samples_per_unit(const Expectation& e, const std::string& unit, const std::string& source) {
  static const std::array<std::string_view, 5> steps = {"it", "step", "steps", "batch", "batches"};
  static const std::array<std::string_view, 11> samples = {"samples",  "sample", "img",  "imgs",   "images", "ex",
                                                           "examples", "seq",    "seqs", "frames", "image"};
  if (std::find(steps.begin(), steps.end(), unit) != steps.end()) return static_cast<double>(e.batch) * e.accumulation;
  if (std::find(samples.begin(), samples.end(), unit) != samples.end()) {
    // Hugging Face's and Lightning's samples_per_second count the whole world's samples.
    const bool world = source == "hf-trainer" || source == "lightning";
    return world ? 1.0 / e.world_size : 1.0;
  }
  if ((unit == "tok" || unit == "tokens") && e.tokens_per_sample > 0) return 1.0 / e.tokens_per_sample;
  return std::nullopt;
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::below: return "below";
    case Verdict::within: return "within";
    case Verdict::above: return "above";
  }
  return "within";
}

Verdict verdict(const Expectation& e, double samples_per_s) {
  if (samples_per_s < e.samples_per_s_low) return Verdict::below;
  if (samples_per_s > e.samples_per_s_high) return Verdict::above;
  return Verdict::within;
}

Efficiency efficiency(const Expectation& e, double samples_per_s) {
  Efficiency out;
  out.samples_per_s = samples_per_s;
  out.achieved_tflops = e.model_flops_per_sample * samples_per_s / 1e12;
  if (e.peak_tflops && *e.peak_tflops > 0) out.mfu = out.achieved_tflops / *e.peak_tflops;
  return out;
}

ExpectationOutcome compare(const Expectation& e, const std::vector<ThroughputSummary>& throughput,
                           std::optional<double> memory_peak_bytes, std::optional<double> utilization_median_percent) {
  ExpectationOutcome o;
  for (const auto& t : throughput) {  // most readings first
    const auto per_unit = samples_per_unit(e, t.unit, t.source);
    if (!per_unit) continue;
    o.reading = t;
    o.samples_per_unit = per_unit;
    o.measured_samples_per_s = t.median_per_s * *per_unit;
    o.verdict = verdict(e, *o.measured_samples_per_s);
    o.efficiency = efficiency(e, *o.measured_samples_per_s);
    break;
  }
  o.memory_peak_bytes = memory_peak_bytes;
  o.utilization_median_percent = utilization_median_percent;
  return o;
}

namespace {

std::string range_text(double low, double high) {
  return fmt::format("{:.3g}\u2013{:.3g}", low, high);  // en dash, as a range is written
}

}  // namespace

diagnose::Finding expectation_finding(const Expectation& e, const Throughput& reading, double samples_per_s,
                                      Verdict side, std::optional<double> utilization_percent) {
  const double per_unit = samples_per_s / reading.per_second;
  diagnose::Finding f;
  f.category = diagnose::Category::gpu;
  f.source_title = i18n::tr("gpusage plan's model and its 80% interval (docs/MODEL.md)");
  f.evidence = i18n::trf(
      "The program printed {:.3g} {} ({:.4g} samples/s per GPU at {:.4g} samples per {}); plan predicts "
      "{:.4g} "
      "samples/s, 80% of held-out runs within {:.4g}\u2013{:.4g} ({}).",
      reading.per_second, reading.label(), samples_per_s, per_unit, reading.unit, e.samples_per_s, e.samples_per_s_low,
      e.samples_per_s_high, e.interval_basis);
  std::string why;
  if (side == Verdict::above) {
    f.id = "run-throughput-above-prediction";
    f.severity = diagnose::Severity::info;
    why = i18n::tr("faster than predicted");
    f.fix = i18n::trf(
        "Check that --batch {}, --precision {} and the model match the run (one '{}' is taken as {:.4g} "
        "samples per "
        "GPU); if they do, plan is pessimistic here: `gpusage bench` measures the card and --calibration "
        "feeds "
        "it back.",
        e.batch, catalog::to_string(e.precision), reading.unit, per_unit);
  } else {
    f.id = "run-throughput-below-prediction";
    f.severity = diagnose::Severity::warning;
    if (utilization_percent && *utilization_percent < std::min(80.0, e.utilization_percent - 10)) {
      why = i18n::trf("the GPU is idle {:.0f}% of the time; input-bound", 100 - *utilization_percent);
      f.fix = i18n::tr(
          "Feed the GPU faster: DataLoader(num_workers=one per CPU core, pin_memory=True, "
          "persistent_workers=True, "
          "prefetch_factor=4), decode on the GPU (DALI) or cache the decoded data; keep .item() and prints "
          "out of "
          "the step.");
    } else if (utilization_percent) {
      why = i18n::trf("the GPU is busy ({:.0f}% utilization): the step itself is slower than the model",
                      *utilization_percent);
      f.fix = i18n::trf(
          "Check that the run trains as planned: autocast to {} on, torch.backends.cudnn.benchmark = True, "
          "channels_last for convolutions, no synchronising call (.item(), .cpu()) in every step; `gpusage "
          "bench` "
          "measures the card alone.",
          catalog::to_string(e.precision));
    } else {
      why = i18n::tr("no GPU utilization was read to tell an input-bound run from a slow step");
      f.fix =
          i18n::tr("Compare with `gpusage bench` on this card, and check the DataLoader's num_workers and pin_memory.");
    }
  }
  f.title = i18n::trf("{:.3g} {} against {} predicted for {}: {}", reading.per_second, reading.label(),
                      range_text(e.samples_per_s_low / per_unit, e.samples_per_s_high / per_unit), e.label(), why);
  return f;
}

std::optional<diagnose::Finding> ExpectationWatch::add(double unix_time_s, const Throughput& reading,
                                                       std::optional<double> utilization_percent) {
  const auto per_unit = samples_per_unit(expectation_, reading.unit, reading.source);
  if (!per_unit) return std::nullopt;
  const double samples_per_s = reading.per_second * *per_unit;
  last_samples_per_s_ = samples_per_s;
  const Verdict v = verdict(expectation_, samples_per_s);
  if (v == Verdict::within || v != side_) {
    side_ = v == Verdict::within ? std::nullopt : std::optional<Verdict>(v);
    outside_since_s_ = unix_time_s;
    outside_readings_ = v == Verdict::within ? 0 : 1;
    return std::nullopt;
  }
  ++outside_readings_;
  if (fired_ || outside_readings_ < 3 || unix_time_s - outside_since_s_ < window_s_) return std::nullopt;
  fired_ = true;
  return expectation_finding(expectation_, reading, samples_per_s, v, utilization_percent);
}

nlohmann::json expectation_json(const ExpectationSummary& s) {
  const Expectation& e = s.expected;
  const ExpectationOutcome& o = s.measured;
  using json_util::optional;
  nlohmann::json reading = nullptr;
  if (o.reading)
    reading = {{"unit", o.reading->label_unit()},
               {"source", o.reading->source},
               {"median_per_s", o.reading->median_per_s},
               {"samples_per_unit", optional(o.samples_per_unit)}};
  return {
      {"model", e.model},
      {"plan_command", e.plan_command},
      {"gpu", e.gpu_id},
      {"gpu_name", e.gpu_name},
      {"precision", catalog::to_string(e.precision)},
      {"batch", e.batch},
      {"accumulation", e.accumulation},
      {"world_size", e.world_size},
      {"throughput",
       {{"unit", "samples/s per GPU"},
        {"predicted", e.samples_per_s},
        {"low", e.samples_per_s_low},
        {"high", e.samples_per_s_high},
        {"interval_basis", e.interval_basis},
        {"measured", optional(o.measured_samples_per_s)},
        {"reading", reading},
        {"verdict", o.verdict ? nlohmann::json(to_string(*o.verdict)) : nlohmann::json(nullptr)}}},
      {"memory",
       {{"predicted_bytes", e.memory_bytes}, {"fits", e.fits}, {"measured_peak_bytes", optional(o.memory_peak_bytes)}}},
      {"utilization",
       {{"predicted_percent", e.utilization_percent},
        {"measured_median_percent", optional(o.utilization_median_percent)}}}};
}

nlohmann::json efficiency_json(const ExpectationSummary& s) {
  const Expectation& e = s.expected;
  const ExpectationOutcome& o = s.measured;
  if (!o.efficiency) return nullptr;
  return {{"model_flops_per_sample", e.model_flops_per_sample},
          {"samples_per_s", o.efficiency->samples_per_s},
          {"achieved_tflops", o.efficiency->achieved_tflops},
          {"peak_tflops", json_util::optional(e.peak_tflops)},
          {"peak_source", fmt::format("catalog: {} dense {} tensor TFLOPS", e.gpu_id, catalog::to_string(e.precision))},
          {"mfu", json_util::optional(o.efficiency->mfu)}};
}

// The verdict in the reader's language ("within the interval"); to_string is the JSON value.
static std::string verdict_label(Verdict v) {
  switch (v) {
    case Verdict::below: return i18n::tr("below");
    case Verdict::above: return i18n::tr("above");
    case Verdict::within: break;
  }
  return i18n::tr("within");
}

std::string render_expectation(const ExpectationSummary& s) {
  const Expectation& e = s.expected;
  const ExpectationOutcome& o = s.measured;
  std::string out = i18n::trf("gpusage: predicted (plan) for {}, against measured:\n", e.label());
  std::string measured = i18n::tr("no throughput line that converts to samples");
  if (o.reading && o.measured_samples_per_s)
    measured = i18n::trf("{:.3g} {} median = {:.4g} samples/s per GPU: {} the interval", o.reading->median_per_s,
                         o.reading->label_unit(), *o.measured_samples_per_s, verdict_label(*o.verdict));
  out += i18n::trf("gpusage:   throughput   predicted {:.4g} samples/s (80%: {:.4g}\u2013{:.4g}), measured {}\n",
                   e.samples_per_s, e.samples_per_s_low, e.samples_per_s_high, measured);
  if (!e.plan_command.empty()) out += i18n::trf("gpusage:   as planned   {}\n", e.plan_command);
  out += i18n::trf("gpusage:   memory       predicted {}{}, measured peak {}\n", units::format_bytes(e.memory_bytes),
                   e.fits ? "" : i18n::tr(" (does not fit)"),
                   o.memory_peak_bytes ? units::format_bytes(*o.memory_peak_bytes) : i18n::tr("not read"));
  out += i18n::trf("gpusage:   utilization  predicted {:.0f}% (no host stalls), measured median {}\n",
                   e.utilization_percent,
                   o.utilization_median_percent ? fmt::format("{:.0f}%", *o.utilization_median_percent)
                                                : std::string(i18n::tr("not read")));
  if (o.efficiency) {
    const Efficiency& f = *o.efficiency;
    out += i18n::trf(
        "gpusage: MFU {}: {:.1f} TFLOPS achieved{} ({:.3g} GFLOP per sample x {:.4g} samples/s)\n",
        f.mfu ? fmt::format("{:.1f}%", *f.mfu * 100) : std::string(i18n::tr("n/a")), f.achieved_tflops,
        e.peak_tflops
            ? i18n::trf(" of {:.4g} dense {} TFLOPS on {}", *e.peak_tflops, catalog::to_string(e.precision), e.gpu_name)
            : i18n::trf(" ({} lists no dense {} rate)", e.gpu_name, catalog::to_string(e.precision)),
        e.model_flops_per_sample / 1e9, f.samples_per_s);
  }
  return out;
}

std::string prometheus_expectation(const Expectation& e, std::optional<double> samples_per_s) {
  std::string out =
      "# HELP gpusage_run_predicted_samples_per_second plan's prediction for the run, per GPU, with its 80% "
      "interval.\n# TYPE gpusage_run_predicted_samples_per_second gauge\n";
  out += fmt::format("gpusage_run_predicted_samples_per_second{{bound=\"low\"}} {}\n", e.samples_per_s_low);
  out += fmt::format("gpusage_run_predicted_samples_per_second{{bound=\"predicted\"}} {}\n", e.samples_per_s);
  out += fmt::format("gpusage_run_predicted_samples_per_second{{bound=\"high\"}} {}\n", e.samples_per_s_high);
  if (!samples_per_s) return out;
  const Efficiency f = efficiency(e, *samples_per_s);
  out +=
      "# HELP gpusage_run_samples_per_second The program's latest throughput line, in samples/s per GPU.\n"
      "# TYPE gpusage_run_samples_per_second gauge\n";
  out += fmt::format("gpusage_run_samples_per_second {}\n", f.samples_per_s);
  out +=
      "# HELP gpusage_run_achieved_tflops Model FLOPs per sample x samples/s, per GPU.\n"
      "# TYPE gpusage_run_achieved_tflops gauge\n";
  out += fmt::format("gpusage_run_achieved_tflops {}\n", f.achieved_tflops);
  if (f.mfu) {
    out +=
        "# HELP gpusage_run_mfu_ratio Model FLOPs utilization: achieved over the card's dense peak.\n"
        "# TYPE gpusage_run_mfu_ratio gauge\n";
    out += fmt::format("gpusage_run_mfu_ratio {}\n", *f.mfu);
  }
  return out;
}

}  // namespace gpusage::run
