// One reading of the machine per call: GPUs from a device::GpuBackend (NVML or a replayed trace), host CPU and
// memory from /proc, and the host CPU use of each GPU process (a starved data loader shows as a process whose
// CPU is pegged while its GPU idles).
#pragma once

#include <memory>

#include "core/common/time.hpp"
#include "core/device/backend.hpp"
#include "core/device/host.hpp"

namespace gpusage::monitor {

class Sampler {
 public:
  explicit Sampler(std::unique_ptr<device::GpuBackend> backend, device::HostReader host = device::HostReader());

  const device::SystemInfo& system() { return backend_->system(); }
  // Reads everything once. CPU figures are rates since the previous call (empty on the first; see prime()).
  device::Sample next();
  // Takes the baseline for CPU rates, so that the next reading has them (used by --once after a short wait).
  void prime();
  bool exhausted() const { return backend_->exhausted(); }

 private:
  std::unique_ptr<device::GpuBackend> backend_;
  device::HostReader host_;
};

// The wall clock as seconds since the Unix epoch (the log writer and the run supervisor stamp samples with it).
using wallclock::unix_now_s;

}  // namespace gpusage::monitor
