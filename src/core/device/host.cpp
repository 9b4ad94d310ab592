#include "core/device/host.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

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
      host.cpu_percent = 100.0 * static_cast<double>(now.busy - last_cpu_->busy) /
                         static_cast<double>(now.total - last_cpu_->total);
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
    if (auto last = last_proc_.find(pid); last != last_proc_.end() && now_s > last->second.time_s &&
                                          current.ticks >= last->second.ticks)
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

}  // namespace gpusage::device
