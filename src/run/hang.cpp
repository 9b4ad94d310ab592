#include "run/hang.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/common/i18n.hpp"
#include "core/common/stats.hpp"

namespace gpusage::run {

std::optional<double> HangWatch::due(double now_s, double last_output_s) {
  if (now_s - last_output_s < after_s_ || last_output_s == announced_for_) return std::nullopt;
  announced_for_ = last_output_s;
  return now_s - last_output_s;
}

GpuActivity gpu_activity(const std::vector<device::GpuSample>& readings) {
  GpuActivity a;
  std::vector<double> utilization, power;
  for (const auto& g : readings) {
    if (g.utilization_gpu_percent) utilization.push_back(*g.utilization_gpu_percent);
    if (g.power_w && g.power_limit_w && *g.power_limit_w > 0) power.push_back(*g.power_w / *g.power_limit_w);
  }
  a.readings = utilization.size();
  if (!utilization.empty()) a.utilization_percent = stats::median(utilization);
  if (!power.empty()) a.power_fraction = stats::median(power);
  return a;
}

QuietGpus classify(const GpuActivity& a) {
  if (!a.utilization_percent) return QuietGpus::not_read;
  if (*a.utilization_percent < kGpuActiveUtilizationPercent) return QuietGpus::idle;
  if (a.power_fraction && *a.power_fraction < kSpinningPowerFraction) return QuietGpus::spinning;
  return QuietGpus::computing;
}

const std::vector<std::string>& collective_debug_settings() {
  // TORCH_NCCL_TRACE_BUFFER_SIZE > 0 turns on the flight recorder (the last collectives of each rank, in a ring
  // buffer); TORCH_NCCL_DUMP_ON_TIMEOUT=1 dumps it when the watchdog times out (it needs the buffer);
  // TORCH_NCCL_DESYNC_DEBUG=1 names the rank that did not join; NCCL_DEBUG=INFO logs NCCL's own view.
  static const std::vector<std::string> settings = {"TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "TORCH_NCCL_DUMP_ON_TIMEOUT=1",
                                                    "TORCH_NCCL_DESYNC_DEBUG=1", "NCCL_DEBUG=INFO"};
  return settings;
}

std::string state_text(char state) {
  switch (state) {  // proc(5), /proc/PID/stat field 3
    case 'R': return "R (running)";
    case 'S': return "S (sleeping)";
    case 'D': return "D (uninterruptible wait, usually I/O)";
    case 'Z': return "Z (zombie)";
    case 'T': return "T (stopped)";
    case 't': return "t (stopped by a debugger)";
    case 'I': return "I (idle)";
    default: return std::string(1, state);
  }
}

std::vector<std::string> describe_processes(const std::vector<unsigned>& pids, const std::string& proc_root) {
  std::vector<std::string> out;
  for (unsigned pid : pids) {
    const std::string dir = fmt::format("{}/{}", proc_root, pid);
    std::ifstream stat_file(dir + "/stat");
    std::string stat;
    if (!std::getline(stat_file, stat)) continue;  // exited meanwhile
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) continue;
    std::string line =
        fmt::format("pid {} {}: {}", pid, stat.substr(open + 1, close - open - 1), state_text(stat[close + 2]));
    std::ifstream wchan_file(dir + "/wchan");
    std::string wchan;
    if (std::getline(wchan_file, wchan) && !wchan.empty() && wchan != "0") line += ", waiting in " + wchan;
    out.push_back(std::move(line));
  }
  return out;
}

namespace {

// "busy at low power (median 100% utilization at 10% of the power limit)"
std::string gpus_text(const GpuActivity& a, QuietGpus kind) {
  const std::string power =
      a.power_fraction ? i18n::trf(" at {:.0f}% of the power limit", *a.power_fraction * 100) : "";
  switch (kind) {
    case QuietGpus::not_read: return i18n::tr("GPUs not read");
    case QuietGpus::idle: return i18n::trf("GPUs idle (median {:.0f}% utilization{})", *a.utilization_percent, power);
    case QuietGpus::spinning:
      return i18n::trf("GPUs busy at low power (median {:.0f}% utilization{})", *a.utilization_percent, power);
    case QuietGpus::computing:
      return i18n::trf("GPUs busy (median {:.0f}% utilization{})", *a.utilization_percent, power);
  }
  return "";
}

// The settings the run does not set yet, joined for a shell line; empty when it sets them all.
std::string settings_to_add(const std::vector<std::string>& already_set) {
  std::string out;
  for (const auto& s : collective_debug_settings()) {
    const std::string name = s.substr(0, s.find('='));
    if (std::find(already_set.begin(), already_set.end(), name) == already_set.end())
      out += (out.empty() ? "" : " ") + s;
  }
  return out;
}

std::string collective_fix(const std::vector<std::string>& already_set) {
  const std::string add = settings_to_add(already_set);
  const std::string debug =
      add.empty()
          ? i18n::tr(
                "The run already sets NCCL's and PyTorch's debug settings: read each rank's flight-recorder dump "
                "(TORCH_NCCL_DEBUG_INFO_TEMP_FILE) and its NCCL INFO lines for the collective one rank never "
                "joined.")
          : i18n::trf(
                "Rerun with {}: PyTorch's flight recorder then keeps each rank's last collectives and dumps "
                "them when its watchdog times out, and the rank whose sequence number stops short is the one to "
                "look at.",
                add);
  return i18n::trf(
      "Most likely a collective (all-reduce, all-gather, barrier) waiting for a rank that died, hung or took "
      "another code path: NCCL's kernel spins at full utilization without drawing power. {} `py-spy dump --pid "
      "PID` on each rank shows the Python line it waits on.",
      debug);
}

const char* kHostWaitFix = i18n::N_(
    "A wait on the host side: see where with `py-spy dump --pid PID` for a Python process, or `gdb -p PID -batch "
    "-ex 'thread apply all bt'`. A DataLoader deadlock: num_workers=0 confirms it. State D: a stuck read from a "
    "network filesystem. A rank waiting in a CPU-side barrier or store (gloo, torch.distributed's TCPStore) for "
    "another looks the same: NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL name it.");

const char* kComputingFix = i18n::N_(
    "The GPUs kept computing without a line of output: a long evaluation, a step longer than --hang-after, or a "
    "kernel that never ends. If the work is real, raise --hang-after above the longest silent phase or print "
    "progress; otherwise `py-spy dump --pid PID` shows where the program is.");

}  // namespace

diagnose::Finding hang_finding(const HangEvidence& e) {
  const QuietGpus kind = classify(e.gpus);
  diagnose::Finding f;
  f.id = "run-hang";
  f.severity = diagnose::Severity::error;
  f.category = diagnose::Category::gpu;
  f.title = i18n::trf("no output for {:.1f} s (--hang-after {:g}), {}{}", e.quiet_s, e.after_s, gpus_text(e.gpus, kind),
                      e.killing ? i18n::tr(": gpusage ended the run's process group (--kill-on-hang)") : "");
  std::string evidence = i18n::tr("The run's processes:");
  for (const auto& p : e.processes) evidence += "\n  " + p;
  if (e.processes.empty()) evidence += i18n::tr(" none readable");
  evidence += i18n::tr("\nIts last lines:");
  for (const auto& l : e.last_lines) evidence += "\n  " + l;
  if (e.last_lines.empty()) evidence += i18n::tr(" none");
  f.evidence = evidence;
  switch (kind) {
    case QuietGpus::spinning: f.fix = collective_fix(e.settings_already_set); break;
    case QuietGpus::idle: f.fix = i18n::tr(kHostWaitFix); break;
    case QuietGpus::computing: f.fix = i18n::tr(kComputingFix); break;
    case QuietGpus::not_read: f.fix = i18n::tr(kHostWaitFix) + " " + collective_fix(e.settings_already_set); break;
  }
  f.source_title =
      "proc(5): /proc/PID/stat state and /proc/PID/wchan; PyTorch ProcessGroupNCCL environment variables; "
      "NVIDIA/nccl#968";
  f.source_url = "https://docs.pytorch.org/docs/stable/torch_nccl_environment_variables.html";
  return f;
}

}  // namespace gpusage::run
