// Reads back a log written by `gpusage monitor --log FILE`: CSV (one row per GPU per sample) or JSON Lines
// (one sample per line, with the alerts active at that moment). Told apart by content, not by name.
#pragma once

#include <string>
#include <vector>

#include "core/device/types.hpp"

namespace gpusage::report {

// An alert as the JSON Lines log recorded it: raised at `unix_time_s` on GPU `gpu`.
struct AlertMark {
  double unix_time_s = 0;
  unsigned gpu = 0;
  std::string kind;      // "thermal_throttle" … (monitor/alerts.hpp)
  std::string severity;  // "warning" or "critical"
  std::string message;
};

struct MonitorLog {
  std::string origin;
  bool json_lines = false;
  std::vector<device::Sample> samples;  // in the file's order
  // JSON Lines only: each alert once, at the time it was raised. The CSV log has no alert column.
  std::vector<AlertMark> alerts;
};

// Throws InputError naming the file (and the line) when it cannot be read or is not a gpusage monitor log.
MonitorLog read_monitor_log(const std::string& path);
MonitorLog parse_monitor_log(const std::string& text, const std::string& origin);

}  // namespace gpusage::report
