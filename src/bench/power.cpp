#include "bench/power.hpp"

#include <chrono>

#include "core/device/backend.hpp"

namespace gpusage::bench {

PowerSampler::PowerSampler(unsigned gpu_index) : index_(gpu_index), backend_(device::open_nvml_backend()) {
  const device::SystemInfo& system = backend_->system();
  available_ = system.available;
  note_ = available_ ? "" : "NVML unavailable: " + system.message;
}

PowerSampler::~PowerSampler() { stop(); }

void PowerSampler::start() {
  if (!available_ || running_) return;
  sum_w_ = 0;
  count_ = 0;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void PowerSampler::loop() {
  while (running_) {
    for (const auto& sample : backend_->sample()) {
      if (sample.index != index_) continue;
      std::lock_guard lock(mutex_);
      if (sample.power_w) {
        sum_w_ += *sample.power_w;
        ++count_;
      }
      if (sample.throttle_mask) throttle_mask_ |= *sample.throttle_mask;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::optional<double> PowerSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (count_ == 0) return std::nullopt;
  return sum_w_ / count_;
}

}  // namespace gpusage::bench
