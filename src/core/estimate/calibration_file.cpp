#include "core/estimate/calibration_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "core/common/stats.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/plan.hpp"

namespace gpusage::estimate {

void apply_bench_results(Calibration& calibration, const std::string& json_text, const std::string& origin,
                         const catalog::Catalog& catalog) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON ({})", origin, e.what()));
  }
  auto require = [&](const nlohmann::json& j, const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
      throw InputError(fmt::format("{}: missing '{}' (expected gpusage bench --format json output)", origin, key));
    }
    return j[key];
  };
  const auto& environment = require(doc, "environment");
  const std::string device = require(environment, "device_name").get<std::string>();
  const std::string device_type = environment.value("device_type", std::string("cuda"));
  if (device_type != "cuda") {
    throw InputError(fmt::format("{}: measured on '{}' ({}), not an NVIDIA GPU: nothing to calibrate", origin,
                                 device, device_type));
  }
  const catalog::Gpu& gpu = catalog.resolve(device);
  const CompletedGpu completed = complete_tensor_rates(gpu, catalog);

  workload::WorkloadOptions options;
  if (doc.contains("resolution") && doc["resolution"].is_number_integer()) options.resolution = doc["resolution"].get<int>();
  if (doc.contains("seq_len") && doc["seq_len"].is_number_integer()) options.seq_len = doc["seq_len"].get<int>();
  const workload::Workload w = workload::build(require(doc, "model").get<std::string>(), options);
  const std::string precision_name = require(doc, "precision").get<std::string>();
  auto precision = catalog::parse_precision(precision_name);
  if (!precision) throw InputError(fmt::format("{}: unknown precision '{}'", origin, precision_name));

  std::vector<double> ratios;
  for (const auto& run : require(doc, "runs")) {
    if (run.value("status", std::string("ok")) != "ok" || !run.contains("throughput") || !run["throughput"].is_number()) {
      continue;
    }
    TrainingConfig config;
    config.batch_per_gpu = run.at("batch").get<int>();
    config.precision = *precision;
    config.optimizer = w.domain == workload::Domain::vision ? Optimizer::momentum : Optimizer::adamw;
    if (auto opt = parse_optimizer(doc.value("optimizer", std::string()))) config.optimizer = *opt;
    const double predicted_step = estimate_step_time(w, config, completed.gpu, nullptr).step_s;
    const double measured_step = config.batch_per_gpu / run["throughput"].get<double>();
    ratios.push_back(measured_step / predicted_step);
  }
  if (ratios.empty()) throw InputError(fmt::format("{}: no successful runs with a throughput", origin));
  const std::size_t n = ratios.size();
  const double median = stats::median(ratios);
  calibration.step_time_scale[gpu.id] = median;
  calibration.notes.push_back(fmt::format("{}: step time x{:.3f} from {} measured runs of {} ({})", gpu.id, median, n,
                                          w.id, origin));
}

}  // namespace gpusage::estimate
