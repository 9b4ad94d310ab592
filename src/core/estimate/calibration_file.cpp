#include "core/estimate/calibration_file.hpp"

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/common/stats.hpp"
#include "core/estimate/bench_file.hpp"
#include "core/estimate/compare.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

void apply_bench_results(Calibration& calibration, const std::string& json_text, const std::string& origin,
                         const catalog::Catalog& catalog) {
  const BenchFile file = parse_bench_file(json_text, origin, "--calibration");
  if (file.device != "cuda") {
    throw InputError(fmt::format("--calibration '{}': measured on '{}' ({}), not an NVIDIA GPU: nothing to calibrate",
                                 origin, file.device_name, file.device));
  }
  const catalog::Gpu& gpu = resolve_device_name(file.device_name, catalog);
  const CompletedGpu completed = complete_tensor_rates(gpu, catalog);

  workload::WorkloadOptions options;
  if (file.resolution) options.resolution = *file.resolution;
  if (file.seq_len) options.seq_len = *file.seq_len;
  const workload::Workload w = workload::build(file.model, options);
  auto precision = catalog::parse_precision(file.precision);
  if (!precision) throw InputError(fmt::format("--calibration '{}': unknown precision '{}'", origin, file.precision));

  std::vector<double> ratios;
  for (const BenchRun& run : file.runs) {
    if (!run.ok || !run.throughput) continue;
    TrainingConfig config;
    config.batch_per_gpu = run.batch;
    config.precision = *precision;
    config.optimizer = w.domain == workload::Domain::vision ? Optimizer::momentum : Optimizer::adamw;
    if (auto opt = parse_optimizer(file.optimizer)) config.optimizer = *opt;
    config.optimizer_impl = kLibTorchOptimizerImpl;
    const double predicted_step = estimate_step_time(w, config, completed.gpu, nullptr).step_s;
    const double measured_step = config.batch_per_gpu / *run.throughput;
    ratios.push_back(measured_step / predicted_step);
  }
  if (ratios.empty()) {
    throw InputError(fmt::format("--calibration '{}': no successful runs with a throughput", origin));
  }
  const std::size_t n = ratios.size();
  const double median = stats::median(ratios);
  calibration.step_time_scale[gpu.id] = median;
  calibration.notes.push_back(
      fmt::format("{}: step time x{:.3f} from {} measured runs of {} ({})", gpu.id, median, n, w.id, origin));
}

}  // namespace gpusage::estimate
