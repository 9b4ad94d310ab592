// gpusage-portable carries ncurses, which reads the terminal's description from the system's terminfo
// database. A bare container or chroot has none, and `gpusage monitor`'s interactive view would fail with
// "Error opening terminal". Before main, when standard output is a terminal, $TERM is set and no database
// folder has its entry, the entry built in (cmake/EmbedTerminfo.cmake) is written to a private folder and
// $TERMINFO points there. Elsewhere nothing is written and nothing changes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "portable/terminfo_entries.hpp"

namespace gpusage::portable {

namespace {

// ncurses' layout: DIR/x/xterm (first letter), or DIR/78/xterm on file systems that fold case.
bool has_entry(const std::string& dir, const std::string& term) {
  if (dir.empty()) return false;
  char hex[3];
  std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(term[0]));
  return ::access((dir + "/" + term[0] + "/" + term).c_str(), R_OK) == 0 ||
         ::access((dir + "/" + hex + "/" + term).c_str(), R_OK) == 0;
}

// The folders ncurses searches: $TERMINFO, ~/.terminfo, $TERMINFO_DIRS, then the ones compiled into Debian's
// libtinfo (--with-terminfo-dirs=/etc/terminfo:/lib/terminfo:/usr/share/terminfo) and /usr/lib/terminfo.
bool system_has_entry(const std::string& term) {
  std::vector<std::string> dirs;
  if (const char* v = std::getenv("TERMINFO")) dirs.emplace_back(v);
  if (const char* home = std::getenv("HOME")) dirs.push_back(std::string(home) + "/.terminfo");
  if (const char* v = std::getenv("TERMINFO_DIRS")) {
    std::string list = v;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const char* d : {"/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo"})
    dirs.emplace_back(d);
  for (const auto& dir : dirs) {
    if (has_entry(dir, term)) return true;
  }
  return false;
}

// A folder only this user can write ($XDG_RUNTIME_DIR's, or one in /tmp that is ours and not a link).
std::string private_dir() {
  std::string base;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime) {
    base = std::string(runtime) + "/gpusage-terminfo";
  } else {
    base = "/tmp/gpusage-terminfo-" + std::to_string(::getuid());
  }
  ::mkdir(base.c_str(), 0700);
  struct stat st {};
  if (::lstat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) return {};
  return base;
}

bool write_entry(const std::string& dir, const TerminfoEntry& entry) {
  const std::string sub = dir + "/" + entry.name[0];
  ::mkdir(sub.c_str(), 0700);
  const std::string path = sub + "/" + entry.name;
  const std::string temp = path + ".tmp" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool written = ::write(fd, entry.data, entry.size) == static_cast<ssize_t>(entry.size);
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

[[gnu::constructor]] void install_terminfo_fallback() {
  const char* term = std::getenv("TERM");
  if (!term || !*term || std::strchr(term, '/') || !::isatty(STDOUT_FILENO)) return;
  if (system_has_entry(term)) return;
  for (std::size_t i = 0; i < kTerminfoEntryCount; ++i) {
    const TerminfoEntry& entry = kTerminfoEntries[i];
    if (std::strcmp(entry.name, term) != 0) continue;
    const std::string dir = private_dir();
    if (!dir.empty() && write_entry(dir, entry)) ::setenv("TERMINFO", dir.c_str(), 1);
    return;
  }
}

}  // namespace

}  // namespace gpusage::portable
