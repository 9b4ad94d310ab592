#include "core/estimate/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/common/error.hpp"
#include "core/common/stats.hpp"
#include "core/common/text.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/plan.hpp"

namespace gpusage::estimate {

namespace {


std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

ErrorSummary summarize(const std::vector<double>& abs_errors) {
  ErrorSummary s;
  s.count = static_cast<int>(abs_errors.size());
  if (abs_errors.empty()) return s;
  s.median_abs_error = stats::quantile(abs_errors, 0.5);
  s.p90_abs_error = stats::quantile(abs_errors, 0.9);
  return s;
}

struct Prepared {
  workload::Workload workload;
  TrainingConfig config;
  catalog::Gpu gpu;
};

// Builds what a row needs for a prediction, or says why it cannot be predicted.
std::optional<Prepared> prepare(const Measurement& m, const catalog::Catalog& catalog, std::string& skipped) {
  try {
    workload::WorkloadOptions options;
    options.resolution = m.resolution;
    options.seq_len = m.seq_len;
    options.flash_attention = m.flash_attention;
    Prepared p{workload::build(m.model, options), {}, complete_tensor_rates(catalog.resolve(m.gpu), catalog).gpu};
    auto precision = catalog::parse_precision(m.precision);
    if (!precision) throw InputError(fmt::format("unknown precision '{}'", m.precision));
    p.config.precision = *precision;
    p.config.batch_per_gpu = m.batch_per_gpu;
    p.config.optimizer = p.workload.domain == workload::Domain::vision ? Optimizer::momentum : Optimizer::adamw;
    p.config.gpus_per_node = std::min(m.num_gpus, 8);
    p.config.nodes = std::max(1, m.num_gpus / 8);
    p.config.parallel = m.fsdp ? Parallel::fsdp : Parallel::ddp;
    return p;
  } catch (const InputError& e) {
    skipped = e.what();
    return std::nullopt;
  }
}

double predict_metric(const Prepared& p, Metric metric, const Calibration& calibration) {
  if (metric == Metric::peak_memory) {
    return estimate_memory(p.workload, p.config, p.gpu, &calibration).total_bytes();
  }
  return p.config.batch_per_gpu / estimate_step_time(p.workload, p.config, p.gpu, &calibration).step_s;
}

}  // namespace

std::vector<Measurement> parse_measurements(const std::string& csv_text, const std::string& origin) {
  std::vector<Measurement> out;
  std::map<std::string, std::size_t> column;
  int line_number = 0;
  std::size_t start = 0;
  while (start < csv_text.size()) {
    std::size_t end = csv_text.find('\n', start);
    if (end == std::string::npos) end = csv_text.size();
    std::string line = csv_text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (text::trim(line).empty() || line[0] == '#') continue;
    auto fields = text::csv_fields(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) column[text::trim(fields[i])] = i;
      for (const char* required : {"model", "gpu", "precision", "batch_per_gpu", "metric", "value"}) {
        if (!column.count(required)) {
          throw InputError(fmt::format("{}:{}: header lacks the column '{}' (needed: model, gpu, precision, "
                                       "batch_per_gpu, metric, value)",
                                       origin, line_number, required));
        }
      }
      continue;
    }
    auto get = [&](const char* name) -> std::string {
      auto it = column.find(name);
      return it != column.end() && it->second < fields.size() ? text::trim(fields[it->second]) : "";
    };
    auto number = [&](const char* name, bool required) -> std::optional<double> {
      std::string s = get(name);
      if (s.empty()) {
        if (required) throw InputError(fmt::format("{}:{}: '{}' is empty", origin, line_number, name));
        return std::nullopt;
      }
      char* e = nullptr;
      double v = std::strtod(s.c_str(), &e);
      if (*e != '\0' || !(v > 0)) {
        throw InputError(fmt::format("{}:{}: '{}' = '{}' is not a positive number", origin, line_number, name, s));
      }
      return v;
    };
    Measurement m;
    m.line = line_number;
    m.model = get("model");
    m.gpu = get("gpu");
    m.precision = get("precision");
    m.batch_per_gpu = static_cast<int>(*number("batch_per_gpu", true));
    m.num_gpus = static_cast<int>(number("num_gpus", false).value_or(1));
    if (auto r = number("resolution", false)) m.resolution = static_cast<int>(*r);
    if (auto s = number("seq_len", false)) m.seq_len = static_cast<int>(*s);
    const std::string metric = get("metric");
    if (metric == "train_throughput") {
      m.metric = Metric::train_throughput;
    } else if (metric == "peak_memory") {
      m.metric = Metric::peak_memory;
    } else {
      throw InputError(fmt::format("{}:{}: metric '{}' is not train_throughput or peak_memory", origin, line_number,
                                   metric));
    }
    m.value = *number("value", true);
    m.source = get("source");
    const std::string attention = get("attention"), parallel = get("parallel");
    if (!attention.empty() && attention != "flash" && attention != "eager") {
      throw InputError(fmt::format("{}:{}: attention '{}' is not flash or eager", origin, line_number, attention));
    }
    if (!parallel.empty() && parallel != "ddp" && parallel != "fsdp") {
      throw InputError(fmt::format("{}:{}: parallel '{}' is not ddp or fsdp", origin, line_number, parallel));
    }
    m.flash_attention = attention != "eager";
    m.fsdp = parallel == "fsdp";
    m.holdout = fnv1a(fmt::format("{},{},{},{},{},{}", m.model, m.gpu, m.precision, m.batch_per_gpu,
                                  m.seq_len.value_or(0), m.source)) % 3 == 0;
    out.push_back(std::move(m));
  }
  if (column.empty()) throw InputError(fmt::format("{}: empty file (expected a CSV header)", origin));
  return out;
}

ValidationReport validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                          const Calibration& calibration) {
  ValidationReport report;
  std::vector<double> all, cal, hold, hold_throughput;
  for (const Measurement& m : measurements) {
    ValidationRow row{m, std::nullopt, std::nullopt, {}};
    if (auto p = prepare(m, catalog, row.skipped)) {
      row.predicted = predict_metric(*p, m.metric, calibration);
      row.error = (*row.predicted - m.value) / m.value;
      const double e = std::fabs(*row.error);
      all.push_back(e);
      (m.holdout ? hold : cal).push_back(e);
      if (m.holdout && m.metric == Metric::train_throughput) hold_throughput.push_back(e);
    }
    report.rows.push_back(std::move(row));
  }
  report.all = summarize(all);
  report.calibration_split = summarize(cal);
  report.holdout_split = summarize(hold);
  report.throughput_holdout = summarize(hold_throughput);
  return report;
}

ModelConstants fit_constants(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                             const ModelConstants& start) {
  std::vector<std::pair<Prepared, double>> rows;
  for (const Measurement& m : measurements) {
    std::string skipped;
    if (m.holdout || m.metric != Metric::train_throughput) continue;
    if (auto p = prepare(m, catalog, skipped)) rows.emplace_back(std::move(*p), m.value);
  }
  if (rows.empty()) throw InputError("no calibration rows to fit (train_throughput rows outside the holdout split)");
  Calibration calibration;
  calibration.constants = start;
  auto loss = [&] {
    std::vector<double> errors;
    for (const auto& [p, measured] : rows) {
      errors.push_back(std::fabs(std::log(predict_metric(p, Metric::train_throughput, calibration) / measured)));
    }
    std::sort(errors.begin(), errors.end());
    // Median plus a little of the mean, so that the fit does not ignore the tail entirely.
    double mean = 0;
    for (double e : errors) mean += e;
    return errors[errors.size() / 2] + 0.25 * mean / errors.size();
  };
  ModelConstants& k = calibration.constants;
  struct Knob {
    double* value;
    double lo, hi;
  };
  std::vector<Knob> knobs = {
      {&k.conv_tensor_efficiency, 0.05, 0.95},  {&k.matmul_tensor_efficiency, 0.05, 0.95},
      {&k.conv_fp32_efficiency, 0.05, 0.95},    {&k.matmul_fp32_efficiency, 0.05, 0.95},
      {&k.attention_relative_efficiency, 0.2, 1.0}, {&k.memory_efficiency, 0.2, 0.95},
      {&k.kernel_fixed_s, 0.5e-6, 40e-6},       {&k.host_dispatch_s, 1e-6, 60e-6},
      {&k.depthwise_conv_relative_efficiency, 0.05, 1.0},
  };
  // One compute factor per architecture that has calibration rows.
  for (const auto& [p, measured] : rows) k.architecture_compute_factor.try_emplace(p.gpu.compute_capability, 1.0);
  for (auto& [architecture, factor] : k.architecture_compute_factor) knobs.push_back({&factor, 0.2, 3.0});
  double best = loss();
  for (int round = 0; round < 6; ++round) {
    const double step = round < 3 ? 1.25 : 1.08;
    for (Knob& knob : knobs) {
      for (double factor : {step, 1 / step}) {
        while (true) {
          const double old = *knob.value;
          const double next = std::clamp(old * factor, knob.lo, knob.hi);
          if (next == old) break;
          *knob.value = next;
          const double l = loss();
          if (l < best - 1e-9) {
            best = l;
          } else {
            *knob.value = old;
            break;
          }
        }
      }
    }
  }
  return k;
}

}  // namespace gpusage::estimate
