#include "report/output_file.hpp"

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

namespace gpusage::report {

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

std::string read_input_file(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read '{}'", option, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpusage::report
