#include "run/run_report.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
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
      f.evidence += i18n::trf(
          "{}gpusage run measured a peak of {} on GPU {} ({}){}.", f.evidence.empty() ? "" : "\n",
          diagnose::format_size(static_cast<double>(*g.memory_peak_bytes)), g.index, g.name,
          g.memory_total_bytes ? i18n::trf(" of {}", diagnose::format_size(static_cast<double>(*g.memory_total_bytes)))
                               : "");
    }
  }
  diagnose::sort_findings(findings);
  return findings;
}

namespace {

std::string optional_text(const std::optional<double>& v, int decimals, const char* suffix = "") {
  return v ? report::format_number(*v, decimals) + suffix : i18n::tr("n/a");
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
  section.title = i18n::tr("The run");
  std::string command;
  for (const auto& a : s.command) command += (command.empty() ? "" : " ") + a;
  section.paragraphs.push_back(i18n::trf("{} ran for {} from {} and ended with exit status {}{}.", command,
                                         report::format_duration(s.wall_s), wallclock::iso_utc(s.started_unix_s),
                                         s.exit_code, s.signal ? i18n::trf(" (killed by signal {})", *s.signal) : ""));
  if (!s.gpu_available) section.paragraphs.push_back(i18n::trf("No GPU data: {}. Host figures only.", s.gpu_message));
  report::Table t;
  using i18n::tr;
  t.columns = {{"GPU", "", report::Align::left}, {tr("samples"), ""},        {tr("utilization median"), "%"},
               {tr("utilization p10"), "%"},     {tr("peak memory"), "GiB"}, {tr("capacity"), "GiB"},
               {tr("mean power"), "W"},          {tr("energy"), "kJ"},       {tr("input-bound"), tr("% of time")}};
  for (const auto& g : s.gpus) {
    auto gib = [](const std::optional<std::uint64_t>& b) {
      return b ? std::optional<double>(units::to_gib(static_cast<double>(*b))) : std::nullopt;
    };
    t.add_row({fmt::format("{} {}", g.index, g.name), std::to_string(g.samples),
               optional_text(g.utilization_median_percent, 0), optional_text(g.utilization_p10_percent, 0),
               optional_text(gib(g.memory_peak_bytes), 1), optional_text(gib(g.memory_total_bytes), 1),
               optional_text(g.power_mean_w, 0),
               optional_text(g.energy_j ? std::optional<double>(*g.energy_j / 1000) : std::nullopt, 2),
               g.sampled_span_s > 0 ? report::format_number(100 * g.input_bound_s / g.sampled_span_s, 0) : tr("n/a")});
  }
  return with_table(std::move(section), {"run-gpus", tr("GPUs of the run, from the samples in gpu.jsonl"), t},
                    tr("Energy: the difference of NVML's energy counter over the sampled span where the GPU has "
                       "one, else the integral of the sampled power draw. Input-bound: time "
                       "during which gpusage monitor's input-bottleneck alert was active."));
}

// GPU utilization and the program's own throughput on one time axis (two y scales): a GPU that waits shows as
// utilization dips where throughput is low.
report::Section throughput_section(const RunSummary& s, const std::string& gpu_log,
                                   const std::vector<TimedThroughput>& readings, const report::MonitorLog* log) {
  report::Section section;
  section.id = "throughput";
  section.title = i18n::tr("Throughput against GPU utilization");
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
                            {"series", i18n::trf("GPU {} utilization (%)", gpu.index)},
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
  Json spec = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"title", i18n::tr("Throughput (from the program's output) and GPU utilization (NVML)")},
      {"width", "container"},
      {"height", 260},
      {"data", {{"values", values}}},
      {"layer", Json::array({layer("throughput", unit + "/s"), layer("utilization", i18n::tr("GPU utilization (%)"))})},
      {"resolve", {{"scale", {{"y", "independent"}}}}}};
  section.items.push_back(report::Chart{"run-throughput", i18n::tr("Throughput and GPU utilization"), spec});
  section.notes.push_back(i18n::trf("Throughput: {} readings of {}/s printed by the program ({}); utilization: {}.",
                                    s.throughput.front().readings, unit, source, gpu_log));
  return section;
}

// The measured throughput against the interval, in the reader's language (to_string is the JSON value).
std::string verdict_cell(Verdict v) {
  switch (v) {
    case Verdict::below: return i18n::trc("verdict", "below");
    case Verdict::above: return i18n::trc("verdict", "above");
    case Verdict::within: break;
  }
  return i18n::trc("verdict", "within");
}

// plan's prediction beside the measured figures, and MFU.
report::Section expectation_section(const ExpectationSummary& x) {
  const Expectation& e = x.expected;
  const ExpectationOutcome& o = x.measured;
  report::Section section;
  section.id = "expectation";
  section.title = i18n::tr("Predicted against measured");
  section.paragraphs.push_back(i18n::trf(
      "gpusage plan's prediction for {}, made once at the start of the run, beside what the run measured.", e.label()));
  report::Table t;
  using i18n::tr;
  t.columns = {{tr("figure"), "", report::Align::left},
               {tr("predicted"), ""},
               {tr("80% interval"), ""},
               {tr("measured"), ""},
               {tr("verdict"), "", report::Align::left}};
  t.add_row(
      {tr("throughput (samples/s per GPU)"), report::format_number(e.samples_per_s, 0),
       report::format_number(e.samples_per_s_low, 0) + " \u2013 " + report::format_number(e.samples_per_s_high, 0),
       optional_text(o.measured_samples_per_s, 0), o.verdict ? verdict_cell(*o.verdict) : tr("n/a")});
  t.add_row({tr("peak memory (GiB)"), report::format_number(units::to_gib(e.memory_bytes), 1), "",
             optional_text(
                 o.memory_peak_bytes ? std::optional<double>(units::to_gib(*o.memory_peak_bytes)) : std::nullopt, 1),
             ""});
  t.add_row({tr("GPU utilization (%)"), report::format_number(e.utilization_percent, 0), "",
             optional_text(o.utilization_median_percent, 0), ""});
  if (o.efficiency) {
    t.add_row({tr("achieved TFLOPS"), report::format_number(efficiency(e, e.samples_per_s).achieved_tflops, 1), "",
               report::format_number(o.efficiency->achieved_tflops, 1), ""});
    auto percent = [](const std::optional<double>& f) { return f ? std::optional<double>(*f * 100) : std::nullopt; };
    t.add_row({"MFU (%)", optional_text(percent(efficiency(e, e.samples_per_s).mfu), 1), "",
               optional_text(percent(o.efficiency->mfu), 1), ""});
  }
  section.items.push_back(report::PageTable{"run-expectation", tr("plan's prediction and the run's measurements"), t});
  if (o.reading)
    section.notes.push_back(
        i18n::trf("Measured throughput: the median of {} readings of {} ({}), at {} samples per {}.",
                  o.reading->readings, o.reading->label_unit(), o.reading->source,
                  fmt::format("{:.4g}", o.samples_per_unit.value_or(0)), o.reading->unit));
  section.notes.push_back(i18n::trf(
      "MFU (PaLM, Chowdhery et al. 2022, appendix B): {} model GFLOP per sample (forward and backward, no "
      "recomputation) x samples/s per GPU, over the {} dense {} tensor rate {} (catalog). Interval: {}.",
      report::format_number(e.model_flops_per_sample / 1e9, 2), e.gpu_name, catalog::to_string(e.precision),
      e.peak_tflops ? report::format_number(*e.peak_tflops, 1) + " TFLOPS" : tr("(not listed)"), e.interval_basis));
  return section;
}

report::Section time_section(const TimeShares& shares) {
  report::Section section;
  section.id = "time";
  section.title = i18n::tr("Where the time went");
  report::Table t;
  using i18n::tr;
  t.columns = {{tr("share"), "", report::Align::left}, {tr("seconds"), "s"}, {tr("of the run"), "%"}};
  const std::array<std::pair<const char*, double>, 4> rows = {
      {{i18n::N_("startup (before the first step line)"), shares.startup_s},
       {i18n::N_("input wait (GPU idle while steps flow)"), shares.input_wait_s},
       {i18n::N_("evaluation or checkpointing (step lines paused)"), shares.pauses_s},
       {i18n::N_("training"), shares.training_s}}};
  for (const auto& [name, seconds] : rows)
    t.add_row({tr(name), report::format_number(seconds, 2),
               report::format_number(shares.wall_s > 0 ? 100 * seconds / shares.wall_s : 0, 0)});
  return with_table(
      std::move(section), {"run-time", tr("The run's wall time by share"), t},
      tr("Inferred from the outside: NVML utilization while the program's throughput lines flow (its idle share is "
         "input wait), gaps between lines over 3x their median (and the time after the last) as evaluation or "
         "checkpointing, the time before the first line as startup. docs/MODEL.md states the limits."));
}

report::Section findings_section(const RunSummary& s) {
  report::Section section;
  section.id = "findings";
  section.title = i18n::tr("Findings");
  report::Table t;
  using i18n::tr;
  t.columns = {{tr("severity"), "", report::Align::left}, {tr("rule"), "", report::Align::left},
               {tr("finding"), "", report::Align::left},  {tr("evidence"), "", report::Align::left},
               {tr("fix"), "", report::Align::left},      {tr("source"), "", report::Align::left}};
  for (const auto& f : s.findings)
    t.add_row({diagnose::severity_label(f.severity), f.id, f.title, f.evidence, f.fix, f.source_url});
  if (s.findings.empty())
    section.paragraphs.push_back(tr("Doctor's log rules found nothing in train.log."));
  else
    section.items.push_back(report::PageTable{
        "run-findings", tr("Doctor's log rules on train.log, and the run's own (prediction, hang)"), t});
  return section;
}

}  // namespace

report::Page run_page(const RunSummary& s, const std::string& gpu_log, const std::vector<TimedThroughput>& throughput,
                      const std::string& command_line) {
  std::string command;
  for (const auto& a : s.command) command += (command.empty() ? "" : " ") + a;
  report::Page page =
      report::new_page(i18n::trf("gpusage run: {}", command),
                       i18n::tr("One training run: GPU activity, throughput, alerts and findings."), command_line);
  page.provenance.push_back(i18n::trf("Log directory: {} (train.log, gpu.jsonl, summary.json).", s.log_dir));
  page.sections.push_back(run_section(s));
  std::optional<report::MonitorLog> log;
  try {
    log = report::read_monitor_log(gpu_log);
  } catch (const InputError&) {
    // No sample was taken (a run shorter than the first interval): the page has no timeline.
  }
  if (log && !log->samples.empty())
    page.sections.push_back(report::monitor_section(
        *log, log->alerts, i18n::tr("Alerts: as gpusage run raised them while it sampled (the monitor's rules).")));
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
