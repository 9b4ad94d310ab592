#include "core/estimate/bench_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/json.hpp"

namespace gpusage::estimate {

namespace {

using json_util::optional_number;
using json_util::string_or;

BenchRun read_run(const nlohmann::json& run, int batch) {
  BenchRun r;
  r.batch = batch;
  r.accumulate = optional_number<int>(run, "accumulate").value_or(1);
  r.ok = string_or(run, "status", "ok") == "ok";
  r.failure = string_or(run, "failure");
  r.reason = string_or(run, "reason");
  r.throughput = optional_number<double>(run, "throughput");
  r.peak_memory_bytes = optional_number<double>(run, "peak_memory_bytes");
  if (auto it = run.find("step_time_s"); it != run.end() && it->is_object()) {
    r.step_time =
        StepTimeSummary{it->value("p50", 0.0), it->value("p90", 0.0), it->value("p99", 0.0), it->value("cv", 0.0)};
  }
  r.data_wait_fraction = optional_number<double>(run, "data_wait_fraction");
  if (auto it = run.find("loader"); it != run.end() && it->is_object()) {
    r.loader = LoaderSummary{
        optional_number<int>(*it, "workers").value_or(0), optional_number<double>(*it, "images_per_s"),
        optional_number<double>(*it, "per_worker_images_per_s"), optional_number<double>(*it, "model_images_per_s"),
        optional_number<double>(*it, "workers_needed")};
  }
  return r;
}

}  // namespace

BenchFile parse_bench_file(const std::string& json_text, const std::string& origin, std::string_view option) {
  const std::string where = fmt::format("{} '{}'", option, origin);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond a double (1e999)
    throw InputError(fmt::format("{}: not valid JSON ({})", where, e.what()));
  }
  auto require = [&](const nlohmann::json& j, const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
      throw InputError(fmt::format("{}: missing '{}' (expected gpusage bench --format json output)", where, key));
    }
    return j[key];
  };
  try {
    BenchFile file;
    file.origin = origin;
    const auto& environment = require(doc, "environment");
    file.device = environment.value("device", std::string("cuda"));
    file.device_name = require(environment, "device_name").get<std::string>();
    file.libtorch_version = string_or(environment, "libtorch_version");
    file.torch_threads = optional_number<int>(environment, "torch_threads");
    file.model = require(doc, "model").get<std::string>();
    file.precision = require(doc, "precision").get<std::string>();
    file.optimizer = string_or(doc, "optimizer");
    file.resolution = optional_number<int>(doc, "resolution");
    file.seq_len = optional_number<int>(doc, "seq_len");
    if (auto it = doc.find("config"); it != doc.end() && it->is_object()) {
      file.model_params = optional_number<double>(*it, "model_params");
      file.steps = optional_number<int>(*it, "steps");
      file.warmup = optional_number<int>(*it, "warmup");
      file.data_mode = string_or(*it, "data_mode");
      file.data_images = optional_number<double>(*it, "data_images");
      file.data_classes = optional_number<double>(*it, "data_classes");
    }
    for (const auto& run : require(doc, "runs")) {
      const auto& batch = require(run, "batch");
      if (!batch.is_number()) throw InputError(fmt::format("{}: 'batch' is {}, not a number", where, batch.dump()));
      BenchRun r = read_run(run, json_util::number_as<int>(batch, "batch"));
      // A run trains at least one sample per step and measures a positive rate: anything else would turn
      // --calibration's measured/predicted ratio negative or infinite.
      if (r.batch < 1) throw InputError(fmt::format("{}: 'batch' is {}: a run's batch is at least 1", where, r.batch));
      if (r.throughput && !(*r.throughput > 0 && std::isfinite(*r.throughput))) {
        throw InputError(
            fmt::format("{}: 'throughput' is {}: a measured throughput is a positive number", where, *r.throughput));
      }
      file.runs.push_back(std::move(r));
    }
    if (file.runs.empty()) throw InputError(fmt::format("{}: 'runs' is empty", where));
    if (auto it = doc.find("batch_search"); it != doc.end() && it->is_object()) {
      const auto trials = it->find("trials");
      file.batch_search =
          BatchSearchSummary{optional_number<int>(*it, "max_batch").value_or(0),
                             trials != it->end() && trials->is_array() ? static_cast<int>(trials->size()) : 0};
    }
    if (auto it = doc.find("distributed"); it != doc.end() && it->is_object()) {
      DistributedSummary d;
      d.processes = optional_number<int>(*it, "processes").value_or(0);
      d.backend = string_or(*it, "backend");
      if (auto ranks = it->find("ranks"); ranks != it->end() && ranks->is_array()) {
        for (const auto& rank : *ranks) d.rank_throughputs.push_back(optional_number<double>(rank, "throughput"));
      }
      d.total_throughput = optional_number<double>(*it, "total_throughput");
      if (auto baseline = it->find("baseline"); baseline != it->end() && baseline->is_object()) {
        d.baseline_throughput = optional_number<double>(*baseline, "throughput");
      }
      d.scaling_efficiency = optional_number<double>(*it, "scaling_efficiency");
      file.distributed = std::move(d);
    }
    if (auto it = doc.find("warnings"); it != doc.end() && it->is_array()) {
      for (const auto& w : *it)
        if (w.is_string()) file.warnings.push_back(w.get<std::string>());
    }
    return file;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: unexpected value ({})", where, e.what()));
  } catch (const json_util::NumberOutOfRange& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
}

BenchFile read_bench_file(const std::string& path, std::string_view option) {
  return parse_bench_file(io::read_file(path, fmt::format("{} file", option)), path, option);
}

}  // namespace gpusage::estimate
