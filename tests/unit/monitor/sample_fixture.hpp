// A hand-built sample for the view and alert tests (the NVML path is tested with the scripted library).
#pragma once

#include "core/device/types.hpp"

namespace gpusage::testing {

inline device::GpuSample training_gpu(unsigned index = 0) {
  device::GpuSample g;
  g.index = index;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.uuid = "GPU-" + std::to_string(index);
  g.utilization_gpu_percent = 95;
  g.utilization_memory_percent = 50;
  g.memory_used_bytes = 40ULL << 30;
  g.memory_total_bytes = 80ULL << 30;
  g.temperature_c = 60;
  g.power_w = 300.25;
  g.power_limit_w = 400.0;
  g.throttle_mask = 0;
  g.ecc_corrected_volatile = 0;
  g.ecc_uncorrected_volatile = 0;
  g.processes.push_back({4242, "python3", 30ULL << 30, 100.0});
  return g;
}

inline device::Sample sample_at(double t, std::vector<device::GpuSample> gpus) {
  device::Sample s;
  s.unix_time_s = t;
  s.backend = "nvml";
  s.gpu_available = true;
  s.driver_version = "550.54.15";
  s.cuda_driver_version = device::CudaVersion{12, 4};
  s.host.cpu_percent = 25.0;
  s.host.cpu_count = 8;
  s.host.memory_used_bytes = 8ULL << 30;
  s.host.memory_total_bytes = 64ULL << 30;
  s.gpus = std::move(gpus);
  return s;
}

}  // namespace gpusage::testing
