// The benchmark's result model (plain C++, no LibTorch) and its JSON form, the contract read by
// `gpusage bench`, `gpusage plan --calibration` and bench/compare-pytorch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/batch_search.hpp"
#include "bench/bench_options.hpp"

namespace gpusage::bench {

// Where the numbers came from (BENCHMARKING.md "Output").
struct Environment {
  std::string device;       // "cpu" or "cuda"
  std::string device_name;  // "NVIDIA H100 80GB HBM3" or the CPU model
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;  // runtime LibTorch was built with
  std::optional<std::string> cudnn_version;
  std::string libtorch_version;
  std::string cpu_model;
  int cpu_threads = 0;    // logical CPUs of the machine
  int torch_threads = 0;  // LibTorch intra-op threads per process
  std::string gpusage_version;
  std::string gpusage_commit;
  std::string build_type;
};

enum class FailureKind { none, out_of_memory, non_finite, error };
const char* to_string(FailureKind kind);

// The input pipeline of a --data DIR run (BENCHMARKING.md: data mode and data-stall fraction).
struct LoaderResult {
  int workers = 0;
  std::int64_t probe_images = 0;       // images of the loader-alone pass before training
  double images_per_s = 0;             // that pass, wall clock, all workers
  double per_worker_images_per_s = 0;  // that pass, images / the workers' summed busy time
  std::int64_t failed_files = 0;       // distinct unreadable or corrupt files, skipped
  std::vector<std::string> failed;     // "path: reason", the first 20
};

// One training run at one batch size (one process).
struct TrialResult {
  int batch = 0;       // per process, per micro-batch
  int accumulate = 1;  // micro-batches per optimizer step
  FailureKind failure = FailureKind::none;
  std::string reason;  // why it failed, empty when it did not
  int warmup_steps = 0;
  int tokens_per_sample = 0;                    // language models
  std::vector<double> step_time_s;              // each timed optimizer step
  std::vector<double> data_wait_s;              // time of each timed step spent waiting for the next batch
  std::vector<double> loss;                     // each timed step
  std::vector<double> grad_norm;                // each timed step, with --clip (before clipping)
  double timed_wall_s = 0;                      // timed region, device synchronised at both ends
  std::int64_t samples = 0;                     // samples processed in the timed region
  int nonfinite_steps = 0;                      // steps whose loss or gradients were not finite (update skipped)
  std::optional<int> first_nonfinite_step;      // index among all steps (warm-up included)
  std::optional<double> final_loss_scale;       // fp16
  std::optional<double> peak_allocated_bytes;   // CUDA caching allocator
  std::optional<double> peak_reserved_bytes;    // CUDA caching allocator
  std::optional<double> peak_rss_growth_bytes;  // CPU: peak resident set above the trial's start
  std::optional<double> average_power_w;        // NVML
  std::optional<double> energy_j_per_sample;    // NVML
  std::string power_note;                       // why power is null
  std::optional<LoaderResult> loader;           // --data DIR

  bool ok() const { return failure == FailureKind::none; }
  std::optional<double> throughput() const;         // samples/s; empty when failed
  std::optional<double> peak_memory_bytes() const;  // reserved on CUDA, RSS growth on CPU
  double data_wait_fraction() const;
  // Samples/s the model would take if data were instant: samples / (step time - data wait).
  std::optional<double> model_images_per_s() const;
  // Loader workers that keep the model fed: ceil(model_images_per_s / per-worker loader rate).
  std::optional<int> workers_needed() const;
};

struct DistributedResult {
  int processes = 0;
  std::string backend;                  // "gloo" or "nccl"
  std::vector<TrialResult> ranks;       // one per process, rank order
  std::optional<TrialResult> baseline;  // one process alone, same per-process batch and threads
  std::optional<double> total_throughput() const;
  std::optional<double> scaling_efficiency() const;  // total / (processes × baseline)
};

struct BenchReport {
  Environment environment;
  BenchOptions options;  // resolved for the device
  std::int64_t model_params = 0;
  bool channels_last = false;
  std::optional<bool> cudnn_benchmark;
  std::string data_mode = "synthetic, resident on the device";
  std::optional<std::int64_t> data_images;  // --data DIR: images and classes found
  std::optional<int> data_classes;
  std::string command_line;
  std::vector<TrialResult> results;
  std::optional<BatchSearch> search;  // --batch auto
  std::optional<DistributedResult> distributed;
  std::vector<std::string> warnings;
};

nlohmann::json to_json(const TrialResult& result);
nlohmann::json to_json(const BenchReport& report);
// Inverse of to_json(TrialResult) for what the distributed ranks hand back to their parent.
TrialResult trial_from_json(const nlohmann::json& json);

}  // namespace gpusage::bench
