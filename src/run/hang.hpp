// The watchdog of `gpusage run --hang-after SECONDS`: a run that prints nothing and whose GPUs do nothing for
// that long is hung (a collective waiting on a dead rank, a DataLoader deadlock, a stuck filesystem read).
// The finding says what each process of the run's tree is doing (/proc's state letter and wait channel) and
// the last lines it printed. Pure but for describe_processes, which reads /proc.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"

namespace gpusage::run {

// A sample's GPU counts as active at this utilization or above (NVML's percent of time a kernel ran).
inline constexpr double kGpuActiveUtilizationPercent = 5;

class HangWatch {
 public:
  explicit HangWatch(double after_s) : after_s_(after_s) {}
  // Seconds of quiet (no output, no GPU activity) when they reached the limit and the hang was not yet
  // announced; none otherwise. Times are one monotonic clock; `last_gpu_active_s` is none when the GPUs were
  // never active (or are not read). A quiet spell is announced once: new output or GPU activity re-arms it.
  std::optional<double> due(double now_s, double last_output_s, std::optional<double> last_gpu_active_s);
  double after_s() const { return after_s_; }

 private:
  double after_s_;
  double announced_for_ = -1;  // the start of the quiet spell already announced
};

// "pid 4242 python3: S (sleeping), waiting in futex_wait_queue" for each process of `pids` still readable
// under `proc_root`.
std::vector<std::string> describe_processes(const std::vector<unsigned>& pids,
                                            const std::string& proc_root = "/proc");

// The state letter of a /proc/PID/stat line, spelled out: "S (sleeping)".
std::string state_text(char state);

diagnose::Finding hang_finding(double quiet_s, double after_s, const std::vector<std::string>& processes,
                               const std::deque<std::string>& last_lines, bool killing);

}  // namespace gpusage::run
