#include "core/device/host.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpusage::device {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

HostReader::HostReader(std::string proc_root) : root_(std::move(proc_root)) {
  long ticks = ::sysconf(_SC_CLK_TCK);
  ticks_per_s_ = ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

HostSample HostReader::read() {
  HostSample host;
  // /proc/stat: "cpu user nice system idle iowait irq softirq steal guest guest_nice" (proc(5)); guest time is
  // already counted in user, so only the first eight fields are summed. Idle = idle + iowait.
  std::ifstream stat(root_ + "/stat");
  std::string line;
  unsigned cores = 0;
  bool have_total = false;
  CpuTicks now;
  while (std::getline(stat, line)) {
    if (line.rfind("cpu", 0) != 0) continue;
    if (line.size() > 3 && line[3] == ' ') {
      std::istringstream fields(line.substr(3));
      std::uint64_t v[8] = {};
      for (auto& x : v) fields >> x;
      if (fields) {
        now.total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
        now.busy = now.total - v[3] - v[4];
        have_total = true;
      }
    } else {
      ++cores;
    }
  }
  if (cores > 0) host.cpu_count = cores;
  if (have_total) {
    if (last_cpu_ && now.total > last_cpu_->total)
      host.cpu_percent =
          100.0 * static_cast<double>(now.busy - last_cpu_->busy) / static_cast<double>(now.total - last_cpu_->total);
    last_cpu_ = now;
  }
  // /proc/meminfo in kB (KiB). "Used" is MemTotal - MemAvailable, as free(1) computes it.
  std::ifstream meminfo(root_ + "/meminfo");
  std::optional<std::uint64_t> total_kib, available_kib;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    fields >> key >> kib;
    if (!fields) continue;
    if (key == "MemTotal:") total_kib = kib;
    if (key == "MemAvailable:") available_kib = kib;
  }
  if (total_kib) host.memory_total_bytes = *total_kib * 1024;
  if (total_kib && available_kib && *available_kib <= *total_kib)
    host.memory_used_bytes = (*total_kib - *available_kib) * 1024;
  return host;
}

std::map<unsigned, std::optional<double>> HostReader::process_cpu(const std::vector<unsigned>& pids, double now_s) {
  std::map<unsigned, std::optional<double>> out;
  std::map<unsigned, ProcTicks> seen;
  for (unsigned pid : pids) {
    if (out.count(pid)) continue;
    out[pid] = std::nullopt;
    // /proc/PID/stat: fields 14 and 15 are utime and stime in clock ticks; the command name (field 2) may
    // contain spaces, so parsing starts after its closing parenthesis.
    std::string line = read_first_line(root_ + "/" + std::to_string(pid) + "/stat");
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 1));
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    if (!fields) continue;
    ProcTicks current{utime + stime, now_s};
    if (auto last = last_proc_.find(pid);
        last != last_proc_.end() && now_s > last->second.time_s && current.ticks >= last->second.ticks)
      out[pid] = 100.0 * static_cast<double>(current.ticks - last->second.ticks) / ticks_per_s_ /
                 (now_s - last->second.time_s);
    seen[pid] = current;
  }
  last_proc_ = std::move(seen);
  return out;
}

std::string HostReader::process_name(unsigned pid) const {
  return read_first_line(root_ + "/" + std::to_string(pid) + "/comm");
}

namespace {

// A "Key:   123 kB" line of a /proc file, in bytes.
std::optional<std::int64_t> proc_status_bytes(const char* path, const std::string& key) {
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

std::optional<std::int64_t> available_memory_bytes() { return proc_status_bytes("/proc/meminfo", "MemAvailable"); }

bool reset_peak_rss() {
  // Give freed heap memory back first: otherwise a trial reuses what the previous one left in malloc's
  // free lists and its growth reads too low.
  ::malloc_trim(0);
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::optional<std::int64_t> current_rss_bytes() { return proc_status_bytes("/proc/self/status", "VmRSS"); }
std::optional<std::int64_t> peak_rss_bytes() { return proc_status_bytes("/proc/self/status", "VmHWM"); }

}  // namespace gpusage::device
