// The CUDA-only parts of the bench behind a plain interface. cuda_support.cpp implements them with
// LibTorch's CUDA headers when the LibTorch found has CUDA (GPUSAGE_BENCH_CUDA), and as "unavailable"
// stubs otherwise, so the same sources build against Debian's CPU LibTorch 1.13 and a CUDA LibTorch 2.x.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpusage::bench::cuda {

bool compiled();  // this build has the CUDA code paths

struct DeviceInfo {
  std::string name;
  std::int64_t total_memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::optional<std::string> driver_cuda_version;   // newest CUDA the driver supports, "12.4"
  std::optional<std::string> runtime_cuda_version;  // CUDA runtime LibTorch runs on
  std::optional<std::string> cudnn_version;
};
DeviceInfo device_info(int device_index);

struct MemoryPeak {
  std::int64_t allocated_bytes = 0;
  std::int64_t reserved_bytes = 0;
};
void set_device(int device_index);
void reset_peak_memory(int device_index);
MemoryPeak peak_memory(int device_index);
void empty_cache();
// Caps the caching allocator at `bytes` of the device (setMemoryFraction): trials above it fail with
// LibTorch's own out-of-memory error.
void set_memory_limit(int device_index, std::int64_t bytes);

}  // namespace gpusage::bench::cuda
