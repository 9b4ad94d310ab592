#include "monitor/log_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "monitor/sampler.hpp"
#include "monitor/views.hpp"

namespace gpusage::monitor {

LogFormat log_format_for(const std::string& path) {
  std::string ext = text::to_lower(std::filesystem::path(path).extension().string());
  if (ext == ".csv") return LogFormat::csv;
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return LogFormat::json_lines;
  throw InputError(fmt::format("--log '{}': cannot tell the format from the extension; use .csv, or .jsonl for "
                               "JSON Lines", path));
}

LogWriter::LogWriter(const std::string& path, double sync_interval_s)
    : path_(path), format_(log_format_for(path)), sync_interval_s_(sync_interval_s) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("--log '{}': cannot open for appending: {}", path, std::strerror(errno)));
  struct stat info {};
  if (format_ == LogFormat::csv && ::fstat(fd_, &info) == 0 && info.st_size == 0) write_all(csv_header());
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
  }
}

void LogWriter::write_all(const std::string& text) {
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("--log '{}': write failed: {}", path_, std::strerror(errno)));
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

void LogWriter::write(const device::Sample& sample, const std::vector<Alert>& alerts) {
  write_all(format_ == LogFormat::csv ? csv_rows(sample) : sample_json(sample, alerts).dump() + "\n");
  double now = unix_now_s();
  if (now - last_sync_s_ >= sync_interval_s_) {
    ::fdatasync(fd_);
    last_sync_s_ = now;
  }
}

}  // namespace gpusage::monitor
