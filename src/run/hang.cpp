#include "run/hang.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace gpusage::run {

std::optional<double> HangWatch::due(double now_s, double last_output_s,
                                     std::optional<double> last_gpu_active_s) {
  const double quiet_since = std::max(last_output_s, last_gpu_active_s.value_or(last_output_s));
  if (now_s - quiet_since < after_s_ || quiet_since == announced_for_) return std::nullopt;
  announced_for_ = quiet_since;
  return now_s - quiet_since;
}

std::string state_text(char state) {
  switch (state) {  // proc(5), /proc/PID/stat field 3
    case 'R':
      return "R (running)";
    case 'S':
      return "S (sleeping)";
    case 'D':
      return "D (uninterruptible wait, usually I/O)";
    case 'Z':
      return "Z (zombie)";
    case 'T':
      return "T (stopped)";
    case 't':
      return "t (stopped by a debugger)";
    case 'I':
      return "I (idle)";
    default:
      return std::string(1, state);
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
    std::string line = fmt::format("pid {} {}: {}", pid, stat.substr(open + 1, close - open - 1),
                                   state_text(stat[close + 2]));
    std::ifstream wchan_file(dir + "/wchan");
    std::string wchan;
    if (std::getline(wchan_file, wchan) && !wchan.empty() && wchan != "0") line += ", waiting in " + wchan;
    out.push_back(std::move(line));
  }
  return out;
}

diagnose::Finding hang_finding(double quiet_s, double after_s, const std::vector<std::string>& processes,
                               const std::deque<std::string>& last_lines, bool killing) {
  diagnose::Finding f;
  f.id = "run-hang";
  f.severity = diagnose::Severity::error;
  f.category = diagnose::Category::gpu;
  f.title = fmt::format("no output and no GPU activity for {:.1f} s (--hang-after {:g}){}", quiet_s, after_s,
                        killing ? ": gpusage ended the run's process group (--kill-on-hang)" : "");
  std::string evidence = "The run's processes:";
  for (const auto& p : processes) evidence += "\n  " + p;
  if (processes.empty()) evidence += " none readable";
  evidence += "\nIts last lines:";
  for (const auto& l : last_lines) evidence += "\n  " + l;
  if (last_lines.empty()) evidence += " none";
  f.evidence = evidence;
  f.fix =
      "See where it waits: `py-spy dump --pid PID` for a Python process, or `gdb -p PID -batch -ex 'thread "
      "apply all "
      "bt'`. A collective that never returns: rerun with NCCL_DEBUG=INFO and "
      "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 "
      "(a rank died or diverged). A DataLoader deadlock: num_workers=0 confirms it. State D: a stuck read "
      "from a "
      "network filesystem.";
  f.source_title = "proc(5): /proc/PID/stat state and /proc/PID/wchan";
  return f;
}

}  // namespace gpusage::run
