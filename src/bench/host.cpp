#include "bench/host.hpp"

#include <malloc.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace gpusage::bench {
namespace {

// A "Key:   123 kB" line of a /proc file, in bytes.
std::optional<std::int64_t> proc_kb(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::int64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

int logical_cpus() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::optional<std::int64_t> available_memory_bytes() { return proc_kb("/proc/meminfo", "MemAvailable"); }

bool reset_peak_rss() {
  // Give freed heap memory back first: otherwise a trial reuses what the previous one left in malloc's
  // free lists and its growth reads too low.
  ::malloc_trim(0);
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::optional<std::int64_t> current_rss_bytes() { return proc_kb("/proc/self/status", "VmRSS"); }
std::optional<std::int64_t> peak_rss_bytes() { return proc_kb("/proc/self/status", "VmHWM"); }

}  // namespace gpusage::bench
