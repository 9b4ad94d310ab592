// The largest batch that trains without running out of memory (BENCHMARKING.md "OOM search"):
// grow by doubling from `start`, then binary-search between the last success and the first failure.
// A state machine without LibTorch: the caller runs each trial, recovers from an out-of-memory error
// outside its catch block (drop references, empty the cache), then records the outcome.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpusage::bench {

struct SearchTrial {
  int batch = 0;
  bool fits = false;
  std::string reason;  // why it did not fit (the out-of-memory message), empty when it fit
};

class BatchSearch {
 public:
  // `limit`: the search never tries a batch above it (a cap, reported when reached).
  explicit BatchSearch(int start = 1, int limit = 65536);

  // The next batch to try, or empty when the search is over.
  std::optional<int> next() const;
  // Records the outcome of trying `batch` (which must be the value next() returned).
  void record(int batch, bool fits, std::string reason = {});

  // Largest batch that fitted; 0 when none did.
  int best() const { return last_fit_; }
  // True when every batch up to `limit` fitted: the real maximum may be higher.
  bool reached_limit() const { return last_fit_ == limit_; }
  const std::vector<SearchTrial>& trials() const { return trials_; }

 private:
  int limit_;
  int last_fit_ = 0;
  std::optional<int> first_failure_;
  std::optional<int> next_;
  std::vector<SearchTrial> trials_;
};

}  // namespace gpusage::bench
