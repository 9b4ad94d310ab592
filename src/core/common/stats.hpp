// Order statistics shared by the estimators (validation errors, calibration ratios, fitted factors) and the
// benchmark (step-time distributions). One quantile definition for all of them.
#pragma once

#include <vector>

namespace gpusage::stats {

// The q-quantile (q is clamped to [0, 1]) with linear interpolation between order statistics (numpy's
// default "linear"), so that quantile(v, 0.5) is the usual median. Throws std::invalid_argument for no values.
double quantile(std::vector<double> values, double q);

inline double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

// Summary of a sample of step times: the distribution, not one number (BENCHMARKING.md).
struct Distribution {
  int count = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double cv = 0;  // coefficient of variation: sample standard deviation / mean (0 for one value)
};

Distribution summarize(const std::vector<double>& values);  // count 0 for an empty sample

}  // namespace gpusage::stats
