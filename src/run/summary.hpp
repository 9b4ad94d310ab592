// What `gpusage run` says at the end, on stderr and in DIR/summary.json. Pure: samples, throughput readings,
// alerts and findings in; figures out. Every figure is computed from the samples the run recorded.
//
// summary.json:
//   { "command": [...], "log_dir", "started_utc", "wall_s", "exit": {"code", "signal" | null},
//     "gpu_available", "gpu_message", "gpus_of_run": "process" | "all",
//     "gpus": [ { "index", "name", "uuid", "samples", "utilization_median_percent",
//     "utilization_p10_percent",
//                 "memory_peak_bytes", "memory_total_bytes", "memory_peak_fraction", "power_mean_w",
//                 "energy_j", "energy_method": "nvml-counter" | "power-integral", "input_bound_s",
//                 "input_bound_fraction" } ],
//     "host": { "cpu_median_percent", "memory_peak_bytes", "memory_total_bytes" },
//     "throughput": [ { "unit", "source", "readings", "median_per_s", "last_per_s" } ],
//     "stopped_by": "hang" | "steps" | "time-limit" | null (gpusage ended the run),
//     "alerts": [ alert events as monitor --log writes them; an "xid_error" one carries "xid" ],
//     "findings": [ doctor's finding JSON ],
//     "expectation": run/expectation.hpp's expectation_json | null (no workload options),
//     "efficiency": { "model_flops_per_sample", "samples_per_s", "achieved_tflops", "peak_tflops",
//                     "peak_source", "mfu" } | null,
//     "time_shares": run/time_shares.hpp's to_json | null }
// Figures that could not be measured are null.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device/types.hpp"
#include "core/diagnose/finding.hpp"
#include "monitor/alerts.hpp"
#include "run/expectation.hpp"
#include "run/throughput.hpp"
#include "run/time_shares.hpp"

namespace gpusage::run {

// One sample as the run recorded it, with the alerts active at that moment.
struct RecordedSample {
  device::Sample sample;
  std::vector<monitor::Alert> active;
};

struct TimedThroughput {
  double unix_time_s = 0;
  Throughput reading;
};

// The GPUs the run uses: those listing a process of `tree`, and any GPU with an XID event in this sample.
// When NVML lists none of them (a container's own PID namespace hides host pids, or the run has not touched
// a GPU yet) every GPU is kept and `matched` is false.
struct GpuSelection {
  device::Sample sample;
  bool matched = false;
};
GpuSelection select_run_gpus(const device::Sample& sample, const std::set<unsigned>& tree);

struct GpuUsage {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::size_t samples = 0;
  std::optional<double> utilization_median_percent;
  std::optional<double> utilization_p10_percent;
  std::optional<std::uint64_t> memory_peak_bytes;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_mean_w;
  // Over the sampled span: the difference of NVML's energy counter where the GPU has one ("nvml-counter"),
  // else the trapezoidal integral of the sampled power ("power-integral").
  std::optional<double> energy_j;
  std::string energy_method;
  // Time between samples while the monitor's input-bottleneck alert was active.
  double input_bound_s = 0;
  double sampled_span_s = 0;
};

struct HostUsage {
  std::optional<double> cpu_median_percent;
  std::optional<std::uint64_t> memory_peak_bytes;
  std::optional<std::uint64_t> memory_total_bytes;
};

struct RunSummary {
  std::vector<std::string> command;
  std::string log_dir;
  double started_unix_s = 0;
  double wall_s = 0;
  int exit_code = 0;
  std::optional<int> signal;              // the signal that killed the child
  std::optional<std::string> stopped_by;  // gpusage ended it: "hang", "steps" or "time-limit"
  bool gpu_available = false;
  std::string gpu_message;
  bool gpus_matched = false;
  std::vector<GpuUsage> gpus;
  HostUsage host;
  std::vector<ThroughputSummary> throughput;  // most readings first
  std::vector<monitor::Alert> alerts;         // as raised, in order
  std::vector<diagnose::Finding> findings;    // most severe first (doctor's log rules and the run's own)
  // With plan's workload options: the prediction made at the start beside what the run measured.
  std::optional<ExpectationSummary> expectation;
  // Where the wall time went (run/time_shares.hpp), when the program printed throughput lines.
  std::optional<TimeShares> time_shares;
};

// The prediction against the run's throughput lines and its GPUs' NVML figures.
ExpectationSummary compare(const Expectation& expected, const std::vector<ThroughputSummary>& throughput,
                           const std::vector<GpuUsage>& gpus);

std::vector<GpuUsage> summarize_gpus(const std::vector<RecordedSample>& samples);
HostUsage summarize_host(const std::vector<RecordedSample>& samples);
std::vector<ThroughputSummary> summarize_throughput(const std::vector<TimedThroughput>& readings);

nlohmann::json to_json(const RunSummary& summary);
// Lines for stderr, each prefixed "gpusage: ".
std::string render_text(const RunSummary& summary);

}  // namespace gpusage::run
