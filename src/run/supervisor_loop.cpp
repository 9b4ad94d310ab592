#include "run/supervisor_loop.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/catalog/catalog.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "monitor/views.hpp"
#include "run/plausibility.hpp"
#include "run/process_tree.hpp"
#include "run/throughput.hpp"

namespace gpusage::run {

namespace {

// "gpusage: warning [id]: title Fix: fix": a finding as it is announced while the run lasts.
std::string finding_line(const diagnose::Finding& f) {
  return i18n::trf("gpusage: {} [{}]: {}{}", diagnose::severity_label(f.severity), f.id, f.title,
                   f.fix.empty() ? "" : i18n::trf(" Fix: {}", f.fix));
}

}  // namespace

WakePipe::WakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  read_fd = fds[0];
  write_fd = fds[1];
}

WakePipe::~WakePipe() {
  ::close(read_fd);
  ::close(write_fd);
}

SupervisorLoop::SupervisorLoop(const RunRequest& request, const RunResources& resources)
    : request_(request),
      res_(resources),
      watch_(request.context),
      practice_(practice_of(request)),
      stderr_tty_(::isatty(STDERR_FILENO) == 1) {
  if (*res_.expectation) card_ = catalog::Catalog::active().find((*res_.expectation)->expectation().gpu_id);
  const bool use_pty = ::isatty(STDOUT_FILENO) == 1 && !request.output_to_stderr;
  const bool forward_stdin = use_pty;  // in pipe mode the child reads gpusage's stdin itself
  child_ = spawn(res_.executable, request.command, use_pty);
  started_mono_s_ = monotonic_s();
  raw_.emplace(use_pty && ::isatty(STDIN_FILENO) == 1);
  sampling_.emplace(*res_.sampler, *res_.alerts, *res_.gpu_log, res_.prometheus, request.interval_s, child_.pid,
                    wake_.write_fd);
  std::optional<ExpectationWatch>& expectation = *res_.expectation;
  if (expectation) sampling_->set_run_metrics(prometheus_expectation(expectation->expectation(), std::nullopt));
  if (request.hang_after_s) state_.hang.emplace(*request.hang_after_s);
  auto& streams = state_.streams;
  streams[0].from = child_.out_fd;
  streams[0].to = request.output_to_stderr ? STDERR_FILENO : STDOUT_FILENO;
  streams[0].open = true;
  if (child_.err_fd >= 0) {
    streams[1].from = child_.err_fd;
    streams[1].to = STDERR_FILENO;
    streams[1].open = true;
  }
  state_.stdin_open = forward_stdin;
  if (child_.pty) ::fcntl(child_.out_fd, F_SETFL, ::fcntl(child_.out_fd, F_GETFL) | O_NONBLOCK);
  state_.last_output_s = monotonic_s();
}

std::vector<pollfd> SupervisorLoop::poll_set() const {
  std::vector<pollfd> fds;
  fds.push_back({signals_.read_fd, POLLIN, 0});
  fds.push_back({wake_.read_fd, POLLIN, 0});
  for (const auto& s : state_.streams)
    if (s.open) fds.push_back({s.from, POLLIN, 0});
  // Typed input waits in `to_child` while the child does not read it; gpusage never blocks on the pty for it.
  if (state_.stdin_open && state_.to_child.size() < 65536) fds.push_back({STDIN_FILENO, POLLIN, 0});
  if (!state_.to_child.empty() && state_.streams[0].open) fds.push_back({child_.out_fd, POLLOUT, 0});
  return fds;
}

int SupervisorLoop::poll_timeout_ms() const {
  int timeout_ms = state_.pending.empty() && !state_.wait_status ? 1000 : 200;
  if (state_.hang) timeout_ms = std::min(timeout_ms, std::max(20, static_cast<int>(state_.hang->after_s() * 250)));
  return timeout_ms;
}

void SupervisorLoop::run() {
  while (true) {
    const bool outputs_open =
        std::any_of(state_.streams.begin(), state_.streams.end(), [](const Stream& s) { return s.open; });
    // A child that exited can still have bytes in flight (read until EOF); a grandchild that kept the output
    // open is not waited for beyond a second of quiet.
    if (state_.wait_status &&
        (!outputs_open || monotonic_s() - std::max(state_.last_output_s, state_.exited_at_s) >= 1.0))
      break;
    std::vector<pollfd> fds = poll_set();
    int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll: " + std::string(std::strerror(errno)));

    for (const auto& p : fds) {
      if (p.events == POLLOUT) {
        if (p.revents & POLLOUT) on_child_writable();
        continue;
      }
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == signals_.read_fd) {
        on_signals();
      } else if (p.fd == wake_.read_fd) {
        on_wake();
      } else if (p.fd == STDIN_FILENO) {
        on_input();
      } else {
        for (auto& s : state_.streams)
          if (s.open && s.from == p.fd) on_output(s);
      }
    }
    scan_log(false);
    check_hang();
    enforce_stop();
    for (auto& note : res_.notify->take_notes()) say(std::move(note));
    flush_pending(false);
  }
}

double SupervisorLoop::finish() {
  const double wall_s = (state_.wait_status ? state_.exited_at_s : monotonic_s()) - started_mono_s_;
  for (auto& s : state_.streams)
    if (s.open) {
      take_lines(s.lines.finish());
      ::close(s.from);
      s.open = false;
    }
  if (!state_.wait_status) {  // unreachable in practice: the loop ends only after the child was reaped
    int status = 0;
    ::waitpid(child_.pid, &status, 0);
    state_.wait_status = status;
  }
  sampling_->stop();
  announce_alerts();
  scan_log(true);
  flush_pending(true);
  return wall_s;
}

void SupervisorLoop::on_child_writable() {
  ssize_t n = ::write(child_.out_fd, state_.to_child.data(), state_.to_child.size());
  if (n > 0) state_.to_child.erase(0, static_cast<std::size_t>(n));
}

void SupervisorLoop::on_signals() {
  unsigned char sig[64];
  ssize_t n = ::read(signals_.read_fd, sig, sizeof sig);
  for (ssize_t i = 0; i < n; ++i) on_signal(sig[i]);
}

void SupervisorLoop::on_signal(int signo) {
  switch (signo) {
    case SIGCHLD: {
      int status = 0;
      if (!state_.wait_status && ::waitpid(child_.pid, &status, WNOHANG) == child_.pid) {
        state_.wait_status = status;
        state_.exited_at_s = monotonic_s();
      }
      break;
    }
    case SIGINT:
      interrupt();
      forward(SIGINT);
      break;
    case SIGWINCH: {
      winsize size{};
      if (child_.pty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) ::ioctl(child_.out_fd, TIOCSWINSZ, &size);
      break;
    }
    default: forward(signo);
  }
}

void SupervisorLoop::on_wake() {
  char drain[64];
  while (::read(wake_.read_fd, drain, sizeof drain) > 0) {
  }
  announce_alerts();
}

void SupervisorLoop::on_input() {
  ssize_t n = ::read(STDIN_FILENO, buffer_.data(), buffer_.size());
  if (n > 0) {
    // In raw mode Ctrl-C arrives as a byte: the pty turns it into SIGINT for the child's group.
    if (std::memchr(buffer_.data(), 0x03, static_cast<std::size_t>(n))) interrupt();
    state_.to_child.append(buffer_.data(), static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    state_.stdin_open = false;
    if (child_.pty) {
      termios mode{};
      const char eof = ::tcgetattr(child_.out_fd, &mode) == 0 ? static_cast<char>(mode.c_cc[VEOF]) : '\x04';
      state_.to_child.push_back(eof);  // end of input, as a terminal user would type it
    }
  }
}

void SupervisorLoop::on_output(Stream& s) {
  ssize_t n = ::read(s.from, buffer_.data(), buffer_.size());
  if (n > 0) {
    const auto size = static_cast<std::size_t>(n);
    bool& gone = s.to == STDOUT_FILENO ? state_.stdout_gone : state_.stderr_gone;
    if (!gone) gone = !write_all(s.to, buffer_.data(), size);
    res_.train_log->write(std::string_view(buffer_.data(), size));
    if (auto warning = res_.train_log->take_warning()) say(*warning);
    // A '\r' ends a progress bar's redraw: a line of ours may follow it (and clears the bar's rest).
    s.at_line_start = buffer_[size - 1] == '\n' || buffer_[size - 1] == '\r';
    state_.last_output_s = monotonic_s();
    take_lines(s.lines.feed(std::string_view(buffer_.data(), size)));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {  // EOF, or EIO from a pty whose side closed
    s.open = false;
    take_lines(s.lines.finish());
    ::close(s.from);
  }
}

void SupervisorLoop::take_lines(const std::vector<std::string>& lines) {
  const double now = monitor::unix_now_s();
  std::optional<ExpectationWatch>& expectation = *res_.expectation;
  for (const auto& line : lines) {
    if (auto t = parse_throughput(line)) {
      state_.throughput.push_back({now, *t});
      if (request_.stop_after_steps && static_cast<int>(state_.throughput.size()) >= *request_.stop_after_steps)
        stop_run("steps");
      if (expectation) {
        // A reading no card can deliver is said once and kept out of the comparison and the MFU.
        if (auto implausible = implausible_reading(expectation->expectation(), card_, *t)) {
          if (!state_.implausible_said) {
            state_.implausible_said = true;
            say(finding_line(*implausible));
            res_.notify->finding(*implausible);
            state_.live_findings.push_back(std::move(*implausible));
          }
        } else if (auto f = expectation->add(now, *t, sampling_->recent_utilization_percent())) {
          say(finding_line(*f));
          res_.notify->finding(*f);
          state_.live_findings.push_back(std::move(*f));
        }
        sampling_->set_run_metrics(
            prometheus_expectation(expectation->expectation(), expectation->last_samples_per_s()));
      }
    }
    if (!text::trim(line).empty()) {
      state_.last_lines.push_back(line);
      if (state_.last_lines.size() > 5) state_.last_lines.pop_front();
    }
    watch_.add(line);
  }
}

void SupervisorLoop::scan_log(bool now) {
  const double t = monotonic_s();
  if (!now && t - state_.last_scan_s < 1.0) return;
  state_.last_scan_s = t;
  for (auto f : watch_.scan())
    if (f.severity == diagnose::Severity::error || f.severity == diagnose::Severity::warning) {
      drop_followed_advice(f, practice_);
      say(finding_line(f));
      res_.notify->finding(f);
    }
}

void SupervisorLoop::announce_alerts() {
  const double now = monotonic_s();
  for (auto& note : sampling_->take_notes()) say(std::move(note));
  for (const auto& a : sampling_->take_raised()) {
    // Flapping: once a minute at most per rule and GPU (per XID number for XID events).
    const std::string key = fmt::format("{}/{}/{}", monitor::to_string(a.kind), a.gpu, a.xid.value_or(0));
    auto it = state_.last_said.find(key);
    if (it != state_.last_said.end() && now - it->second < 60) continue;
    state_.last_said[key] = now;
    say(i18n::trf("gpusage: alert: {}", a.message));
    res_.notify->alert(a, now);
  }
}

void SupervisorLoop::check_hang() {
  if (!state_.hang || state_.wait_status) return;
  // Silence is the hang, whatever the GPUs do: ranks waiting in a collective keep theirs at 100% (hang.hpp).
  const auto quiet_s = state_.hang->due(monotonic_s(), state_.last_output_s);
  if (!quiet_s) return;
  const auto tree = descendants(static_cast<unsigned>(child_.pid), read_parents());
  HangEvidence e;
  e.quiet_s = *quiet_s;
  e.after_s = state_.hang->after_s();
  e.gpus = gpu_activity(sampling_->gpu_readings_since(state_.last_output_s));
  e.processes = describe_processes(std::vector<unsigned>(tree.begin(), tree.end()));
  e.last_lines = state_.last_lines;
  // The child has gpusage's environment: a debug setting already there is not recommended again.
  for (const auto& setting : collective_debug_settings()) {
    const std::string name = setting.substr(0, setting.find('='));
    if (std::getenv(name.c_str())) e.settings_already_set.push_back(name);
  }
  e.killing = request_.kill_on_hang;
  diagnose::Finding f = hang_finding(e);
  say(i18n::trf("gpusage: {} [{}]: {}", diagnose::severity_label(f.severity), f.id, f.title));
  for (const auto& line : text::split(f.evidence, '\n')) say("gpusage:   " + line);
  res_.notify->finding(f);
  state_.live_findings.push_back(std::move(f));
  if (request_.kill_on_hang) stop_run("hang");
}

void SupervisorLoop::enforce_stop() {
  if (state_.wait_status) return;
  const double now = monotonic_s();
  if (state_.kill_after_s && now >= *state_.kill_after_s) {
    ::kill(-child_.pid, SIGKILL);
    state_.kill_after_s.reset();
    say(i18n::trf("gpusage: the run's group outlived SIGTERM ({}) by 5 s: killed it (SIGKILL)", *state_.stopped_by));
  }
  if (request_.time_limit_s && now - started_mono_s_ >= *request_.time_limit_s) stop_run("time-limit");
}

void SupervisorLoop::flush_pending(bool force) {
  auto& streams = state_.streams;
  if (state_.pending.empty()) return;
  const bool at_start =
      std::all_of(streams.begin(), streams.end(), [](const Stream& s) { return !s.open || s.at_line_start; });
  const bool quiet = monotonic_s() - state_.last_output_s >= 1.0;
  if (!at_start && !quiet && !force) return;
  std::string text = at_start ? "" : "\n";  // the child's line stays whole; ours starts below it
  for (const auto& line : state_.pending) text += (stderr_tty_ ? "\r\x1b[K" : "") + line + "\n";
  state_.pending.clear();
  if (!state_.stderr_gone) state_.stderr_gone = !write_all(STDERR_FILENO, text.data(), text.size());
  // After a forced break, the child's next bytes continue on a fresh line.
  for (auto& s : streams) s.at_line_start = true;
}

// gpusage ends the run itself (a hang, --stop-after-steps, the time limit): SIGTERM to the group, SIGKILL 5 s
// later if it is still there.
void SupervisorLoop::stop_run(const char* why) {
  if (state_.wait_status || state_.stopped_by) return;
  ::kill(-child_.pid, SIGTERM);
  state_.kill_after_s = monotonic_s() + 5;
  state_.stopped_by = why;
}

// A second Ctrl-C within 3 s kills the run's group.
void SupervisorLoop::interrupt() {
  const double now = monotonic_s();
  if (now - state_.last_interrupt_s <= 3.0 && !state_.wait_status) {
    ::kill(-child_.pid, SIGKILL);
    say("gpusage: second Ctrl-C within 3 s: killed the run's process group");
  }
  state_.last_interrupt_s = now;
}

void SupervisorLoop::forward(int signo) {
  if (!state_.wait_status) ::kill(-child_.pid, signo);
}

}  // namespace gpusage::run
