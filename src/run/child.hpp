// The child's side of `gpusage run`: starting it (on a pseudo-terminal or pipes, in its own process group),
// routing gpusage's signals into the poll loop, the raw terminal while the child owns a pty, and blocking
// writes. Split from the supervisor so that its loop reads as the run's policy, not its system calls.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <termios.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gpusage::run {

// Routes SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGWINCH into a self-pipe (read_fd), so the poll loop sees them
// in order with the child's output; SIGPIPE is ignored while it lives (a closed stdout is an error value, not
// gpusage's death). The previous handlers come back on destruction.
class SignalRoute {
 public:
  SignalRoute();
  ~SignalRoute();
  SignalRoute(const SignalRoute&) = delete;
  SignalRoute& operator=(const SignalRoute&) = delete;
  int read_fd = -1;

 private:
  int write_fd_ = -1;
  std::map<int, struct sigaction> old_;
  struct sigaction old_pipe_ {};
};

// Puts the terminal on stdin in raw mode while the child owns a pseudo-terminal (its own line discipline
// does the echo, line editing and Ctrl-C), and restores it on every way out.
class RawTerminal {
 public:
  explicit RawTerminal(bool enable) {
    if (!enable || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    raw.c_oflag |= OPOST;  // gpusage's own lines still end with "\r\n" on the screen
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

// Blocking write of everything (a non-blocking descriptor is waited on with poll). false when the reader
// went away (EPIPE) or the descriptor failed.
bool write_all(int fd, const char* data, std::size_t size);
inline bool write_all(int fd, const std::string& text) { return write_all(fd, text.data(), text.size()); }

double monotonic_s();

struct Spawned {
  pid_t pid = -1;
  int out_fd = -1;  // pty master, or the stdout pipe
  int err_fd = -1;  // the stderr pipe (pipe mode only)
  bool pty = false;
};

// Starts the child. Everything it needs is prepared before fork: between fork and exec only async-signal-safe
// calls run (the Prometheus thread may hold locks). An exec failure comes back through a close-on-exec pipe
// and is thrown as InputError.
Spawned spawn(const std::string& path, const std::vector<std::string>& command, bool use_pty);

}  // namespace gpusage::run
