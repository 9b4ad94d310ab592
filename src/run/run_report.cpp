#include "run/run_report.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/log_scan.hpp"
#include "monitor/views.hpp"
#include "report/monitor_log.hpp"
#include "report/sections.hpp"
#include "report/table.hpp"
#include "report/time_axis.hpp"
#include "run/output_lines.hpp"

namespace gpusage::run {

using Json = nlohmann::json;

std::vector<diagnose::Finding> final_findings(const std::string& log_bytes, const diagnose::RunContext& context,
                                              const std::vector<GpuUsage>& gpus) {
  std::vector<diagnose::Finding> findings = diagnose::check_log(diagnose::scan_log(clean_text(log_bytes)), context);
  for (auto& f : findings) {
    if (f.id != "log-cuda-oom") continue;
    for (const auto& g : gpus) {
      if (!g.memory_peak_bytes) continue;
      f.evidence += fmt::format(
          "{}gpusage run measured a peak of {} on GPU {} ({}){}.", f.evidence.empty() ? "" : "\n",
          diagnose::format_size(static_cast<double>(*g.memory_peak_bytes)), g.index, g.name,
          g.memory_total_bytes ? " of " + diagnose::format_size(static_cast<double>(*g.memory_total_bytes)) : "");
    }
  }
  diagnose::sort_findings(findings);
  return findings;
}

namespace {

std::string optional_text(const std::optional<double>& v, int decimals, const char* suffix = "") {
  return v ? report::format_number(*v, decimals) + suffix : "n/a";
}

// A section's table and the note that says where its figures come from.
report::Section with_table(report::Section section, report::PageTable table, std::string note) {
  section.items.push_back(std::move(table));
  section.notes.push_back(std::move(note));
  return section;
}

report::Section run_section(const RunSummary& s) {
  report::Section section;
  section.id = "run";
  section.title = "The run";
  std::string command;
  for (const auto& a : s.command) command += (command.empty() ? "" : " ") + a;
  section.paragraphs.push_back(fmt::format("{} ran for {} from {} and ended with exit status {}{}.", command,
                                           report::format_duration(s.wall_s), wallclock::iso_utc(s.started_unix_s),
                                           s.exit_code,
                                           s.signal ? fmt::format(" (killed by signal {})", *s.signal) : ""));
  if (!s.gpu_available) section.paragraphs.push_back("No GPU data: " + s.gpu_message + ". Host figures only.");
  report::Table t;
  t.columns = {
      {"GPU", "", report::Align::left}, {"samples", ""},     {"utilization median", "%"}, {"utilization p10", "%"},
      {"peak memory", "GiB"},           {"capacity", "GiB"}, {"mean power", "W"},         {"energy", "kJ"},
      {"input-bound", "% of time"}};
  for (const auto& g : s.gpus) {
    auto gib = [](const std::optional<std::uint64_t>& b) {
      return b ? std::optional<double>(units::to_gib(static_cast<double>(*b))) : std::nullopt;
    };
    t.add_row({fmt::format("{} {}", g.index, g.name), std::to_string(g.samples),
               optional_text(g.utilization_median_percent, 0), optional_text(g.utilization_p10_percent, 0),
               optional_text(gib(g.memory_peak_bytes), 1), optional_text(gib(g.memory_total_bytes), 1),
               optional_text(g.power_mean_w, 0),
               optional_text(g.energy_j ? std::optional<double>(*g.energy_j / 1000) : std::nullopt, 2),
               g.sampled_span_s > 0 ? report::format_number(100 * g.input_bound_s / g.sampled_span_s, 0) : "n/a"});
  }
  return with_table(std::move(section), {"run-gpus", "GPUs of the run, from the samples in gpu.jsonl", t},
                    "Energy: the difference of NVML's energy counter over the sampled span where the GPU has "
                    "one, else the integral of the sampled power draw. Input-bound: time "
                    "during which gpusage monitor's input-bottleneck alert was active.");
}

// GPU utilization and the program's own throughput on one time axis (two y scales): a GPU that waits shows as
// utilization dips where throughput is low.
report::Section throughput_section(const RunSummary& s, const std::string& gpu_log,
                                   const std::vector<TimedThroughput>& readings, const report::MonitorLog* log) {
  report::Section section;
  section.id = "throughput";
  section.title = "Throughput against GPU utilization";
  const std::string unit = s.throughput.front().unit;
  const std::string source = s.throughput.front().source;
  Json values = Json::array();
  for (const auto& r : readings)
    if (r.reading.unit == unit && r.reading.source == source)
      values.push_back({{"time", wallclock::iso_utc(r.unix_time_s)},
                        {"elapsed_s", r.unix_time_s - s.started_unix_s},
                        {"series", unit + "/s (" + source + ")"},
                        {"kind", "throughput"},
                        {"value", r.reading.per_second}});
  if (log)
    for (const auto& sample : log->samples)
      for (const auto& gpu : sample.gpus)
        if (gpu.utilization_gpu_percent)
          values.push_back({{"time", wallclock::iso_utc(sample.unix_time_s)},
                            {"elapsed_s", sample.unix_time_s - s.started_unix_s},
                            {"series", fmt::format("GPU {} utilization (%)", gpu.index)},
                            {"kind", "utilization"},
                            {"value", *gpu.utilization_gpu_percent}});
  // Seconds since the run started, ticked at a round step (report/time_axis.hpp).
  const Json x = report::time_axis_encoding("elapsed_s", s.wall_s, wallclock::iso_utc(s.started_unix_s, false));
  auto layer = [&](const char* kind, const std::string& title) {
    return Json{{"transform", Json::array({{{"filter", {{"field", "kind"}, {"equal", kind}}}}})},
                {"mark", {{"type", "line"}, {"point", true}}},
                {"encoding",
                 {{"x", x},
                  {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", title}}},
                  {"color", {{"field", "series"}, {"type", "nominal"}, {"title", ""}}}}}};
  };
  Json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"title", "Throughput (from the program's output) and GPU utilization (NVML)"},
               {"width", "container"},
               {"height", 260},
               {"data", {{"values", values}}},
               {"layer", Json::array({layer("throughput", unit + "/s"), layer("utilization", "GPU utilization (%)")})},
               {"resolve", {{"scale", {{"y", "independent"}}}}}};
  section.items.push_back(report::Chart{"run-throughput", "Throughput and GPU utilization", spec});
  section.notes.push_back(fmt::format("Throughput: {} readings of {}/s printed by the program ({}); utilization: {}.",
                                      s.throughput.front().readings, unit, source, gpu_log));
  return section;
}

// plan's prediction beside the measured figures, and MFU.
report::Section expectation_section(const ExpectationSummary& x) {
  const Expectation& e = x.expected;
  const ExpectationOutcome& o = x.measured;
  report::Section section;
  section.id = "expectation";
  section.title = "Predicted against measured";
  section.paragraphs.push_back("gpusage plan's prediction for " + e.label() +
                               ", made once at the start of the run, beside what the run measured.");
  report::Table t;
  t.columns = {{"figure", "", report::Align::left},
               {"predicted", ""},
               {"80% interval", ""},
               {"measured", ""},
               {"verdict", "", report::Align::left}};
  t.add_row(
      {"throughput (samples/s per GPU)", report::format_number(e.samples_per_s, 0),
       report::format_number(e.samples_per_s_low, 0) + " \u2013 " + report::format_number(e.samples_per_s_high, 0),
       optional_text(o.measured_samples_per_s, 0), o.verdict ? to_string(*o.verdict) : "n/a"});
  t.add_row({"peak memory (GiB)", report::format_number(units::to_gib(e.memory_bytes), 1), "",
             optional_text(
                 o.memory_peak_bytes ? std::optional<double>(units::to_gib(*o.memory_peak_bytes)) : std::nullopt, 1),
             ""});
  t.add_row({"GPU utilization (%)", report::format_number(e.utilization_percent, 0), "",
             optional_text(o.utilization_median_percent, 0), ""});
  if (o.efficiency) {
    t.add_row({"achieved TFLOPS", report::format_number(efficiency(e, e.samples_per_s).achieved_tflops, 1), "",
               report::format_number(o.efficiency->achieved_tflops, 1), ""});
    auto percent = [](const std::optional<double>& f) { return f ? std::optional<double>(*f * 100) : std::nullopt; };
    t.add_row({"MFU (%)", optional_text(percent(efficiency(e, e.samples_per_s).mfu), 1), "",
               optional_text(percent(o.efficiency->mfu), 1), ""});
  }
  section.items.push_back(report::PageTable{"run-expectation", "plan's prediction and the run's measurements", t});
  if (o.reading)
    section.notes.push_back(
        fmt::format("Measured throughput: the median of {} readings of {} ({}), at {} samples per {}.",
                    o.reading->readings, o.reading->label_unit(), o.reading->source,
                    fmt::format("{:.4g}", o.samples_per_unit.value_or(0)), o.reading->unit));
  section.notes.push_back(
      fmt::format("MFU (PaLM, Chowdhery et al. 2022, appendix B): {} model GFLOP per sample (forward and backward, no "
                  "recomputation) x samples/s per GPU, over the {} dense {} tensor rate {} (catalog). Interval: {}.",
                  report::format_number(e.model_flops_per_sample / 1e9, 2), e.gpu_name, catalog::to_string(e.precision),
                  e.peak_tflops ? report::format_number(*e.peak_tflops, 1) + " TFLOPS" : std::string("(not listed)"),
                  e.interval_basis));
  return section;
}

report::Section time_section(const TimeShares& shares) {
  report::Section section;
  section.id = "time";
  section.title = "Where the time went";
  report::Table t;
  t.columns = {{"share", "", report::Align::left}, {"seconds", "s"}, {"of the run", "%"}};
  const std::array<std::pair<const char*, double>, 4> rows = {
      {{"startup (before the first step line)", shares.startup_s},
       {"input wait (GPU idle while steps flow)", shares.input_wait_s},
       {"evaluation or checkpointing (step lines paused)", shares.pauses_s},
       {"training", shares.training_s}}};
  for (const auto& [name, seconds] : rows)
    t.add_row({name, report::format_number(seconds, 2),
               report::format_number(shares.wall_s > 0 ? 100 * seconds / shares.wall_s : 0, 0)});
  return with_table(
      std::move(section), {"run-time", "The run's wall time by share", t},
      "Inferred from the outside: NVML utilization while the program's throughput lines flow (its idle share is "
      "input wait), gaps between lines over 3x their median (and the time after the last) as evaluation or "
      "checkpointing, the time before the first line as startup. docs/MODEL.md states the limits.");
}

report::Section findings_section(const RunSummary& s) {
  report::Section section;
  section.id = "findings";
  section.title = "Findings";
  report::Table t;
  t.columns = {{"severity", "", report::Align::left}, {"rule", "", report::Align::left},
               {"finding", "", report::Align::left},  {"evidence", "", report::Align::left},
               {"fix", "", report::Align::left},      {"source", "", report::Align::left}};
  for (const auto& f : s.findings)
    t.add_row({diagnose::to_string(f.severity), f.id, f.title, f.evidence, f.fix, f.source_url});
  if (s.findings.empty())
    section.paragraphs.push_back("Doctor's log rules found nothing in train.log.");
  else
    section.items.push_back(
        report::PageTable{"run-findings", "Doctor's log rules on train.log, and the run's own (prediction, hang)", t});
  return section;
}

}  // namespace

report::Page run_page(const RunSummary& s, const std::string& gpu_log, const std::vector<TimedThroughput>& throughput,
                      const std::string& command_line) {
  std::string command;
  for (const auto& a : s.command) command += (command.empty() ? "" : " ") + a;
  report::Page page = report::new_page(
      "gpusage run: " + command, "One training run: GPU activity, throughput, alerts and findings.", command_line);
  page.provenance.push_back("Log directory: " + s.log_dir + " (train.log, gpu.jsonl, summary.json).");
  page.sections.push_back(run_section(s));
  std::optional<report::MonitorLog> log;
  try {
    log = report::read_monitor_log(gpu_log);
  } catch (const InputError&) {
    // No sample was taken (a run shorter than the first interval): the page has no timeline.
  }
  if (log && !log->samples.empty())
    page.sections.push_back(report::monitor_section(
        *log, log->alerts, "Alerts: as gpusage run raised them while it sampled (the monitor's rules)."));
  if (s.expectation) page.sections.push_back(expectation_section(*s.expectation));
  if (s.time_shares) page.sections.push_back(time_section(*s.time_shares));
  if (!s.throughput.empty()) page.sections.push_back(throughput_section(s, gpu_log, throughput, log ? &*log : nullptr));
  page.sections.push_back(findings_section(s));
  return page;
}

void write_report(const RunSummary& summary, const std::string& gpu_log, const std::vector<TimedThroughput>& throughput,
                  const std::string& command_line, const std::string& out_path) {
  io::write_file_atomically(out_path, report::render_html(run_page(summary, gpu_log, throughput, command_line)));
}

}  // namespace gpusage::run
