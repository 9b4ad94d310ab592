// Reads what `gpusage bench --format json --out FILE` (or gpusage-bench) writes: where it ran, what it
// trained, and each measured batch size. The schema is src/bench/result.cpp's; extra keys are ignored.
// The one reader of bench results: plan --calibration, the report's measured-against-predicted section and
// `gpusage bench`'s own table all read a file through here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::estimate {

// Step times of one run (seconds), as summarised by gpusage-bench.
struct StepTimeSummary {
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
  double cv = 0;  // sample standard deviation / mean
};

// The input pipeline of a --data DIR run.
struct LoaderSummary {
  int workers = 0;
  std::optional<double> images_per_s;  // the loader alone, before training
  std::optional<double> per_worker_images_per_s;
  std::optional<double> model_images_per_s;  // what the model takes with no data wait
  std::optional<double> workers_needed;
};

struct BenchRun {
  int batch = 0;
  int accumulate = 1;
  bool ok = false;
  std::string failure;               // "out_of_memory" … when not ok
  std::string reason;                // why it failed
  std::optional<double> throughput;  // samples/s
  std::optional<double> peak_memory_bytes;
  std::optional<StepTimeSummary> step_time;
  std::optional<double> data_wait_fraction;
  std::optional<LoaderSummary> loader;
};

struct BatchSearchSummary {
  int max_batch = 0;
  int trials = 0;
};

struct DistributedSummary {
  int processes = 0;
  std::string backend;
  std::vector<std::optional<double>> rank_throughputs;
  std::optional<double> total_throughput;
  std::optional<double> baseline_throughput;  // one process alone
  std::optional<double> scaling_efficiency;
};

struct BenchFile {
  std::string origin;
  std::string device;       // "cuda" or "cpu"
  std::string device_name;  // "NVIDIA GeForce RTX 4090"
  std::string libtorch_version;
  std::optional<int> torch_threads;
  std::string model;  // a zoo id ("resnet50")
  std::string precision;
  std::string optimizer;  // may be empty
  std::optional<int> resolution;
  std::optional<int> seq_len;
  std::optional<double> model_params;
  std::optional<int> steps;  // timed steps per batch
  std::optional<int> warmup;
  std::string data_mode;
  std::optional<double> data_images;
  std::optional<double> data_classes;
  std::vector<BenchRun> runs;
  std::optional<BatchSearchSummary> batch_search;
  std::optional<DistributedSummary> distributed;
  std::vector<std::string> warnings;
};

// Throws InputError naming the option and `origin` ("--bench 'b.json': missing 'runs'") and the missing or
// malformed key.
BenchFile parse_bench_file(const std::string& json_text, const std::string& origin,
                           std::string_view option = "--bench");

// The file at `path` (read through core/common/io, with its size limit), parsed as above.
BenchFile read_bench_file(const std::string& path, std::string_view option = "--bench");

}  // namespace gpusage::estimate
