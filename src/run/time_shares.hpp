// Where the run's wall time went, estimated from the outside (no profiler, no trace): NVML's utilization
// samples and the times of the program's throughput lines. Pure.
//
//   startup          from the start to the first throughput line (imports, data indexing, model build,
//                    compilation, the first batches);
//   eval/checkpoint  pauses of the step lines: a gap between two throughput lines longer than kPauseFactor
//   times
//                    their median gap (evaluation, checkpointing, a stall), and the time after the last line;
//   input wait       while steps flow, the GPUs' idle share of each sample period (1 - utilization): the GPU
//                    waited for the next batch (or for other host work: logging, Python dispatch);
//   training         the rest: while steps flow, the GPUs' busy share.
// Limits: NVML's utilization is the share of time any kernel ran, so a GPU running small kernels reads busy;
// throughput lines mark steps only as often as the program prints them (a bar redrawn each second shows
// pauses longer than a few seconds); host stalls other than input count as input wait.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpusage::run {

struct RecordedSample;  // run/summary.hpp
struct TimedThroughput;

inline constexpr double kPauseFactor = 3;

struct TimeShares {
  double wall_s = 0;
  double startup_s = 0;
  double pauses_s = 0;  // evaluation or checkpointing
  double input_wait_s = 0;
  double training_s = 0;
};

// None without two throughput lines or a GPU utilization sample while the steps flowed.
std::optional<TimeShares> estimate_time_shares(double start_unix_s, double end_unix_s,
                                               const std::vector<RecordedSample>& samples,
                                               const std::vector<TimedThroughput>& readings);

nlohmann::json to_json(const TimeShares& shares);
// "gpusage: time [sss|iiiiii|ee|##########] startup 12% · ..." and the fix for the largest avoidable share.
std::string render_time_bar(const TimeShares& shares, int width = 40);

}  // namespace gpusage::run
