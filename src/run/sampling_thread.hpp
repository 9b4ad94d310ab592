// The sampling side of `gpusage run`: its own thread, so a slow NVML call never holds up the child's output.
// Each interval it samples the GPUs the run's process tree uses, evaluates the monitor's alerts, appends to
// gpu.jsonl, publishes /metrics, and wakes the poll loop (wake_fd) when there is something to say.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "monitor/alerts.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/prometheus_server.hpp"
#include "monitor/sampler.hpp"
#include "run/summary.hpp"

namespace gpusage::run {

// The sampling side: its own thread, so a slow NVML call never holds up the child's output.
class SamplingThread {
 public:
  SamplingThread(monitor::Sampler& sampler, monitor::AlertEngine& alerts, monitor::LogWriter& log,
                 monitor::PrometheusServer* prometheus, double interval_s, pid_t child, int wake_fd)
      : sampler_(sampler),
        alerts_(alerts),
        log_(log),
        prometheus_(prometheus),
        interval_s_(interval_s),
        child_(child),
        wake_fd_(wake_fd) {
    thread_ = std::thread([this] { loop(); });
  }
  ~SamplingThread() { stop(); }
  SamplingThread(const SamplingThread&) = delete;
  SamplingThread& operator=(const SamplingThread&) = delete;

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<monitor::Alert> take_raised() {
    std::lock_guard lock(mutex_);
    return std::exchange(pending_, {});
  }
  // Lines for the user from the sampling side (a disk fault on gpu.jsonl), once each.
  std::vector<std::string> take_notes() {
    std::lock_guard lock(mutex_);
    return std::exchange(notes_, {});
  }
  // Exposition lines published after the monitor's on /metrics (the run's prediction, throughput and MFU).
  void set_run_metrics(std::string text) {
    std::lock_guard lock(mutex_);
    run_metrics_ = std::move(text);
  }
  // The run's GPUs' utilization over the last samples (the median of each sample's mean), when NVML reads it.
  std::optional<double> recent_utilization_percent() const;
  // The run's GPUs' readings in the samples taken since `since_s` (monotonic_s), or in the last sample when
  // none was taken since (an interval longer than the quiet spell): what the GPUs did while the output was silent.
  std::vector<device::GpuSample> gpu_readings_since(double since_s) const;
  // After stop().
  std::vector<RecordedSample>& samples() { return samples_; }
  const std::vector<monitor::Alert>& raised() const { return raised_; }
  bool matched() const { return matched_; }
  std::string error() const { return error_; }

 private:
  void loop();

  monitor::Sampler& sampler_;
  monitor::AlertEngine& alerts_;
  monitor::LogWriter& log_;
  monitor::PrometheusServer* prometheus_;
  double interval_s_;
  pid_t child_;
  int wake_fd_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool matched_ = false;
  std::vector<RecordedSample> samples_;
  std::vector<monitor::Alert> raised_, pending_;
  std::vector<std::string> notes_;
  std::string error_;
  std::string run_metrics_;
  std::vector<double> sample_times_s_;  // monotonic_s of each of samples_
};

}  // namespace gpusage::run
