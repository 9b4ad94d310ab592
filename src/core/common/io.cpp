#include "core/common/io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.hpp"

namespace gpusage::io {

namespace {

std::string describe(std::string_view what, const std::string& path) {
  return what.empty() ? fmt::format("'{}'", path) : fmt::format("{} '{}'", what, path);
}

}  // namespace

std::string read_file(const std::string& path, std::string_view what, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("{} is a directory; give a file", describe(what, path)));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw InputError(fmt::format("{} is {} bytes; accepted: up to {} bytes ({} MiB)", describe(what, path), size,
                                 max_bytes, max_bytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {}", describe(what, path)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("cannot read {}", describe(what, path)));
  return text.str();
}

std::optional<std::string> try_read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file_atomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp_template = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = mkstemp(temp_template.data());
  if (fd < 0) {
    throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  }
  std::size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(temp_template.c_str());
      throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; an output file should carry the usual permissions.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp_template.c_str());
    throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  }
  if (std::rename(temp_template.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp_template.c_str());
    throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
}

}  // namespace gpusage::io
