// The watchdog of `gpusage run --hang-after SECONDS`: a run that prints nothing for that long is hung, whatever
// its GPUs do. Ranks waiting in an NCCL collective for a rank that died or took another path keep their GPUs at
// 100% utilization (the collective's kernel spins on a flag) while drawing little power (NVIDIA/nccl#968: "the
// GPU util is 100% but the power consumption is pretty low"), so utilization cannot tell a hang from work.
// What the GPUs did in the silence says where to look: busy at low power, most likely a collective waiting on
// another rank; idle, a wait on the host side (a DataLoader, a filesystem, a CPU barrier); busy at full
// power, work that prints nothing. The finding also says what each process of the run's tree is doing
// (/proc's state letter and wait channel) and the last lines it printed. Pure but for describe_processes,
// which reads /proc.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/device/types.hpp"
#include "core/diagnose/finding.hpp"

namespace gpusage::run {

// A sample's GPU counts as active at this utilization or above (NVML's percent of time a kernel ran).
inline constexpr double kGpuActiveUtilizationPercent = 5;
// A busy GPU drawing less than this share of its enforced power limit is spinning rather than computing: a
// collective's wait kernel occupies a few SMs polling memory (NVIDIA/nccl#968 reports ~70 W on cards limited to
// 300-400 W; Theano/libgpuarray#387 "pegged at 100%" with "the power consumption ... at idle"), where a training
// step's GEMMs draw most of the limit.
inline constexpr double kSpinningPowerFraction = 0.35;

class HangWatch {
 public:
  explicit HangWatch(double after_s) : after_s_(after_s) {}
  // Seconds without output when they reached the limit and the hang was not yet announced; none otherwise.
  // Times are one monotonic clock. A quiet spell is announced once: new output re-arms it.
  std::optional<double> due(double now_s, double last_output_s);
  double after_s() const { return after_s_; }

 private:
  double after_s_;
  double announced_for_ = -1;  // the start of the quiet spell already announced
};

// What the run's GPUs did during the quiet spell: the median of their utilization readings, and of their power
// over the enforced limit where both are read.
struct GpuActivity {
  std::size_t readings = 0;  // GPU readings with a utilization
  std::optional<double> utilization_percent;
  std::optional<double> power_fraction;
};
GpuActivity gpu_activity(const std::vector<device::GpuSample>& readings);

enum class QuietGpus { not_read, idle, spinning, computing };
QuietGpus classify(const GpuActivity& activity);

// The collective debug settings the finding recommends, NAME=VALUE (PyTorch's ProcessGroupNCCL environment
// variables, https://docs.pytorch.org/docs/stable/torch_nccl_environment_variables.html; NCCL's logging,
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/logging.html).
const std::vector<std::string>& collective_debug_settings();

struct HangEvidence {
  double quiet_s = 0;
  double after_s = 0;
  GpuActivity gpus;
  std::vector<std::string> processes;  // describe_processes
  std::deque<std::string> last_lines;
  // The names of collective_debug_settings() the run's environment sets already: not recommended again.
  std::vector<std::string> settings_already_set;
  bool killing = false;  // --kill-on-hang
};

diagnose::Finding hang_finding(const HangEvidence& evidence);

// "pid 4242 python3: S (sleeping), waiting in futex_wait_queue" for each process of `pids` still readable
// under `proc_root`.
std::vector<std::string> describe_processes(const std::vector<unsigned>& pids, const std::string& proc_root = "/proc");

// The state letter of a /proc/PID/stat line, spelled out: "S (sleeping)".
std::string state_text(char state);

}  // namespace gpusage::run
