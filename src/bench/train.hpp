// The benchmark's entry points into LibTorch, behind a plain interface: main.cpp and the tests of the
// non-torch logic include this without compiling LibTorch's headers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bench/bench_options.hpp"
#include "bench/result.hpp"
#include "pipeline/image_folder.hpp"

namespace gpusage::bench {

// Gradient exchange between data-parallel processes (distributed.hpp makes one over c10d).
class Communicator;

struct TrialConfig {
  BenchOptions options;  // resolved for the device (resolve_for_device)
  int batch = 1;         // per process, per micro-batch
  int steps = 1;         // timed optimizer steps
  int warmup = 0;        // untimed steps first
  int device_index = 0;  // CUDA device of this process
  bool channels_last = false;
  std::optional<std::int64_t> memory_limit_bytes;  // CPU: peak RSS growth above this counts as out of memory
  Communicator* communicator = nullptr;            // null: one process
  // --data DIR: the scanned folder (scanned once per run); null: synthetic batches.
  std::shared_ptr<const pipeline::ImageFolder> folder;
  // Called after every step (warm-up included) with the step index and the total.
  std::function<void(int step, int total, const TrialResult& so_far)> progress;
};

// Trains `options.model` for warmup + steps steps and measures it. Never throws for an out-of-memory
// error, a non-finite loss or a LibTorch error: they come back as a failed TrialResult with the reason
// (the memory is released before returning). Throws InputError for a bad option.
TrialResult run_trial(const TrialConfig& config);

struct TorchEnvironment {
  std::string libtorch_version;
  bool cuda_available = false;
  int cuda_devices = 0;
  std::string device_name;
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::optional<std::string> cudnn_version;
  std::optional<std::int64_t> device_memory_bytes;
  int torch_threads = 0;
};
TorchEnvironment torch_environment(DeviceKind device, int device_index = 0);

// Joins the c10d process group of `world` processes on this machine: a TCPStore on 127.0.0.1:`port`
// (rank 0 serves it), Gloo on CPU, NCCL on CUDA. Throws std::runtime_error when the backend is missing.
std::shared_ptr<Communicator> connect_process_group(DeviceKind device, int rank, int world, int port);
bool distributed_available(DeviceKind device);

void set_torch_threads(int threads);
bool cuda_available();
// Parameters of a model of the zoo at the given shape (builds it on the CPU, does not run it).
std::int64_t model_parameter_count(const std::string& id, int resolution, int seq_len);

}  // namespace gpusage::bench
