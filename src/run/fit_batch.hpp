// `gpusage fit-batch -- CMD ... {batch} ...`: the largest batch that trains, for any command. Each try runs
// the command with {batch} replaced, under `gpusage run`'s supervision, until it prints --steps throughput
// lines (then gpusage stops it) or exits; an out-of-memory error read from its output (doctor's OOM rules) is
// a failure, any other failure ends the search. The search grows by doubling from the start (plan's predicted
// largest batch when the workload is given, else 1) until a try fails, then bisects between the largest batch
// that ran and the smallest that did not: the fewest tries a search with no other knowledge allows.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/summary.hpp"

namespace gpusage::run {

class BatchSearch {
 public:
  BatchSearch(int start, int max_batch) : next_(start), max_(max_batch) {}
  // The next batch to try; none when the search is done.
  std::optional<int> next() const;
  void record(int batch, bool ran);
  int largest_ran() const { return ran_; }  // 0: none ran
  std::optional<int> smallest_failed() const { return failed_; }

 private:
  int next_;
  int max_;
  int ran_ = 0;
  std::optional<int> failed_;
  bool done_ = false;
};

// The command with every "{batch}" replaced (inside arguments too: "--batch-size={batch}").
std::vector<std::string> with_batch(const std::vector<std::string>& command, int batch);

enum class TryResult { ran, out_of_memory, failed };
const char* to_string(TryResult result);
// From the try's summary: an OOM finding is out_of_memory; reaching the steps (gpusage stopped it) or exit 0
// ran.
TryResult classify(const RunSummary& summary);

struct Try {
  int batch = 0;
  TryResult result = TryResult::failed;
  std::optional<double> memory_peak_bytes;  // NVML, the largest of the run's GPUs
  std::optional<ThroughputSummary> throughput;
  double wall_s = 0;
  std::string log_dir;
  int exit_code = 0;
};

struct FitBatchReport {
  std::vector<Try> tries;
  int largest = 0;                  // 0: not even the smallest batch ran
  std::optional<int> predicted;     // plan's largest batch, when the workload was given
  std::optional<int> target_batch;  // --target-batch
  std::string stopped;              // why the search ended early ("" when it converged)
};

// "batch 37 x 4 accumulation steps = 148 (target 148)": the fewest accumulation steps of a micro-batch that
// ran, preferring a micro-batch that divides the target exactly.
std::string accumulation_plan(int largest, int target);

nlohmann::json to_json(const FitBatchReport& report);
std::string render_text(const FitBatchReport& report);

}  // namespace gpusage::run
