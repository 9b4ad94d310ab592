#include "monitor/append_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/common/error.hpp"

namespace gpusage::monitor {

AppendFile::AppendFile(std::string path, Open mode, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (mode == Open::truncate ? O_TRUNC : 0);
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0)
    throw InputError(fmt::format("{} '{}': cannot open for appending: {}", what_, path_, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd_, &info) == 0) end_ = boundary_ = static_cast<std::size_t>(info.st_size);
}

AppendFile::~AppendFile() {
  if (fd_ < 0) return;
  if (cut_pending_) (void)::ftruncate(fd_, static_cast<off_t>(boundary_));
  ::fdatasync(fd_);
  ::close(fd_);
}

void AppendFile::sync() {
  if (!failing_) ::fdatasync(fd_);
}

bool AppendFile::append(std::string_view bytes, std::size_t whole, double now_s) {
  if (failing_ && now_s < retry_at_s_) return false;
  if (cut_pending_) {
    if (::ftruncate(fd_, static_cast<off_t>(boundary_)) != 0) {
      fail(errno, now_s);
      return false;
    }
    cut_pending_ = false;
    end_ = boundary_;
  }
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A short write (n > 0) is not an error by itself: the next write reports why it stopped.
      const int error = n < 0 ? errno : EIO;
      end_ += bytes.size() - left;
      fail(error, now_s);
      return false;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  boundary_ = end_ + std::min(whole, bytes.size());
  end_ += bytes.size();
  failing_ = false;
  backoff_s_ = kFirstBackoffS;
  return true;
}

void AppendFile::fail(int error, double now_s) {
  // With O_APPEND the next write lands at the (cut-back) end of the file, wherever this one stopped.
  if (end_ != boundary_) {
    if (::ftruncate(fd_, static_cast<off_t>(boundary_)) == 0)
      end_ = boundary_;
    else
      cut_pending_ = true;
  }
  retry_at_s_ = now_s + backoff_s_;
  backoff_s_ = std::min(backoff_s_ * 2, kLastBackoffS);
  failing_ = true;
  if (warned_) return;
  warned_ = true;
  warning_ = fmt::format(
      "gpusage: warning: {} '{}': write failed ({}); the log is cut back to its last whole "
      "record, everything else keeps running, and the log is retried every {:g} to {:g} s",
      what_, path_, std::strerror(error), kFirstBackoffS, kLastBackoffS);
}

}  // namespace gpusage::monitor
