// What `gpusage run` expects of the run when it knows the workload (plan's options: --model or --hf-config,
// --batch, --precision, ...): plan's prediction, made once at the start on the run's GPU, kept beside what
// the run measures. Pure: prediction and readings in, figures, verdicts and findings out.
//
//   - throughput and plan's 80% interval (per GPU, samples/s) against the program's own throughput lines,
//     converted to samples with the run's batch (samples_per_unit);
//   - memory (what nvidia-smi shows at the step's peak) against NVML's peak;
//   - utilization a step with no host stalls gives (1 - the launch overhead plan's step time leaves idle)
//   against
//     NVML's median;
//   - model FLOPs utilization (MFU) and achieved TFLOPS: the workload's FLOPs per sample x measured samples/s
//     against the card's dense tensor peak for the precision (docs/MODEL.md, "MFU").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/gpu.hpp"
#include "core/device/backend.hpp"
#include "core/diagnose/finding.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/planner.hpp"
#include "core/setup/training_setup.hpp"
#include "core/workload/workload.hpp"
#include "run/throughput.hpp"

namespace gpusage::run {

// What the prediction needs: the run's training setup (core/setup; its batch one size) and run's --gpu.
struct ExpectationRequest {
  setup::TrainingSetup setup;
  const catalog::Gpu* gpu = nullptr;  // --gpu; null: the catalog card of NVML's first GPU (catalog_card)
};

struct Expectation {
  std::string model;     // "ResNet-50"
  std::string gpu_id;    // catalog id
  std::string gpu_name;  // "GeForce RTX 5090"
  catalog::Precision precision = catalog::Precision::fp32;
  int batch = 0;         // per GPU
  int accumulation = 1;  // micro-batches per optimizer step
  int world_size = 1;
  int tokens_per_sample = 0;  // language models: the tokens a sample computes
  bool lora = false;
  double samples_per_s = 0;  // per GPU
  double samples_per_s_low = 0;
  double samples_per_s_high = 0;
  std::string interval_basis;
  double memory_bytes = 0;  // nvidia-smi at the step's peak (MemoryBreakdown::total_bytes)
  bool fits = true;
  double utilization_percent = 0;
  double model_flops_per_sample = 0;  // forward + backward, as MFU counts them
  std::optional<double> peak_tflops;  // the card's dense tensor rate at `precision` (catalog, else completed)
  std::string plan_command;           // the plan that predicts the same: "gpusage plan --model ... --gpu ID"

  // "ResNet-50 bf16 batch 256 on GeForce RTX 5090"
  std::string label() const;
};

struct ExpectationResult {
  std::optional<Expectation> expectation;
  std::string note;  // why there is none, or which GPU was assumed
};

// The catalog card a GPU NVML reports is. The one call run's expectation and fit-batch's start make for it.
// Throws InputError (with the catalog's suggestions) when none matches.
const catalog::Gpu& catalog_card(const device::GpuInfo& gpu, std::string* guess = nullptr);

// Predicts once, through plan's own path (setup::run_plan: tensor rates completed, calibration, the 80%
// interval), for the setup's batch on one card: the same figures `plan --gpu CARD --batch B` prints. The GPU is
// request.gpu, else NVML's first GPU (catalog_card); when neither names a catalog card the result has no
// expectation and a note saying why.
ExpectationResult make_expectation(const ExpectationRequest& request, const device::SystemInfo& system);

// Model FLOPs per sample as MFU counts them (PaLM, Chowdhery et al. 2022, appendix B): forward and backward
// of the model, never the recomputation that checkpointing adds. Full training: forward + backward (input and
// weight gradients); LoRA: the frozen base's weight gradients are not computed, so forward x 2.
double model_flops_per_sample(const workload::Workload& workload, bool lora);

// Samples per GPU that one unit of a throughput reading counts, or none when the unit cannot be converted:
//   it, step(s), batch(es)  one optimizer step: batch x accumulation samples;
//   samples, img, ex, seq…  one sample (tqdm on a rank counts its own; Hugging Face's and Lightning's
//                           samples_per_second are the whole world's: divided by the world size);
//   tok, tokens             1 / tokens per sample (language models).
std::optional<double> samples_per_unit(const Expectation& e, const std::string& unit, const std::string& source);

enum class Verdict { below, within, above };
const char* to_string(Verdict verdict);
Verdict verdict(const Expectation& e, double samples_per_s);

struct Efficiency {
  double samples_per_s = 0;  // per GPU
  double achieved_tflops = 0;
  std::optional<double> mfu;  // fraction; none without the card's dense rate at the precision
};
Efficiency efficiency(const Expectation& e, double samples_per_s);

// The end of the run: the throughput line the comparison used (the most readings that convert), and NVML's
// figures over the run's GPUs.
struct ExpectationOutcome {
  std::optional<ThroughputSummary> reading;
  std::optional<double> samples_per_unit;
  std::optional<double> measured_samples_per_s;
  std::optional<Verdict> verdict;
  std::optional<Efficiency> efficiency;
  std::optional<double> memory_peak_bytes;           // the largest of the run's GPUs
  std::optional<double> utilization_median_percent;  // the median of the GPUs' medians
};
// `memory_peak_bytes`: the largest NVML peak of the run's GPUs; `utilization_median_percent`: the median of
// their medians.
ExpectationOutcome compare(const Expectation& e, const std::vector<ThroughputSummary>& throughput,
                           std::optional<double> memory_peak_bytes, std::optional<double> utilization_median_percent);

struct ExpectationSummary {
  Expectation expected;
  ExpectationOutcome measured;
};

nlohmann::json expectation_json(const ExpectationSummary& s);
// null without a measured throughput that converts to samples.
nlohmann::json efficiency_json(const ExpectationSummary& s);
// Lines for stderr, each prefixed "gpusage: ".
std::string render_expectation(const ExpectationSummary& s);

// Prometheus exposition lines for /metrics while the run lasts: the prediction, and the latest measured
// samples/s with its achieved TFLOPS and MFU when there is one.
std::string prometheus_expectation(const Expectation& e, std::optional<double> samples_per_s);

// The live check: a finding once the readings have stayed outside the 80% interval (on one side) for
// `window_s` seconds, over at least three readings.
class ExpectationWatch {
 public:
  ExpectationWatch(Expectation expectation, double window_s)
      : expectation_(std::move(expectation)), window_s_(window_s) {}
  // `utilization_percent`: the run's GPUs' recent utilization, to tell input-bound from slow steps.
  std::optional<diagnose::Finding> add(double unix_time_s, const Throughput& reading,
                                       std::optional<double> utilization_percent);
  const Expectation& expectation() const { return expectation_; }
  std::optional<double> last_samples_per_s() const { return last_samples_per_s_; }

 private:
  Expectation expectation_;
  double window_s_;
  std::optional<Verdict> side_;
  double outside_since_s_ = 0;
  int outside_readings_ = 0;
  bool fired_ = false;
  std::optional<double> last_samples_per_s_;
};

// The finding for readings outside the interval (exposed for tests of its wording).
diagnose::Finding expectation_finding(const Expectation& e, const Throughput& reading, double samples_per_s,
                                      Verdict side, std::optional<double> utilization_percent);

}  // namespace gpusage::run
