#include "bench/cuda_support.hpp"

#include <stdexcept>

#if GPUSAGE_BENCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#endif

namespace gpusage::bench::cuda {

#if GPUSAGE_BENCH_CUDA

namespace {
std::string cuda_version_text(int version) {  // 12040 -> "12.4"
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}
}  // namespace

bool compiled() { return true; }

DeviceInfo device_info(int device_index) {
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(device_index);
  DeviceInfo info;
  info.name = props->name;
  info.total_memory_bytes = static_cast<std::int64_t>(props->totalGlobalMem);
  info.compute_capability_major = props->major;
  info.compute_capability_minor = props->minor;
  int version = 0;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0)
    info.driver_cuda_version = cuda_version_text(version);
  if (cudaRuntimeGetVersion(&version) == cudaSuccess && version > 0)
    info.runtime_cuda_version = cuda_version_text(version);
  const long cudnn = at::detail::getCUDAHooks().versionCuDNN();
  if (cudnn > 0) info.cudnn_version = std::to_string(cudnn);
  return info;
}

void set_device(int device_index) { c10::cuda::set_device(static_cast<c10::DeviceIndex>(device_index)); }

void reset_peak_memory(int device_index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index));
}

MemoryPeak peak_memory(int device_index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index));
  // Entry 0 is StatType::AGGREGATE (all pools). The enum moved from c10::cuda::CUDACachingAllocator to
  // c10::CachingAllocator in LibTorch 2.6, so it is not named here; its first entry has stayed the aggregate.
  constexpr std::size_t aggregate = 0;
  return {stats.allocated_bytes[aggregate].peak, stats.reserved_bytes[aggregate].peak};
}

void empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

void set_memory_limit(int device_index, std::int64_t bytes) {
  const auto total = static_cast<double>(device_info(device_index).total_memory_bytes);
  const double fraction = std::clamp(static_cast<double>(bytes) / total, 0.0, 1.0);
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, static_cast<c10::DeviceIndex>(device_index));
}

#else

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("this gpusage-bench was built against a LibTorch without CUDA");
}
}  // namespace

bool compiled() { return false; }
DeviceInfo device_info(int) { unavailable(); }
void set_device(int) { unavailable(); }
void reset_peak_memory(int) { unavailable(); }
MemoryPeak peak_memory(int) { unavailable(); }
void empty_cache() {}
void set_memory_limit(int, std::int64_t) { unavailable(); }

#endif

}  // namespace gpusage::bench::cuda
