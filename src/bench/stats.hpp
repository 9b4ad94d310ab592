// Summaries of a sample of step times: the distribution, not one number (BENCHMARKING.md).
#pragma once

#include <vector>

namespace gpusage::bench {

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

// Percentile q in [0, 1] with linear interpolation between closest ranks (numpy's default "linear").
// Requires a non-empty sample.
double percentile(std::vector<double> values, double q);
Distribution summarize(const std::vector<double>& values);  // count 0 for an empty sample

}  // namespace gpusage::bench
