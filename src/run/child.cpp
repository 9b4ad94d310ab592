#include "run/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "core/common/error.hpp"

namespace gpusage::run {

namespace {

// ---- signals: a self-pipe, so the poll loop sees them in order with the child's output ----
int g_signal_pipe = -1;

extern "C" void on_signal(int signo) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  if (g_signal_pipe >= 0) (void)!::write(g_signal_pipe, &byte, 1);
  errno = saved;
}

constexpr std::array<int, 5> kHandled = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH};

}  // namespace

SignalRoute::SignalRoute() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  read_fd = fds[0];
  write_fd_ = fds[1];
  g_signal_pipe = write_fd_;
  for (int s : kHandled) {
    struct sigaction a {};
    a.sa_handler = on_signal;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESTART;
    ::sigaction(s, &a, &old_[s]);
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &old_pipe_);  // a closed stdout is an error value, not our death
}
SignalRoute::~SignalRoute() {
  for (int s : kHandled) ::sigaction(s, &old_[s], nullptr);
  ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  g_signal_pipe = -1;
  ::close(read_fd);
  ::close(write_fd_);
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
    } else {
      return false;
    }
  }
  return true;
}

double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Spawned spawn(const std::string& path, const std::vector<std::string>& command, bool use_pty) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);  // no handler runs in the child before the reset below

  Spawned s;
  s.pty = use_pty;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (use_pty) {
    termios mode{};
    termios* mode_ptr = ::tcgetattr(STDIN_FILENO, &mode) == 0 ? &mode : nullptr;
    winsize size{};
    winsize* size_ptr = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 ? &size : nullptr;
    s.pid = ::forkpty(&s.out_fd, nullptr, mode_ptr, size_ptr);  // the child: a new session and process group
  } else {
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
    s.pid = ::fork();
  }
  if (s.pid == 0) {
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);  // SIG_IGN would survive exec
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!use_pty) {
      ::setpgid(0, 0);
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
    }
    ::execv(path.c_str(), argv.data());
    const int error = errno;
    (void)!::write(status_pipe[1], &error, sizeof error);
    ::_exit(error == ENOENT ? 127 : 126);
  }
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(status_pipe[1]);
  if (!use_pty) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    s.out_fd = out_pipe[0];
    s.err_fd = err_pipe[0];
  }
  if (s.pid < 0) {
    ::close(status_pipe[0]);
    throw std::runtime_error(fmt::format("cannot start {}: {}", command.front(), std::strerror(fork_errno)));
  }
  if (!use_pty) ::setpgid(s.pid, s.pid);  // both sides set it: no race with an early signal
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(status_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    ::waitpid(s.pid, &status, 0);
    if (s.out_fd >= 0) ::close(s.out_fd);
    if (s.err_fd >= 0) ::close(s.err_fd);
    throw InputError(fmt::format("cannot run '{}': {}", command.front(), std::strerror(exec_errno)));
  }
  return s;
}

}  // namespace gpusage::run
