#include "report/time_axis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/i18n.hpp"

namespace gpusage::report {

namespace {

// Round steps a reader counts in: tenths of a second up to a day; beyond, whole days doubled.
constexpr double kSteps[] = {0.1, 0.2, 0.5, 1,    2,    5,    10,    15,    30,    60,   120,
                             300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
// Up to this span the labels count seconds; up to the next, minutes:seconds; beyond, hours:minutes.
constexpr double kSecondsUpTo = 90;
constexpr double kMinutesUpTo = 90 * 60;

std::string label(double value_s, double step_s, double span_s) {
  if (span_s <= kSecondsUpTo) {
    return step_s < 1 ? fmt::format("{:.1f} s", value_s) : fmt::format("{:.0f} s", value_s);
  }
  if (span_s <= kMinutesUpTo) {
    const long total = std::lround(value_s);
    return fmt::format("{}:{:02d}", total / 60, static_cast<int>(total % 60));
  }
  const long minutes = std::lround(value_s / 60);
  return fmt::format("{}:{:02d}", minutes / 60, static_cast<int>(minutes % 60));
}

}  // namespace

TimeTicks time_ticks(double span_s, int max_ticks) {
  TimeTicks out;
  const double span = std::isfinite(span_s) && span_s > 0 ? span_s : 0;
  const int most = std::max(1, max_ticks);
  out.step_s = kSteps[0];
  for (double step : kSteps) {
    out.step_s = step;
    if (span / step <= most) break;
  }
  while (span / out.step_s > most) out.step_s *= 2;
  out.unit = span <= kSecondsUpTo ? "s" : span <= kMinutesUpTo ? "min:s" : "h:min";
  // i x step, rounded to the step's tenths: 0.30000000000000004 would print and compare as 0.3 anyway, but the
  // page's JSON should hold the number the label names.
  for (int i = 0; i * out.step_s <= span + 1e-9; ++i) {
    const double value = std::round(i * out.step_s * 10) / 10;
    out.values_s.push_back(value);
    out.labels.push_back(label(value, out.step_s, span));
  }
  return out;
}

nlohmann::json time_axis_encoding(const std::string& field, double span_s, const std::string& since) {
  const TimeTicks ticks = time_ticks(span_s);
  // Each tick value to its label; Vega's axis asks for exactly these values, so '' is never shown.
  std::string expression;
  for (std::size_t i = 0; i < ticks.values_s.size(); ++i) {
    expression += fmt::format("abs(datum.value - {}) < 1e-6 ? '{}' : ", ticks.values_s[i], ticks.labels[i]);
  }
  expression += "''";
  const double end = std::max(span_s > 0 ? span_s : 0, ticks.step_s);
  return {{"field", field},
          {"type", "quantitative"},
          {"title", i18n::trf("Time since {} ({})", since, ticks.unit)},
          {"scale", {{"domain", {0, end}}, {"nice", false}, {"zero", true}}},
          {"axis", {{"values", ticks.values_s}, {"labelExpr", expression}, {"labelAngle", 0}, {"grid", true}}}};
}

}  // namespace gpusage::report
