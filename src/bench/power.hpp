// Average GPU power over the timed region, sampled from NVML (core/device, loaded with dlopen) on a
// background thread every 100 ms (BENCHMARKING.md: at least 1 Hz). Also logs clock throttling seen.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gpusage::device {
class GpuBackend;
}

namespace gpusage::bench {

class PowerSampler {
 public:
  explicit PowerSampler(unsigned gpu_index);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  bool available() const { return available_; }
  const std::string& note() const { return note_; }  // why power is unavailable

  void start();
  // Stops sampling; the mean of the power readings since start(), empty when there were none.
  std::optional<double> stop();
  // Throttle reasons seen while sampling (NVML bit mask, 0 when none).
  std::uint64_t throttle_mask() const { return throttle_mask_; }

 private:
  void loop();

  unsigned index_;
  std::unique_ptr<device::GpuBackend> backend_;
  bool available_ = false;
  std::string note_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  double sum_w_ = 0;
  int count_ = 0;
  std::uint64_t throttle_mask_ = 0;
};

}  // namespace gpusage::bench
