// The page's monitor section: a monitor log over time with its alerts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/common/i18n.hpp"
#include "core/common/time.hpp"
#include "report/sections.hpp"
#include "report/time_axis.hpp"
#include "report/vega.hpp"

namespace gpusage::report {

using namespace vega;  // NOLINT: the helpers are this module's vocabulary

namespace {

std::string gpu_label(const device::GpuSample& gpu) {
  return gpu.name.empty() ? fmt::format("GPU {}", gpu.index) : fmt::format("GPU {}: {}", gpu.index, gpu.name);
}

}  // namespace

Section monitor_section(const MonitorLog& log, const std::vector<AlertMark>& alerts, const std::string& alerts_note) {
  // Per GPU, the samples to plot (every k-th when the log is long).
  std::map<unsigned, std::size_t> count;
  for (const auto& sample : log.samples) {
    for (const auto& gpu : sample.gpus) ++count[gpu.index];
  }
  std::size_t most = 0;
  for (const auto& [index, n] : count) most = std::max(most, n);
  const std::size_t stride = most > kMaxPointsPerGpu ? (most + kMaxPointsPerGpu - 1) / kMaxPointsPerGpu : 1;

  struct Series {
    const char* key;
    const char* title;
    const char* axis;
  };
  // Titles and axes marked for translation (i18n::N_), translated where the chart takes them.
  static const Series kSeries[] = {{"utilization", i18n::N_("GPU utilization"), i18n::N_("Utilization (%)")},
                                   {"memory", i18n::N_("Memory used"), i18n::N_("Memory used (GiB)")},
                                   {"power", i18n::N_("Power draw"), i18n::N_("Power (W)")},
                                   {"temperature", i18n::N_("Temperature"), i18n::N_("Temperature (°C)")}};
  Json values = Json::array();
  std::vector<std::string> names;
  std::map<unsigned, std::string> label_of;
  std::map<unsigned, std::size_t> seen;
  const double start_s = log.samples.front().unix_time_s;
  for (const auto& sample : log.samples) {
    const std::string time = wallclock::iso_utc(sample.unix_time_s);
    const double elapsed_s = sample.unix_time_s - start_s;
    for (const auto& gpu : sample.gpus) {
      const std::string label = gpu_label(gpu);
      if (!label_of.count(gpu.index)) {
        label_of[gpu.index] = label;
        names.push_back(label);
      }
      if (seen[gpu.index]++ % stride != 0) continue;
      auto add = [&](const char* metric, std::optional<double> value) {
        if (value) {
          values.push_back(
              {{"time", time}, {"elapsed_s", elapsed_s}, {"gpu", label}, {"metric", metric}, {"value", *value}});
        }
      };
      add("utilization",
          gpu.utilization_gpu_percent ? std::optional<double>(*gpu.utilization_gpu_percent) : std::nullopt);
      add("memory", gpu.memory_used_bytes ? std::optional<double>(*gpu.memory_used_bytes / kGiB) : std::nullopt);
      add("power", gpu.power_w);
      add("temperature", gpu.temperature_c ? std::optional<double>(*gpu.temperature_c) : std::nullopt);
    }
  }
  Json marks = Json::array();
  std::vector<std::string> kinds;
  Table table;
  table.columns = {{"raised", "UTC", Align::left},
                   {"GPU", "", Align::left},
                   {"alert", "", Align::left},
                   {"severity", "", Align::left},
                   {"message", "", Align::left}};
  for (const auto& a : alerts) {
    const std::string gpu = label_of.count(a.gpu) ? label_of[a.gpu] : fmt::format("GPU {}", a.gpu);
    marks.push_back({{"time", wallclock::iso_utc(a.unix_time_s)},
                     {"elapsed_s", a.unix_time_s - start_s},
                     {"gpu", gpu},
                     {"kind", a.kind},
                     {"severity", a.severity},
                     {"message", a.message}});
    if (std::find(kinds.begin(), kinds.end(), a.kind) == kinds.end()) kinds.push_back(a.kind);
    table.add_row({wallclock::iso_utc(a.unix_time_s), gpu, a.kind, a.severity, a.message});
  }
  const double span_s = log.samples.back().unix_time_s - start_s;
  // Seconds since the first sample, ticked at a round step (time_axis.hpp); the tooltips keep the UTC time.
  const Json time_axis = time_axis_encoding("elapsed_s", span_s, wallclock::iso_utc(start_s, false));
  Json panels = Json::array();
  for (const Series& series : kSeries) {
    Json line = {{"transform", Json::array({{{"filter", {{"field", "metric"}, {"equal", series.key}}}}})},
                 {"mark", {{"type", "line"}, {"interpolate", "step-after"}}},
                 {"encoding",
                  {{"x", time_axis},
                   {"y", field("value", "quantitative", i18n::tr(series.axis))},
                   {"color", gpu_color(names)},
                   {"tooltip", Json::array({{{"field", "time"},
                                             {"type", "temporal"},
                                             {"title", i18n::tr("Time (UTC)")},
                                             {"format", "%Y-%m-%d %H:%M:%S.%L"},
                                             {"formatType", "utc"}},
                                            field("gpu", "nominal", "GPU"),
                                            field("value", "quantitative", i18n::tr(series.axis), ",.1f")})}}}};
    Json layer = Json::array({line});
    if (!marks.empty()) {
      layer.push_back(
          {{"data", {{"values", marks}}},
           {"mark", {{"type", "rule"}, {"color", "#d62728"}, {"strokeWidth", 2}}},
           {"encoding",
            {{"x", time_axis},
             {"strokeDash",
              {{"field", "kind"}, {"type", "nominal"}, {"title", i18n::tr("Alert raised")}, {"sort", kinds}}},
             {"tooltip", Json::array({{{"field", "time"},
                                       {"type", "temporal"},
                                       {"title", i18n::tr("Raised (UTC)")},
                                       {"format", "%Y-%m-%d %H:%M:%S.%L"},
                                       {"formatType", "utc"}},
                                      field("gpu", "nominal", "GPU"),
                                      field("kind", "nominal", i18n::tr("Alert")),
                                      field("severity", "nominal", i18n::tr("Severity")),
                                      field("message", "nominal", i18n::tr("Message"))})}}}});
    }
    panels.push_back({{"title", i18n::tr(series.title)}, {"width", 900}, {"height", 140}, {"layer", layer}});
  }
  Json s = spec(i18n::trf("GPU activity over time: {}", log.origin),
                i18n::trf("{} samples over {}; red lines: alerts, at the moment each was raised.", log.samples.size(),
                          format_duration(span_s)));
  s["data"] = {{"values", values}};  // every panel's lines; the alert rules bring their own
  s["vconcat"] = panels;
  s["spacing"] = 18;
  s["resolve"] = {{"scale", {{"x", "shared"}}}};

  Section section;
  section.id = "monitor";
  section.title = i18n::tr("What the GPUs did: the monitor log");
  section.paragraphs.push_back(
      i18n::trf("{} ({}, {} samples, {} GPUs): utilization, memory, power and temperature as gpusage monitor "
                "recorded them.",
                log.origin, log.json_lines ? "JSON Lines" : "CSV", log.samples.size(), names.size()));
  section.items.push_back(Chart{"monitor-timeline", i18n::tr("GPU activity over time"), s});
  if (!alerts.empty()) section.items.push_back(PageTable{"monitor-alerts", i18n::tr("Alerts"), std::move(table)});
  section.notes.push_back(alerts_note);
  if (alerts.empty()) section.notes.push_back(i18n::tr("No alert was raised in this log."));
  if (stride > 1) {
    section.notes.push_back(
        i18n::trf("Long log: every {}th sample is plotted ({} per GPU at most).", stride, kMaxPointsPerGpu));
  }
  return section;
}

}  // namespace gpusage::report
