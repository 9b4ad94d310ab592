// What a benchmark run is asked to do, shared by `gpusage bench` (the light CLI, no LibTorch) and the
// gpusage-bench binary: one option set, registered on a CLI11 app by both, so that they cannot drift.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/gpu.hpp"

namespace gpusage::bench {

enum class DeviceKind { cpu, cuda };
// The catalog's precision type; the bench trains fp32, tf32, fp16 and bf16 (not fp8).
using Precision = catalog::Precision;
enum class OptimizerKind { sgd, momentum, adamw };  // sgd: plain SGD; momentum: SGD with momentum 0.9

const char* to_string(DeviceKind device);
const char* to_string(OptimizerKind optimizer);

struct BenchOptions {
  std::string model = "resnet50";
  std::optional<DeviceKind> device;  // empty: cuda when LibTorch sees a GPU, else cpu
  std::string batch_text;            // "32", "2,4,8" or "auto"; empty: the device's default
  Precision precision = Precision::fp32;
  OptimizerKind optimizer = OptimizerKind::momentum;
  std::optional<int> steps;         // timed steps; default 50 on CUDA, 10 on CPU
  std::optional<int> warmup;        // untimed steps first; default 10 on CUDA, 2 on CPU
  std::optional<int> resolution;    // vision input side in pixels; default 224
  std::optional<int> seq_len;       // language models: tokens per sample; default 1024
  std::string data = "synthetic";   // "synthetic" or an ImageFolder directory
  int workers = 0;                  // data-loading threads (ImageFolder only)
  bool channels_last = false;       // NHWC activations and weights (convolutional models), as plan's flag
  int accumulate = 1;               // micro-batches per optimizer step
  std::optional<double> clip_norm;  // gradient-norm clipping threshold
  int distributed = 1;              // data-parallel processes on this machine
  std::optional<std::int64_t> memory_limit_bytes;  // allocator limit for --batch auto (injected on CPU)
  std::optional<int> threads;                      // intra-op CPU threads (torch::set_num_threads)
  std::uint64_t seed = 0;

  // Filled by validate():
  std::vector<int> batches;  // empty with batch_auto
  bool batch_auto = false;
};

// Registers the options (MODEL positional, --device, --batch, …) on `app`. `--format` and `--out` belong
// to each front end.
void add_bench_options(CLI::App& app, BenchOptions& options);

// Checks what can be checked without a device and parses --batch. Throws InputError naming the bad value.
void validate(BenchOptions& options);
// Device-dependent checks and defaults, once the device is known (fp16/tf32 need CUDA, …).
void resolve_for_device(BenchOptions& options, DeviceKind device);

// The command line that reproduces `options` (what `gpusage bench` passes to gpusage-bench).
std::vector<std::string> to_arguments(const BenchOptions& options);

}  // namespace gpusage::bench
