// The time axis of the pages' charts over a run or a monitor log: time since the start, with ticks at a round
// step chosen by the span ("0 s, 10 s, 20 s", "0:00, 0:30, 1:00", "0:00, 1:00, 2:00" in hours) and every label
// computed here. Vega's own temporal axis labels a short span by its milliseconds (".900 .900 .900" when the
// ticks fall on the same fraction of a second); these labels are distinct by construction.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpusage::report {

struct TimeTicks {
  double step_s = 1;
  std::vector<double> values_s;     // 0, step, 2 step, ... up to the span
  std::vector<std::string> labels;  // one per value: "10 s", "1:30" (minutes:seconds), "2:00" (hours:minutes)
  std::string unit;                 // what the labels count: "s", "min:s" or "h:min"
};

// Ticks from 0 over `span_s` seconds (at least one tick: 0), at most `max_ticks` + 1 of them, at the smallest
// round step (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 day, ...)
// that keeps within that count.
TimeTicks time_ticks(double span_s, int max_ticks = 8);

// A Vega-Lite x encoding of `field` (seconds since the start) with those ticks, their labels (a labelExpr
// that maps each tick value to its label) and the domain [0, span]. `since` names the start in the title:
// "Time since 2026-12-07T17:44:22Z (min:s)".
nlohmann::json time_axis_encoding(const std::string& field, double span_s, const std::string& since);

}  // namespace gpusage::report
