// Host CPU and memory from /proc (Linux). Utilisations are rates, so a reader keeps the previous counters:
// the first reading of a CPU figure is empty, later ones cover the time since the previous call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/device/types.hpp"

namespace gpusage::device {

class HostReader {
 public:
  // `proc_root` is "/proc" on a live system; tests point it at a fixture directory.
  explicit HostReader(std::string proc_root = "/proc");

  // CPU utilisation since the previous call (empty on the first), core count, memory.
  HostSample read();

  // Per-process CPU use in percent of one core since the previous call for the same pid (empty the first
  // time, or when the process cannot be read). Pids not asked for are forgotten.
  std::map<unsigned, std::optional<double>> process_cpu(const std::vector<unsigned>& pids, double now_s);

  // /proc/PID/comm, empty when unreadable.
  std::string process_name(unsigned pid) const;

 private:
  struct CpuTicks {
    std::uint64_t busy = 0;
    std::uint64_t total = 0;
  };
  struct ProcTicks {
    std::uint64_t ticks = 0;
    double time_s = 0;
  };
  std::string root_;
  std::optional<CpuTicks> last_cpu_;
  std::map<unsigned, ProcTicks> last_proc_;
  double ticks_per_s_;
};

// This process and machine, for the benchmark (Linux /proc).
std::string cpu_model_name();  // /proc/cpuinfo "model name", "unknown CPU" when absent
int logical_cpus();
std::optional<std::int64_t> available_memory_bytes();  // /proc/meminfo MemAvailable

// Peak resident set tracking: reset_peak_rss() makes VmHWM equal to the current RSS (Linux >= 4.0,
// /proc/self/clear_refs "5") after returning free heap memory to the system (malloc_trim);
// peak_rss_bytes() reads VmHWM. Empty when /proc does not allow it.
bool reset_peak_rss();
std::optional<std::int64_t> current_rss_bytes();
std::optional<std::int64_t> peak_rss_bytes();

}  // namespace gpusage::device
