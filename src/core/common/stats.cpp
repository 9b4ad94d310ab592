#include "core/common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpusage::stats {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Distribution summarize(const std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  d.count = static_cast<int>(values.size());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / d.count;
  d.min = *std::min_element(values.begin(), values.end());
  d.max = *std::max_element(values.begin(), values.end());
  d.p50 = quantile(values, 0.50);
  d.p90 = quantile(values, 0.90);
  d.p99 = quantile(values, 0.99);
  if (d.count > 1 && d.mean != 0) {
    double squares = 0;
    for (double v : values) squares += (v - d.mean) * (v - d.mean);
    d.cv = std::sqrt(squares / (d.count - 1)) / d.mean;
  }
  return d;
}

}  // namespace gpusage::stats
