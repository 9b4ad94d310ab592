// The interactive terminal view (ncurses): per-GPU bars, a rolling history of utilisation, memory and power,
// the process table and the alerts. `q` quits. The terminal is restored on every way out (q, Ctrl-C, SIGTERM,
// an exception), by a guard that calls endwin().
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "core/device/types.hpp"
#include "monitor/alerts.hpp"

namespace gpusage::monitor {

struct Tick {
  device::Sample sample;
  std::vector<Alert> alerts;
};

// Calls `next()` every `interval_s` and redraws until `q`, `stop` becomes true, or next() returns false.
void run_interactive(double interval_s, const std::function<bool(Tick&)>& next, const std::atomic<bool>& stop);

}  // namespace gpusage::monitor
