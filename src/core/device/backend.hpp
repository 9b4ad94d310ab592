// Hardware behind one interface: NVML (loaded at run time) and a replay of a recorded trace implement
// GpuBackend, so `--simulate`, the tests (through a scripted NVML library) and real GPUs share one path.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/device/types.hpp"

namespace gpusage::device {

// The machine-wide facts a backend knows without sampling.
struct SystemInfo {
  std::string backend;                             // "nvml", "replay"
  bool available = false;                          // false: no driver / library / devices could be read
  std::string message;                             // one line saying why it is unavailable (empty when available)
  std::optional<std::string> driver_version;       // "550.54.15"
  std::optional<CudaVersion> cuda_driver_version;  // the newest CUDA the driver supports
  std::vector<GpuInfo> gpus;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // Identity, versions and per-GPU static facts; cheap after the first call (probed once).
  virtual const SystemInfo& system() = 0;
  // One reading of every GPU. Empty when the backend is unavailable. Fills every field the hardware
  // supports; GpuProcess::cpu_percent is left for the caller (it is host data).
  virtual std::vector<GpuSample> sample() = 0;
  // A replayed trace carries its own host readings; live backends return nullopt.
  virtual std::optional<HostSample> recorded_host() { return std::nullopt; }
  // A replayed trace ends; live hardware never does.
  virtual bool exhausted() const { return false; }
};

struct NvmlOptions {
  // Library to load. Empty: $GPUSAGE_NVML_LIBRARY if set, else libnvidia-ml.so.1, then libnvidia-ml.so.
  std::string library_path;
};

// Never throws for a missing driver: the backend reports available() == false with a one-line message.
std::unique_ptr<GpuBackend> open_nvml_backend(const NvmlOptions& options = {});

// Replays a JSON Lines trace as written by `gpusage monitor --format json` (or `--log x.jsonl`), one line per
// sample, in order. Throws InputError naming the file and line when it cannot be read or parsed.
std::unique_ptr<GpuBackend> open_replay_backend(const std::string& path);

}  // namespace gpusage::device
