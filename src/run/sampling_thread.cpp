#include "run/sampling_thread.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/common/stats.hpp"
#include "monitor/views.hpp"
#include "run/child.hpp"
#include "run/process_tree.hpp"

namespace gpusage::run {

std::optional<double> SamplingThread::recent_utilization_percent() const {
  constexpr std::size_t kRecent = 10;
  std::lock_guard lock(mutex_);
  std::vector<double> means;
  for (std::size_t i = samples_.size() > kRecent ? samples_.size() - kRecent : 0; i < samples_.size(); ++i) {
    double sum = 0;
    int count = 0;
    for (const auto& gpu : samples_[i].sample.gpus)
      if (gpu.utilization_gpu_percent) {
        sum += *gpu.utilization_gpu_percent;
        ++count;
      }
    if (count > 0) means.push_back(sum / count);
  }
  if (means.empty()) return std::nullopt;
  return stats::median(means);
}

std::vector<device::GpuSample> SamplingThread::gpu_readings_since(double since_s) const {
  std::lock_guard lock(mutex_);
  std::vector<device::GpuSample> out;
  for (std::size_t i = 0; i < samples_.size(); ++i)
    if (sample_times_s_[i] >= since_s)
      out.insert(out.end(), samples_[i].sample.gpus.begin(), samples_[i].sample.gpus.end());
  if (out.empty() && !samples_.empty()) out = samples_.back().sample.gpus;
  return out;
}

void SamplingThread::loop() {
  try {
    sampler_.prime();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::min(0.1, interval_s_));
    const auto step =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s_));
    while (true) {
      {
        std::unique_lock lock(mutex_);
        if (wake_.wait_until(lock, deadline, [this] { return stop_; })) {
          if (!samples_.empty()) return;
          // A run shorter than the first interval still gets one reading of the host (and GPUs).
        }
      }
      const auto tree = descendants(static_cast<unsigned>(child_), read_parents());
      GpuSelection selection = select_run_gpus(sampler_.next(), tree);
      monitor::AlertEngine::Update update = alerts_.evaluate(selection.sample);
      log_.write(selection.sample, update.active);
      std::optional<std::string> log_warning = log_.take_warning();
      if (prometheus_) {
        std::string extra;
        {
          std::lock_guard lock(mutex_);
          extra = run_metrics_;
        }
        prometheus_->publish(monitor::prometheus_text(selection.sample, update.active) + extra);
      }
      {
        std::lock_guard lock(mutex_);
        matched_ = matched_ || selection.matched;
        sample_times_s_.push_back(monotonic_s());
        samples_.push_back({std::move(selection.sample), update.active});
        raised_.insert(raised_.end(), update.raised.begin(), update.raised.end());
        pending_.insert(pending_.end(), update.raised.begin(), update.raised.end());
        if (log_warning) notes_.push_back(std::move(*log_warning));
      }
      if (!update.raised.empty() || log_warning) {
        const char byte = 1;
        (void)!::write(wake_fd_, &byte, 1);
      }
      {
        std::lock_guard lock(mutex_);
        if (stop_) return;
      }
      deadline += step;
      const auto now = std::chrono::steady_clock::now();
      if (deadline < now) deadline = now;  // fell behind (slow NVML): do not burst
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    error_ = e.what();
  }
}

}  // namespace gpusage::run
