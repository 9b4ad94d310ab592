#include "core/common/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

extern char** environ;

namespace gpusage::process {

Result run(const Options& options) {
  Result result;
  if (options.argv.empty()) return result;
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return result;
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : options.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (options.environment) {
    for (const auto& e : *options.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char* const* child_environment = options.environment ? envp.data() : environ;
  const int captured_fd = options.capture == Stream::standard_output ? STDOUT_FILENO : STDERR_FILENO;
  const int other_fd = options.capture == Stream::standard_output ? STDERR_FILENO : STDOUT_FILENO;

  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return result;
  }
  if (pid == 0) {
    if (options.detached) {
      ::setpgid(0, 0);
      const int null_fd = ::open("/dev/null", O_RDWR);
      if (null_fd >= 0) {
        ::dup2(null_fd, STDIN_FILENO);
        ::dup2(null_fd, other_fd);
      }
    }
    ::dup2(out_pipe[1], captured_fd);
    ::execve(args[0], args.data(), child_environment);
    ::_exit(127);
  }
  if (options.detached) ::setpgid(pid, pid);  // also here, so the kill below cannot race the child's own call
  ::close(out_pipe[1]);
  result.started = true;

  using clock = std::chrono::steady_clock;
  const auto deadline = options.timeout_s ? clock::now() + std::chrono::duration_cast<clock::duration>(
                                                               std::chrono::duration<double>(*options.timeout_s))
                                          : clock::time_point::max();
  auto remaining_ms = [&]() -> int {
    if (!options.timeout_s) return -1;  // poll: no timeout
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return static_cast<int>(left < 0 ? 0 : left);
  };
  char buffer[4096];
  bool any_output = false;
  for (;;) {
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
      const std::string_view chunk(buffer, static_cast<std::size_t>(n));
      any_output = true;
      if (options.on_output) {
        options.on_output(chunk);
      } else {
        result.output.append(chunk);
      }
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out_pipe[0]);
  // Output closed: give the process what is left of the deadline to exit, then stop it.
  int status = 0;
  bool reaped = false;
  if (!options.timeout_s) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
  }
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
    ::kill(options.detached ? -pid : pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  // 127 with no output is the exec failing in the child (the shell's convention for "not found").
  if (reaped && result.exit_code == 127 && !any_output) result.started = false;
  return result;
}

}  // namespace gpusage::process
