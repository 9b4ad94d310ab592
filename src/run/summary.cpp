#include "run/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/common/i18n.hpp"
#include "core/common/json.hpp"
#include "core/common/stats.hpp"
#include "core/common/text.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/doctor.hpp"
#include "monitor/views.hpp"
#include "report/table.hpp"

namespace gpusage::run {

GpuSelection select_run_gpus(const device::Sample& sample, const std::set<unsigned>& tree) {
  GpuSelection selection{sample, false};
  std::vector<device::GpuSample> used;
  for (const auto& gpu : sample.gpus) {
    const bool runs_here =
        std::any_of(gpu.processes.begin(), gpu.processes.end(), [&](const auto& p) { return tree.count(p.pid) > 0; });
    selection.matched = selection.matched || runs_here;
    // A GPU whose driver reported an XID stays in: the error may be why the run's process is no longer
    // listed on it (a GPU off the bus, XID 79, lists nothing), and an XID on a peer (NVLink's 74) reaches a
    // multi-GPU run too.
    if (runs_here || !gpu.xid_events.empty()) used.push_back(gpu);
  }
  if (selection.matched) selection.sample.gpus = std::move(used);
  return selection;
}

std::vector<GpuUsage> summarize_gpus(const std::vector<RecordedSample>& samples) {
  struct Series {
    GpuUsage usage;
    std::vector<double> utilization;
    std::vector<std::pair<double, double>> power;  // (time, watts)
    double first_s = 0, last_s = 0;
    std::size_t counter_readings = 0;
    std::uint64_t counter_first_mj = 0, counter_last_mj = 0;
  };
  std::map<unsigned, Series> by_index;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i].sample;
    const double next_s = i + 1 < samples.size() ? samples[i + 1].sample.unix_time_s : s.unix_time_s;
    for (const auto& gpu : s.gpus) {
      auto [it, fresh] = by_index.try_emplace(gpu.index);
      Series& series = it->second;
      GpuUsage& u = series.usage;
      if (fresh) {
        u.index = gpu.index;
        series.first_s = s.unix_time_s;
      }
      u.name = gpu.name;
      u.uuid = gpu.uuid;
      ++u.samples;
      series.last_s = s.unix_time_s;
      if (gpu.utilization_gpu_percent) series.utilization.push_back(*gpu.utilization_gpu_percent);
      if (gpu.memory_used_bytes)
        u.memory_peak_bytes = std::max(u.memory_peak_bytes.value_or(0), *gpu.memory_used_bytes);
      if (gpu.memory_total_bytes) u.memory_total_bytes = gpu.memory_total_bytes;
      if (gpu.power_w) series.power.emplace_back(s.unix_time_s, *gpu.power_w);
      if (gpu.energy_counter_mj) {
        if (series.counter_readings++ == 0) series.counter_first_mj = *gpu.energy_counter_mj;
        series.counter_last_mj = *gpu.energy_counter_mj;
      }
      for (const auto& alert : samples[i].active)
        if (alert.gpu == gpu.index && alert.kind == monitor::AlertKind::input_bottleneck)
          u.input_bound_s += next_s - s.unix_time_s;
    }
  }
  std::vector<GpuUsage> out;
  for (auto& [index, series] : by_index) {
    GpuUsage& u = series.usage;
    u.sampled_span_s = series.last_s - series.first_s;
    if (!series.utilization.empty()) {
      u.utilization_median_percent = stats::median(series.utilization);
      u.utilization_p10_percent = stats::quantile(series.utilization, 0.1);
    }
    if (!series.power.empty()) {
      double sum = 0;
      for (const auto& [t, w] : series.power) sum += w;
      u.power_mean_w = sum / static_cast<double>(series.power.size());
      double energy = 0;
      for (std::size_t i = 1; i < series.power.size(); ++i)
        energy += 0.5 * (series.power[i - 1].second + series.power[i].second) *
                  (series.power[i].first - series.power[i - 1].first);
      u.energy_j = energy;
      u.energy_method = "power-integral";
    }
    // NVML's counter, when every sample read it (and it did not go back: a driver reload resets it), is the
    // energy the board measured, between the samples too; the integral only sees the samples.
    if (series.counter_readings == u.samples && u.samples >= 2 && series.counter_last_mj >= series.counter_first_mj) {
      u.energy_j = static_cast<double>(series.counter_last_mj - series.counter_first_mj) / 1000.0;
      u.energy_method = "nvml-counter";
    }
    out.push_back(std::move(u));
  }
  return out;
}

HostUsage summarize_host(const std::vector<RecordedSample>& samples) {
  HostUsage host;
  std::vector<double> cpu;
  for (const auto& r : samples) {
    const auto& h = r.sample.host;
    if (h.cpu_percent) cpu.push_back(*h.cpu_percent);
    if (h.memory_used_bytes)
      host.memory_peak_bytes = std::max(host.memory_peak_bytes.value_or(0), *h.memory_used_bytes);
    if (h.memory_total_bytes) host.memory_total_bytes = h.memory_total_bytes;
  }
  if (!cpu.empty()) host.cpu_median_percent = stats::median(cpu);
  return host;
}

std::vector<ThroughputSummary> summarize_throughput(const std::vector<TimedThroughput>& readings) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;  // (unit, source) -> values in order
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : readings) {
    auto key = std::make_pair(r.reading.unit, r.reading.source);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(r.reading.per_second);
  }
  std::vector<ThroughputSummary> out;
  for (const auto& key : order) {
    const auto& values = groups[key];
    out.push_back({key.first, key.second, values.size(), stats::median(values), values.back()});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.readings > b.readings; });
  return out;
}

ExpectationSummary compare(const Expectation& expected, const std::vector<ThroughputSummary>& throughput,
                           const std::vector<GpuUsage>& gpus) {
  std::optional<double> memory_peak, utilization;
  std::vector<double> medians;
  for (const auto& g : gpus) {
    if (g.memory_peak_bytes) memory_peak = std::max(memory_peak.value_or(0), static_cast<double>(*g.memory_peak_bytes));
    if (g.utilization_median_percent) medians.push_back(*g.utilization_median_percent);
  }
  if (!medians.empty()) utilization = stats::median(medians);
  return {expected, compare(expected, throughput, memory_peak, utilization)};
}

namespace {

std::optional<double> fraction(const GpuUsage& u) {
  if (!u.memory_peak_bytes || !u.memory_total_bytes || *u.memory_total_bytes == 0) return std::nullopt;
  return static_cast<double>(*u.memory_peak_bytes) / static_cast<double>(*u.memory_total_bytes);
}

std::optional<double> input_bound_fraction(const GpuUsage& u) {
  if (u.sampled_span_s <= 0) return std::nullopt;
  return u.input_bound_s / u.sampled_span_s;
}

std::string exit_text(const RunSummary& s) {
  if (s.signal) return i18n::trf("killed by signal {} (exit status {})", *s.signal, s.exit_code);
  return i18n::trf("exit status {}", s.exit_code);
}

}  // namespace

nlohmann::json to_json(const RunSummary& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& u : s.gpus)
    gpus.push_back({{"index", u.index},
                    {"name", u.name},
                    {"uuid", u.uuid},
                    {"samples", u.samples},
                    {"utilization_median_percent", json_util::optional(u.utilization_median_percent)},
                    {"utilization_p10_percent", json_util::optional(u.utilization_p10_percent)},
                    {"memory_peak_bytes", json_util::optional(u.memory_peak_bytes)},
                    {"memory_total_bytes", json_util::optional(u.memory_total_bytes)},
                    {"memory_peak_fraction", json_util::optional(fraction(u))},
                    {"power_mean_w", json_util::optional(u.power_mean_w)},
                    {"energy_j", json_util::optional(u.energy_j)},
                    {"energy_method", u.energy_j ? nlohmann::json(u.energy_method) : nlohmann::json(nullptr)},
                    {"input_bound_s", u.input_bound_s},
                    {"input_bound_fraction", json_util::optional(input_bound_fraction(u))}});
  nlohmann::json throughput = nlohmann::json::array();
  for (const auto& t : s.throughput)
    throughput.push_back({{"unit", t.label_unit()},
                          {"source", t.source},
                          {"readings", t.readings},
                          {"median_per_s", t.median_per_s},
                          {"last_per_s", t.last_per_s}});
  nlohmann::json alerts = nlohmann::json::array();
  for (const auto& a : s.alerts) alerts.push_back(monitor::to_json(a));
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : s.findings) findings.push_back(diagnose::to_json(f));
  return {{"command", s.command},
          {"log_dir", s.log_dir},
          {"started_utc", wallclock::iso_utc(s.started_unix_s)},
          {"wall_s", s.wall_s},
          {"exit", {{"code", s.exit_code}, {"signal", json_util::optional(s.signal)}}},
          {"stopped_by", json_util::optional(s.stopped_by)},
          {"gpu_available", s.gpu_available},
          {"gpu_message", s.gpu_message},
          {"gpus_of_run", s.gpus_matched ? "process" : "all"},
          {"gpus", gpus},
          {"host",
           {{"cpu_median_percent", json_util::optional(s.host.cpu_median_percent)},
            {"memory_peak_bytes", json_util::optional(s.host.memory_peak_bytes)},
            {"memory_total_bytes", json_util::optional(s.host.memory_total_bytes)}}},
          {"throughput", throughput},
          {"alerts", alerts},
          {"findings", findings},
          {"expectation", s.expectation ? expectation_json(*s.expectation) : nlohmann::json(nullptr)},
          {"efficiency", s.expectation ? efficiency_json(*s.expectation) : nlohmann::json(nullptr)},
          {"time_shares", s.time_shares ? to_json(*s.time_shares) : nlohmann::json(nullptr)}};
}

std::string render_text(const RunSummary& s) {
  using i18n::tr;
  using i18n::trf;
  using units::format_bytes;
  std::string out = trf("gpusage: run ended after {}: {}\n", report::format_duration(s.wall_s), exit_text(s));
  if (!s.gpu_available) out += trf("gpusage: no GPU data: {}; host side only\n", s.gpu_message);
  for (const auto& u : s.gpus) {
    std::string line = trf("gpusage: GPU {} {}:", u.index, u.name);
    if (u.utilization_median_percent)
      line +=
          trf(" utilization median {:.0f}% (p10 {:.0f}%)", *u.utilization_median_percent, *u.utilization_p10_percent);
    if (u.memory_peak_bytes) {
      line += trf(", peak memory {}", format_bytes(static_cast<double>(*u.memory_peak_bytes)));
      if (auto f = fraction(u))
        line += trf(" of {} ({:.0f}%)", format_bytes(static_cast<double>(*u.memory_total_bytes)), *f * 100);
    }
    if (u.power_mean_w) line += trf(", power {:.0f} W mean", *u.power_mean_w);
    if (u.energy_j) line += trf(", energy {:.1f} kJ ({:.2f} Wh)", *u.energy_j / 1000, *u.energy_j / 3600);
    if (auto f = input_bound_fraction(u)) line += trf(", input-bound {:.0f}% of the time", *f * 100);
    out += line + "\n";
  }
  if (s.host.cpu_median_percent || s.host.memory_peak_bytes) {
    std::string line = tr("gpusage: host:");
    if (s.host.cpu_median_percent) line += trf(" CPU median {:.0f}%", *s.host.cpu_median_percent);
    if (s.host.memory_peak_bytes)
      line += trf("{} memory peak {}", s.host.cpu_median_percent ? tr(",") : "",
                  format_bytes(static_cast<double>(*s.host.memory_peak_bytes)));
    out += line + "\n";
  }
  for (const auto& t : s.throughput)
    out += trf("gpusage: throughput {:.3g} {} median, last {:.3g} ({}, {} readings)\n", t.median_per_s, t.label_unit(),
               t.last_per_s, t.source, t.readings);
  if (s.expectation) out += render_expectation(*s.expectation);
  if (s.time_shares) out += render_time_bar(*s.time_shares);
  for (const auto& a : s.alerts) out += trf("gpusage: alert: {}\n", a.message);
  for (const auto& f : s.findings) {
    out += trf("gpusage: {} [{}]: {}\n", diagnose::severity_label(f.severity), f.id, f.title);
    for (const auto& line : text::split(f.evidence, '\n'))
      if (!line.empty()) out += trf("gpusage:   seen: {}\n", line);
    if (!f.fix.empty()) out += trf("gpusage:   fix: {}\n", f.fix);
  }
  out += trf("gpusage: logs in {}: train.log, gpu.jsonl, summary.json, report.html\n", s.log_dir);
  return out;
}

}  // namespace gpusage::run
