// `gpusage monitor` as a library call: picks the backend, samples on a schedule and feeds every requested view
// (stdout stream or summary, interactive terminal view, log file, Prometheus endpoint) from the same samples.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "monitor/alerts.hpp"

namespace gpusage::monitor {

enum class View { table, csv, json, prometheus, interactive };

struct MonitorOptions {
  double interval_s = 1.0;
  bool once = false;
  View view = View::table;
  std::string log_path;
  std::string prometheus;     // HOST:PORT, empty for none
  std::string simulate_path;  // replay this trace instead of reading NVML
  std::optional<long> count;  // stop after this many samples
  int width = 120;            // terminal width for the summary
  AlertConfig alerts;
};

// Throws InputError for bad options (interval out of range, unknown log extension, unusable address).
// Returns the exit code. SIGINT/SIGTERM stop the loop cleanly (the terminal is restored, the log closed).
int run_monitor(const MonitorOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gpusage::monitor
