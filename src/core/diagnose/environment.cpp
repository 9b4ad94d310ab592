#include "core/diagnose/environment.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/common/text.hpp"
#include "core/device/query.hpp"

namespace gpusage::diagnose {

namespace {

bool is_executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// Runs argv with stdout captured and stdin/stderr on /dev/null, in its own process group so that a
// deadline kills whatever it started too (a python that spawned helpers). Never waits past the deadline.
CommandResult run_with_deadline(const std::vector<std::string>& argv, double timeout_s) {
  CommandResult result;
  if (argv.empty()) return result;
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return result;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the kill below cannot race the child's own call
  ::close(out_pipe[1]);
  result.started = true;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  auto remaining_ms = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return static_cast<int>(left < 0 ? 0 : left);
  };
  char buffer[4096];
  bool eof = false;
  while (!eof) {
    const int wait_ms = remaining_ms();
    if (wait_ms == 0) break;
    pollfd fd{out_pipe[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) break;  // deadline
    const ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      eof = true;
    }
  }
  ::close(out_pipe[0]);
  // Output closed: give the process what is left of the deadline to exit, then stop it.
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      reaped = true;
      break;
    }
    if (done < 0) break;
    if (remaining_ms() == 0) break;
    ::usleep(2000);
  }
  if (!reaped) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  if (!eof && !reaped) result.timed_out = true;
  if (reaped && WIFEXITED(status) && WEXITSTATUS(status) == 127 && result.out.empty()) result.started = false;
  return result;
}

class HostEnvironment : public Environment {
 public:
  explicit HostEnvironment(HostOptions options) : options_(std::move(options)) {
    if (options_.search_path.empty()) {
      if (const char* path = std::getenv("PATH")) options_.search_path = text::split(path, ':');
    }
  }

  device::SystemInfo gpus() override { return device::query_system(options_.nvml); }

  std::optional<std::string> read_file(const std::string& path) override {
    std::ifstream in(options_.root + path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::optional<std::string> find_program(const std::string& name, const std::vector<std::string>& extra_dirs) override {
    if (name.find('/') != std::string::npos) {
      if (is_executable(name)) return name;
      return std::nullopt;
    }
    for (const auto& dir : options_.search_path) {
      if (dir.empty()) continue;
      const std::string candidate = dir + "/" + name;
      if (is_executable(candidate)) return candidate;
    }
    for (const auto& dir : extra_dirs) {
      const std::string candidate = options_.root + dir + "/" + name;
      if (is_executable(candidate)) return candidate;
    }
    return std::nullopt;
  }

  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override {
    return run_with_deadline(argv, timeout_s);
  }

  std::optional<std::string> getenv(const std::string& name) override {
    if (const char* value = std::getenv(name.c_str())) return std::string(value);
    return std::nullopt;
  }

 private:
  HostOptions options_;
};

}  // namespace

std::unique_ptr<Environment> open_host_environment(const HostOptions& options) {
  return std::make_unique<HostEnvironment>(options);
}

std::optional<std::string> ScriptedEnvironment::read_file(const std::string& path) {
  auto it = files.find(path);
  if (it == files.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ScriptedEnvironment::find_program(const std::string& name,
                                                             const std::vector<std::string>& extra_dirs) {
  if (auto it = programs.find(name); it != programs.end()) return it->second;
  for (const auto& dir : extra_dirs) {
    const std::string path = dir + "/" + name;
    for (const auto& [n, p] : programs) {
      if (p == path) return p;
    }
  }
  if (name.find('/') != std::string::npos) {
    for (const auto& [n, p] : programs) {
      if (p == name) return p;
    }
  }
  return std::nullopt;
}

CommandResult ScriptedEnvironment::run(const std::vector<std::string>& argv, double /*timeout_s*/) {
  static std::mutex mutex;  // probe() runs the python probe on its own thread
  const std::lock_guard<std::mutex> lock(mutex);
  runs.push_back(argv);
  if (argv.empty()) return {};
  const std::string key = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
  auto it = commands.find(key);
  if (it == commands.end()) return {};
  return it->second;
}

std::optional<std::string> ScriptedEnvironment::getenv(const std::string& name) {
  auto it = variables.find(name);
  if (it == variables.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpusage::diagnose
