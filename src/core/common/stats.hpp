// Order statistics shared by the estimators (validation errors, calibration ratios, fitted factors).
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace gpusage::stats {

// The q-quantile (0 <= q <= 1) with linear interpolation between order statistics, so that
// quantile(v, 0.5) is the usual median (the mean of the middle two for an even count).
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

inline double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace gpusage::stats
