// The end of a run: doctor's log rules over the whole log (with the measured memory peak added to an OOM's
// evidence), and DIR/report.html from the report page builder (src/report): the run's figures, the monitor's
// timeline with its alerts, throughput against GPU utilization, and the findings.
#pragma once

#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_rules.hpp"
#include "report/html_page.hpp"
#include "run/summary.hpp"

namespace gpusage::run {

// `log_bytes` is train.log as written (escape sequences and '\r' redraws are cleaned here).
std::vector<diagnose::Finding> final_findings(const std::string& log_bytes, const diagnose::RunContext& context,
                                              const std::vector<GpuUsage>& gpus);

// The page; `gpu_log` is DIR/gpu.jsonl (read back with the report's monitor-log reader).
report::Page run_page(const RunSummary& summary, const std::string& gpu_log,
                      const std::vector<TimedThroughput>& throughput, const std::string& command_line);
void write_report(const RunSummary& summary, const std::string& gpu_log, const std::vector<TimedThroughput>& throughput,
                  const std::string& command_line, const std::string& out_path);

}  // namespace gpusage::run
