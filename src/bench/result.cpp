#include "bench/result.hpp"

#include <algorithm>
#include <cmath>

#include "bench/model_catalog.hpp"
#include "core/common/json.hpp"
#include "core/common/stats.hpp"

namespace gpusage::bench {
namespace {

using nlohmann::json;

json distribution_json(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  const stats::Distribution d = stats::summarize(values);
  return {{"count", d.count}, {"mean", d.mean}, {"min", d.min}, {"max", d.max},
          {"p50", d.p50},     {"p90", d.p90},   {"p99", d.p99}, {"cv", d.cv}};
}

std::vector<double> numbers(const json& j, const char* key) {
  return j.contains(key) && j[key].is_array() ? j[key].get<std::vector<double>>() : std::vector<double>{};
}

template <typename T>
std::optional<T> optional_from(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::none: return "none";
    case FailureKind::out_of_memory: return "out_of_memory";
    case FailureKind::non_finite: return "non_finite";
    case FailureKind::error: return "error";
  }
  return "?";
}

std::optional<double> TrialResult::throughput() const {
  if (!ok() || timed_wall_s <= 0) return std::nullopt;
  return static_cast<double>(samples) / timed_wall_s;
}

std::optional<double> TrialResult::peak_memory_bytes() const {
  return peak_reserved_bytes ? peak_reserved_bytes : peak_rss_growth_bytes;
}

double TrialResult::data_wait_fraction() const {
  double wait = 0, total = 0;
  for (double w : data_wait_s) wait += w;
  for (double s : step_time_s) total += s;
  return total > 0 ? wait / total : 0;
}

std::optional<double> TrialResult::model_images_per_s() const {
  if (!ok()) return std::nullopt;
  double compute_s = 0;
  for (std::size_t i = 0; i < step_time_s.size(); ++i)
    compute_s += step_time_s[i] - (i < data_wait_s.size() ? data_wait_s[i] : 0.0);
  if (compute_s <= 0 || step_time_s.empty()) return std::nullopt;
  return static_cast<double>(samples) / compute_s;
}

std::optional<int> TrialResult::workers_needed() const {
  const auto model = model_images_per_s();
  if (!model || !loader || loader->per_worker_images_per_s <= 0) return std::nullopt;
  return std::max(1, static_cast<int>(std::ceil(*model / loader->per_worker_images_per_s)));
}

std::optional<double> DistributedResult::total_throughput() const {
  double total = 0;
  for (const auto& r : ranks) {
    const auto t = r.throughput();
    if (!t) return std::nullopt;
    total += *t;
  }
  return ranks.empty() ? std::nullopt : std::optional<double>(total);
}

std::optional<double> DistributedResult::scaling_efficiency() const {
  const auto total = total_throughput();
  if (!total || !baseline || !baseline->throughput()) return std::nullopt;
  return *total / (processes * *baseline->throughput());
}

json to_json(const TrialResult& r) {
  json j;
  j["batch"] = r.batch;
  j["accumulate"] = r.accumulate;
  j["status"] = r.ok() ? "ok" : "failed";
  j["failure"] = r.ok() ? json(nullptr) : json(to_string(r.failure));
  j["reason"] = r.reason.empty() ? json(nullptr) : json(r.reason);
  j["warmup_steps"] = r.warmup_steps;
  j["timed_steps"] = r.step_time_s.size();
  j["samples"] = r.samples;
  j["timed_wall_s"] = r.timed_wall_s;
  j["throughput"] = json_util::optional(r.throughput());
  j["tokens_per_s"] =
      (r.tokens_per_sample > 0 && r.throughput()) ? json(*r.throughput() * r.tokens_per_sample) : json(nullptr);
  j["tokens_per_sample"] = r.tokens_per_sample;
  j["step_time_s"] = distribution_json(r.step_time_s);
  j["data_wait_fraction"] = r.step_time_s.empty() ? json(nullptr) : json(r.data_wait_fraction());
  j["peak_memory_bytes"] = json_util::optional(r.peak_memory_bytes());
  j["peak_memory"] = {{"allocated_bytes", json_util::optional(r.peak_allocated_bytes)},
                      {"reserved_bytes", json_util::optional(r.peak_reserved_bytes)},
                      {"rss_growth_bytes", json_util::optional(r.peak_rss_growth_bytes)}};
  j["average_power_w"] = json_util::optional(r.average_power_w);
  j["energy_j_per_sample"] = json_util::optional(r.energy_j_per_sample);
  j["power_note"] = r.power_note.empty() ? json(nullptr) : json(r.power_note);
  j["grad_norm"] = distribution_json(r.grad_norm);
  j["nonfinite_steps"] = r.nonfinite_steps;
  j["first_nonfinite_step"] = json_util::optional(r.first_nonfinite_step);
  j["final_loss_scale"] = json_util::optional(r.final_loss_scale);
  if (r.loader) {
    const LoaderResult& l = *r.loader;
    j["loader"] = {{"workers", l.workers},
                   {"probe_images", l.probe_images},
                   {"images_per_s", l.images_per_s},
                   {"per_worker_images_per_s", l.per_worker_images_per_s},
                   {"model_images_per_s", json_util::optional(r.model_images_per_s())},
                   {"workers_needed", json_util::optional(r.workers_needed())},
                   {"failed_files", l.failed_files},
                   {"failed", l.failed}};
  } else {
    j["loader"] = nullptr;
  }
  j["per_step"] = {
      {"step_time_s", r.step_time_s}, {"data_wait_s", r.data_wait_s}, {"loss", r.loss}, {"grad_norm", r.grad_norm}};
  return j;
}

TrialResult trial_from_json(const json& j) {
  TrialResult r;
  r.batch = j.at("batch").get<int>();
  r.accumulate = j.value("accumulate", 1);
  const std::string failure = j.value("failure", json(nullptr)).is_null() ? "none" : j["failure"].get<std::string>();
  for (FailureKind k : {FailureKind::none, FailureKind::out_of_memory, FailureKind::non_finite, FailureKind::error})
    if (failure == to_string(k)) r.failure = k;
  r.reason = j.value("reason", json(nullptr)).is_null() ? "" : j["reason"].get<std::string>();
  r.warmup_steps = j.value("warmup_steps", 0);
  r.tokens_per_sample = j.value("tokens_per_sample", 0);
  r.samples = j.value("samples", std::int64_t{0});
  r.timed_wall_s = j.value("timed_wall_s", 0.0);
  const json& steps = j.contains("per_step") ? j["per_step"] : json::object();
  r.step_time_s = numbers(steps, "step_time_s");
  r.data_wait_s = numbers(steps, "data_wait_s");
  r.loss = numbers(steps, "loss");
  r.grad_norm = numbers(steps, "grad_norm");
  r.nonfinite_steps = j.value("nonfinite_steps", 0);
  r.first_nonfinite_step = optional_from<int>(j, "first_nonfinite_step");
  r.final_loss_scale = optional_from<double>(j, "final_loss_scale");
  if (j.contains("peak_memory")) {
    const json& m = j["peak_memory"];
    r.peak_allocated_bytes = optional_from<double>(m, "allocated_bytes");
    r.peak_reserved_bytes = optional_from<double>(m, "reserved_bytes");
    r.peak_rss_growth_bytes = optional_from<double>(m, "rss_growth_bytes");
  }
  r.average_power_w = optional_from<double>(j, "average_power_w");
  r.energy_j_per_sample = optional_from<double>(j, "energy_j_per_sample");
  r.power_note = j.value("power_note", json(nullptr)).is_null() ? "" : j["power_note"].get<std::string>();
  if (j.contains("loader") && j["loader"].is_object()) {
    const json& l = j["loader"];
    LoaderResult loader;
    loader.workers = l.value("workers", 0);
    loader.probe_images = l.value("probe_images", std::int64_t{0});
    loader.images_per_s = l.value("images_per_s", 0.0);
    loader.per_worker_images_per_s = l.value("per_worker_images_per_s", 0.0);
    loader.failed_files = l.value("failed_files", std::int64_t{0});
    loader.failed = l.value("failed", std::vector<std::string>{});
    r.loader = loader;
  }
  return r;
}

json to_json(const BenchReport& report) {
  const Environment& e = report.environment;
  const BenchOptions& o = report.options;
  json j;
  j["tool"] = "gpusage-bench";
  // Top-level model/precision/optimizer/resolution/seq_len and "runs" are what
  // estimate::apply_bench_results (gpusage plan --calibration) reads.
  j["environment"] = {{"device", e.device},
                      {"device_type", e.device},
                      {"device_name", e.device_name},
                      {"driver_version", json_util::optional(e.driver_version)},
                      {"cuda_version", json_util::optional(e.cuda_version)},
                      {"cudnn_version", json_util::optional(e.cudnn_version)},
                      {"libtorch_version", e.libtorch_version},
                      {"cpu_model", e.cpu_model},
                      {"cpu_threads", e.cpu_threads},
                      {"torch_threads", e.torch_threads},
                      {"gpusage_version", e.gpusage_version},
                      {"gpusage_commit", e.gpusage_commit},
                      {"build_type", e.build_type}};
  const bool language = model_info(o.model).language();
  j["model"] = o.model;
  j["precision"] = to_string(o.precision);
  j["optimizer"] = to_string(o.optimizer);
  j["resolution"] = language ? json(nullptr) : json_util::optional(o.resolution);
  j["seq_len"] = language ? json_util::optional(o.seq_len) : json(nullptr);
  j["config"] = {{"model_params", report.model_params},
                 {"steps", json_util::optional(o.steps)},
                 {"warmup", json_util::optional(o.warmup)},
                 {"accumulate", o.accumulate},
                 {"clip_norm", json_util::optional(o.clip_norm)},
                 {"data", o.data},
                 {"data_mode", report.data_mode},
                 {"data_images", json_util::optional(report.data_images)},
                 {"data_classes", json_util::optional(report.data_classes)},
                 {"workers", o.workers},
                 {"channels_last", report.channels_last},
                 {"cudnn_benchmark", json_util::optional(report.cudnn_benchmark)},
                 {"distributed", o.distributed},
                 {"memory_limit_bytes", json_util::optional(o.memory_limit_bytes)},
                 {"seed", o.seed},
                 {"sync_per_step", true}};
  j["command_line"] = report.command_line;
  j["runs"] = json::array();
  for (const auto& r : report.results) j["runs"].push_back(to_json(r));
  if (report.search) {
    json trials = json::array();
    for (const auto& t : report.search->trials())
      trials.push_back(
          {{"batch", t.batch}, {"fits", t.fits}, {"reason", t.reason.empty() ? json(nullptr) : json(t.reason)}});
    j["batch_search"] = {
        {"max_batch", report.search->best()}, {"reached_limit", report.search->reached_limit()}, {"trials", trials}};
  } else {
    j["batch_search"] = nullptr;
  }
  if (report.distributed) {
    const DistributedResult& d = *report.distributed;
    json ranks = json::array();
    for (std::size_t i = 0; i < d.ranks.size(); ++i) {
      json r = to_json(d.ranks[i]);
      r["rank"] = i;
      ranks.push_back(r);
    }
    j["distributed"] = {{"processes", d.processes},
                        {"backend", d.backend},
                        {"ranks", ranks},
                        {"baseline", d.baseline ? to_json(*d.baseline) : json(nullptr)},
                        {"total_throughput", json_util::optional(d.total_throughput())},
                        {"scaling_efficiency", json_util::optional(d.scaling_efficiency())}};
  } else {
    j["distributed"] = nullptr;
  }
  j["warnings"] = report.warnings;
  return j;
}

}  // namespace gpusage::bench
