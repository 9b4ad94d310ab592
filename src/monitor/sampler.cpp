#include "monitor/sampler.hpp"

#include <chrono>

namespace gpusage::monitor {

Sampler::Sampler(std::unique_ptr<device::GpuBackend> backend, device::HostReader host)
    : backend_(std::move(backend)), host_(std::move(host)) {}

void Sampler::prime() {
  host_.read();
  std::vector<unsigned> pids;
  for (const auto& gpu : backend_->sample())
    for (const auto& p : gpu.processes) pids.push_back(p.pid);
  host_.process_cpu(pids, unix_now_s());
}

device::Sample Sampler::next() {
  const device::SystemInfo& info = backend_->system();
  device::Sample s;
  s.backend = info.backend;
  s.gpu_available = info.available;
  s.gpu_message = info.message;
  s.driver_version = info.driver_version;
  s.cuda_driver_version = info.cuda_driver_version;
  s.gpus = backend_->sample();
  s.unix_time_s = unix_now_s();
  if (auto recorded = backend_->recorded_host()) {
    s.host = *recorded;  // a replayed trace keeps its own host readings and process CPU figures
    return s;
  }
  s.host = host_.read();
  std::vector<unsigned> pids;
  for (const auto& gpu : s.gpus)
    for (const auto& p : gpu.processes) pids.push_back(p.pid);
  auto cpu = host_.process_cpu(pids, s.unix_time_s);
  for (auto& gpu : s.gpus)
    for (auto& p : gpu.processes) {
      p.cpu_percent = cpu[p.pid];
      if (p.name.empty()) p.name = host_.process_name(p.pid);
    }
  return s;
}

}  // namespace gpusage::monitor
