#include "run/supervisor.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/log_scan.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/prometheus_server.hpp"
#include "monitor/sampler.hpp"
#include "monitor/views.hpp"
#include "run/log_watch.hpp"
#include "report/table.hpp"
#include "run/output_lines.hpp"
#include "run/child.hpp"
#include "run/hang.hpp"
#include "run/run_notifications.hpp"
#include "run/process_tree.hpp"
#include "run/run_report.hpp"
#include "run/sampling_thread.hpp"
#include "run/summary.hpp"
#include "run/train_log.hpp"

namespace gpusage::run {

namespace fs = std::filesystem;

std::string default_log_dir(const std::vector<std::string>& command, double unix_time_s) {
  const std::string stamp = wallclock::compact_utc(unix_time_s);
  std::string name = command.empty() ? "run" : fs::path(command.front()).filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return (fs::path("gpusage-runs") / (stamp + "-" + name)).string();
}

std::string resolve_executable(const std::string& name, const std::string& path) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;  // POSIX: empty entry = cwd
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

namespace {

// One output stream of the child on its way to one of gpusage's descriptors and to train.log.
struct Stream {
  int from = -1;
  int to = -1;
  bool open = false;
  bool at_line_start = true;
  LineAssembler lines;
};

void check(const RunRequest& r) {
  if (r.command.empty())
    throw InputError("run: no command given; usage: gpusage run [OPTIONS] -- CMD [ARGS...]");
  if (!(r.interval_s >= 0.1 && r.interval_s <= 3600))
    throw InputError(fmt::format("--interval {:g}: accepted values are 0.1 to 3600 seconds", r.interval_s));
  if (!(r.expectation_window_s >= 0 && r.expectation_window_s <= 86400))
    throw InputError(fmt::format("--expect-window {:g}: accepted values are 0 to 86400 seconds",
                                 r.expectation_window_s));
  if (r.hang_after_s && !(*r.hang_after_s > 0 && *r.hang_after_s <= 604800))
    throw InputError(fmt::format("--hang-after {:g}: accepted values are above 0 and up to 604800 seconds (a week)",
                                 *r.hang_after_s));
  if (r.kill_on_hang && !r.hang_after_s)
    throw InputError("--kill-on-hang needs --hang-after SECONDS (how long a silent, idle run may last)");
  if (!r.notify.url.empty()) parse_webhook_url(r.notify.url);
}

// "gpusage: warning [id]: title Fix: fix": a finding as it is announced while the run lasts.
std::string finding_line(const diagnose::Finding& f) {
  return fmt::format("gpusage: {} [{}]: {}{}", diagnose::to_string(f.severity), f.id, f.title,
                     f.fix.empty() ? "" : " Fix: " + f.fix);
}

// The prediction, made before the child starts; its line says what the run is held against.
std::optional<ExpectationWatch> start_expectation(const RunRequest& request, const device::SystemInfo& system) {
  if (!request.expectation) return std::nullopt;
  const ExpectationResult result = make_expectation(*request.expectation, system);
  if (!result.note.empty()) write_all(STDERR_FILENO, "gpusage: " + result.note + "\n");
  if (!result.expectation) return std::nullopt;
  const Expectation& e = *result.expectation;
  write_all(STDERR_FILENO,
            fmt::format("gpusage: plan predicts {:.4g} samples/s per GPU (80%: {:.4g}\u2013{:.4g}), {} at the peak, "
                        "MFU {} for {}\n",
                        e.samples_per_s, e.samples_per_s_low, e.samples_per_s_high,
                        units::format_bytes(e.memory_bytes),
                        e.peak_tflops ? fmt::format("{:.1f}%", 100 * efficiency(e, e.samples_per_s).mfu.value_or(0))
                                      : std::string("n/a"),
                        e.label()));
  return ExpectationWatch(e, request.expectation_window_s);
}

}  // namespace

int supervise(const RunRequest& request) { return supervise_run(request).exit_code; }

RunSummary supervise_run(const RunRequest& request) {
  check(request);
  const double started_unix_s = monitor::unix_now_s();
  // Everything that can fail on the user's input fails before the child starts.
  const char* path_env = std::getenv("PATH");
  const std::string executable =
      resolve_executable(request.command.front(), path_env ? path_env : "/usr/bin:/bin");
  if (executable.empty())
    throw InputError(fmt::format("run: command '{}' not found (not an executable file{})",
                                 request.command.front(),
                                 request.command.front().find('/') == std::string::npos ? " on $PATH" : ""));
  const fs::path dir = request.log_dir.empty() ? fs::path(default_log_dir(request.command, started_unix_s))
                                               : fs::path(request.log_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError(fmt::format("--log-dir {}: cannot create the directory: {}", dir.string(),
                                 ec ? ec.message() : "a file of that name exists"));
  // The child (and what it starts) can find the run's directory, e.g. to save its own files beside the logs.
  ::setenv("GPUSAGE_RUN_DIR", fs::absolute(dir).c_str(), 1);
  auto train_log = std::make_unique<TrainLog>(dir / "train.log");
  fs::remove(dir / "gpu.jsonl", ec);  // the log writer appends; a reused directory starts afresh
  auto gpu_log = std::make_unique<monitor::LogWriter>((dir / "gpu.jsonl").string());
  std::unique_ptr<monitor::PrometheusServer> prometheus;
  if (!request.prometheus.empty()) {
    const monitor::ListenAddress address = monitor::parse_listen_address(request.prometheus);
    prometheus = std::make_unique<monitor::PrometheusServer>(address);
    const std::string line = fmt::format("gpusage: serving Prometheus metrics at http://{}:{}/metrics\n",
                                         address.host, prometheus->port());
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  monitor::Sampler sampler(device::open_nvml_backend());
  const device::SystemInfo system = sampler.system();
  if (!system.available) {
    const std::string line = fmt::format("gpusage: {}; sampling host CPU and memory only\n", system.message);
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  monitor::AlertEngine alerts(request.alerts);
  std::optional<ExpectationWatch> expectation = start_expectation(request, system);
  RunNotifications notify(request.notify, request.command, dir.string());

  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  struct ClosePair {
    int a, b;
    ~ClosePair() {
      ::close(a);
      ::close(b);
    }
  } close_wake{wake[0], wake[1]};

  SignalRoute signals;
  const bool use_pty = ::isatty(STDOUT_FILENO) == 1 && !request.output_to_stderr;
  const bool forward_stdin = use_pty;  // in pipe mode the child reads gpusage's stdin itself
  Spawned child = spawn(executable, request.command, use_pty);
  const double started_mono_s = monotonic_s();
  RawTerminal raw(use_pty && ::isatty(STDIN_FILENO) == 1);
  SamplingThread sampling(sampler, alerts, *gpu_log, prometheus.get(), request.interval_s, child.pid,
                          wake[1]);
  if (expectation) sampling.set_run_metrics(prometheus_expectation(expectation->expectation(), std::nullopt));
  std::vector<diagnose::Finding> live_findings;  // the run's own (expectation, hang); the log's come at the end
  std::optional<HangWatch> hang;
  if (request.hang_after_s) hang.emplace(*request.hang_after_s);
  std::deque<std::string> last_lines;  // the hang finding's evidence
  std::optional<double> kill_after_s;  // gpusage sent SIGTERM: SIGKILL at this time if still running
  std::optional<std::string> stopped_by;

  std::array<Stream, 2> streams;
  streams[0].from = child.out_fd;
  streams[0].to = request.output_to_stderr ? STDERR_FILENO : STDOUT_FILENO;
  streams[0].open = true;
  if (child.err_fd >= 0) {
    streams[1].from = child.err_fd;
    streams[1].to = STDERR_FILENO;
    streams[1].open = true;
  }
  bool stdout_gone = false, stderr_gone = false;
  const bool stderr_tty = ::isatty(STDERR_FILENO) == 1;
  bool stdin_open = forward_stdin;
  std::string to_child;
  if (child.pty) ::fcntl(child.out_fd, F_SETFL, ::fcntl(child.out_fd, F_GETFL) | O_NONBLOCK);
  std::vector<TimedThroughput> throughput;
  LogWatch watch(request.context);
  std::vector<std::string> pending;  // finding lines waiting for the child's output to reach a line end
  std::map<std::string, double> last_said;  // rate limit per alert (kind, GPU)
  double last_output_s = monotonic_s();
  double last_scan_s = 0;
  double last_interrupt_s = -1e9;
  std::optional<int> wait_status;
  double exited_at_s = 0;
  std::array<char, 65536> buffer{};

  auto say = [&](const std::string& line) { pending.push_back(line); };
  auto flush_pending = [&](bool force) {
    if (pending.empty()) return;
    const bool at_start = std::all_of(streams.begin(), streams.end(),
                                      [](const Stream& s) { return !s.open || s.at_line_start; });
    const bool quiet = monotonic_s() - last_output_s >= 1.0;
    if (!at_start && !quiet && !force) return;
    std::string text = at_start ? "" : "\n";  // the child's line stays whole; ours starts below it
    for (const auto& line : pending) text += (stderr_tty ? "\r\x1b[K" : "") + line + "\n";
    pending.clear();
    if (!stderr_gone) stderr_gone = !write_all(STDERR_FILENO, text.data(), text.size());
    // After a forced break, the child's next bytes continue on a fresh line.
    for (auto& s : streams) s.at_line_start = true;
  };
  // gpusage ends the run itself (a hang, --stop-after-steps, the time limit): SIGTERM to the group, SIGKILL 5 s
  // later if it is still there.
  auto stop_run = [&](const char* why) {
    if (wait_status || stopped_by) return;
    ::kill(-child.pid, SIGTERM);
    kill_after_s = monotonic_s() + 5;
    stopped_by = why;
  };
  auto take_lines = [&](const std::vector<std::string>& lines) {
    const double now = monitor::unix_now_s();
    for (const auto& line : lines) {
      if (auto t = parse_throughput(line)) {
        throughput.push_back({now, *t});
        if (request.stop_after_steps && static_cast<int>(throughput.size()) >= *request.stop_after_steps)
          stop_run("steps");
        if (expectation) {
          if (auto f = expectation->add(now, *t, sampling.recent_utilization_percent())) {
            say(finding_line(*f));
            notify.finding(*f);
            live_findings.push_back(std::move(*f));
          }
          sampling.set_run_metrics(
              prometheus_expectation(expectation->expectation(), expectation->last_samples_per_s()));
        }
      }
      if (!text::trim(line).empty()) {
        last_lines.push_back(line);
        if (last_lines.size() > 5) last_lines.pop_front();
      }
      watch.add(line);
    }
  };
  auto scan_log = [&](bool now) {
    const double t = monotonic_s();
    if (!now && t - last_scan_s < 1.0) return;
    last_scan_s = t;
    for (const auto& f : watch.scan())
      if (f.severity == diagnose::Severity::error || f.severity == diagnose::Severity::warning) {
        say(finding_line(f));
        notify.finding(f);
      }
  };
  auto announce_alerts = [&] {
    const double now = monotonic_s();
    for (auto& note : sampling.take_notes()) say(std::move(note));
    for (const auto& a : sampling.take_raised()) {
      // Flapping: once a minute at most per rule and GPU (per XID number for XID events).
      const std::string key = fmt::format("{}/{}/{}", monitor::to_string(a.kind), a.gpu, a.xid.value_or(0));
      auto it = last_said.find(key);
      if (it != last_said.end() && now - it->second < 60) continue;
      last_said[key] = now;
      say("gpusage: alert: " + a.message);
      notify.alert(a, now);
    }
  };
  auto forward = [&](int signo) {
    if (!wait_status) ::kill(-child.pid, signo);
  };
  auto interrupt = [&] {
    const double now = monotonic_s();
    if (now - last_interrupt_s <= 3.0 && !wait_status) {
      ::kill(-child.pid, SIGKILL);
      say("gpusage: second Ctrl-C within 3 s: killed the run's process group");
    }
    last_interrupt_s = now;
  };

  auto enforce_stop = [&] {
    if (wait_status) return;
    const double now = monotonic_s();
    if (kill_after_s && now >= *kill_after_s) {
      ::kill(-child.pid, SIGKILL);
      kill_after_s.reset();
      say(fmt::format("gpusage: the run's group outlived SIGTERM ({}) by 5 s: killed it (SIGKILL)", *stopped_by));
    }
    if (request.time_limit_s && now - started_mono_s >= *request.time_limit_s) stop_run("time-limit");
  };
  auto check_hang = [&] {
    if (!hang || wait_status) return;
    const double now = monotonic_s();
    const auto quiet_s = hang->due(now, last_output_s, sampling.last_gpu_active_s());
    if (!quiet_s) return;
    const auto tree = descendants(static_cast<unsigned>(child.pid), read_parents());
    diagnose::Finding f = hang_finding(*quiet_s, hang->after_s(),
                                       describe_processes(std::vector<unsigned>(tree.begin(), tree.end())),
                                       last_lines, request.kill_on_hang);
    say(fmt::format("gpusage: {} [{}]: {}", diagnose::to_string(f.severity), f.id, f.title));
    for (const auto& line : text::split(f.evidence, '\n')) say("gpusage:   " + line);
    notify.finding(f);
    live_findings.push_back(std::move(f));
    if (request.kill_on_hang) stop_run("hang");
  };

  while (true) {
    const bool outputs_open =
        std::any_of(streams.begin(), streams.end(), [](const Stream& s) { return s.open; });
    // A child that exited can still have bytes in flight (read until EOF); a grandchild that kept the output
    // open is not waited for beyond a second of quiet.
    if (wait_status && (!outputs_open || monotonic_s() - std::max(last_output_s, exited_at_s) >= 1.0)) break;
    std::vector<pollfd> fds;
    fds.push_back({signals.read_fd, POLLIN, 0});
    fds.push_back({wake[0], POLLIN, 0});
    for (const auto& s : streams)
      if (s.open) fds.push_back({s.from, POLLIN, 0});
    // Typed input waits in `to_child` while the child does not read it; gpusage never blocks on the pty for
    // it.
    if (stdin_open && to_child.size() < 65536) fds.push_back({STDIN_FILENO, POLLIN, 0});
    if (!to_child.empty() && streams[0].open) fds.push_back({child.out_fd, POLLOUT, 0});
    int timeout_ms = pending.empty() && !wait_status ? 1000 : 200;
    if (hang) timeout_ms = std::min(timeout_ms, std::max(20, static_cast<int>(hang->after_s() * 250)));
    int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll: " + std::string(std::strerror(errno)));

    for (const auto& p : fds) {
      if (p.events == POLLOUT) {
        if (p.revents & POLLOUT) {
          ssize_t n = ::write(child.out_fd, to_child.data(), to_child.size());
          if (n > 0) to_child.erase(0, static_cast<std::size_t>(n));
        }
        continue;
      }
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == signals.read_fd) {
        unsigned char sig[64];
        ssize_t n = ::read(signals.read_fd, sig, sizeof sig);
        for (ssize_t i = 0; i < n; ++i) {
          switch (sig[i]) {
            case SIGCHLD: {
              int status = 0;
              if (!wait_status && ::waitpid(child.pid, &status, WNOHANG) == child.pid) {
                wait_status = status;
                exited_at_s = monotonic_s();
              }
              break;
            }
            case SIGINT:
              interrupt();
              forward(SIGINT);
              break;
            case SIGWINCH: {
              winsize size{};
              if (child.pty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0)
                ::ioctl(child.out_fd, TIOCSWINSZ, &size);
              break;
            }
            default:
              forward(sig[i]);
          }
        }
      } else if (p.fd == wake[0]) {
        char drain[64];
        while (::read(wake[0], drain, sizeof drain) > 0) {
        }
        announce_alerts();
      } else if (p.fd == STDIN_FILENO) {
        ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
        if (n > 0) {
          // In raw mode Ctrl-C arrives as a byte: the pty turns it into SIGINT for the child's group.
          if (std::memchr(buffer.data(), 0x03, static_cast<std::size_t>(n))) interrupt();
          to_child.append(buffer.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          stdin_open = false;
          if (child.pty) {
            termios mode{};
            const char eof =
                ::tcgetattr(child.out_fd, &mode) == 0 ? static_cast<char>(mode.c_cc[VEOF]) : '\x04';
            to_child.push_back(eof);  // end of input, as a terminal user would type it
          }
        }
      } else {
        for (auto& s : streams) {
          if (!s.open || s.from != p.fd) continue;
          ssize_t n = ::read(s.from, buffer.data(), buffer.size());
          if (n > 0) {
            const auto size = static_cast<std::size_t>(n);
            bool& gone = s.to == STDOUT_FILENO ? stdout_gone : stderr_gone;
            if (!gone) gone = !write_all(s.to, buffer.data(), size);
            train_log->write(std::string_view(buffer.data(), size));
            if (auto warning = train_log->take_warning()) say(*warning);
            // A '\r' ends a progress bar's redraw: a line of ours may follow it (and clears the bar's rest).
            s.at_line_start = buffer[size - 1] == '\n' || buffer[size - 1] == '\r';
            last_output_s = monotonic_s();
            take_lines(s.lines.feed(std::string_view(buffer.data(), size)));
          } else if (n == 0 ||
                     (errno != EINTR && errno != EAGAIN)) {  // EOF, or EIO from a pty whose side closed
            s.open = false;
            take_lines(s.lines.finish());
            ::close(s.from);
          }
        }
      }
    }
    scan_log(false);
    check_hang();
    enforce_stop();
    for (auto& note : notify.take_notes()) say(std::move(note));
    flush_pending(false);
  }
  const double wall_s = (wait_status ? exited_at_s : monotonic_s()) - started_mono_s;
  for (auto& s : streams)
    if (s.open) {
      take_lines(s.lines.finish());
      ::close(s.from);
      s.open = false;
    }
  if (!wait_status) {  // unreachable in practice: the loop ends only after the child was reaped
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    wait_status = status;
  }
  sampling.stop();
  announce_alerts();
  scan_log(true);
  flush_pending(true);
  gpu_log.reset();  // closed (and synced) before it is read back for the report
  train_log.reset();

  RunSummary summary;
  summary.command = request.command;
  summary.log_dir = dir.string();
  summary.started_unix_s = started_unix_s;
  summary.wall_s = wall_s;
  summary.stopped_by = stopped_by;
  if (WIFSIGNALED(*wait_status)) {
    summary.signal = WTERMSIG(*wait_status);
    summary.exit_code = 128 + *summary.signal;
  } else {
    summary.exit_code = WEXITSTATUS(*wait_status);
  }
  summary.gpu_available = system.available;
  summary.gpu_message = system.message;
  summary.gpus_matched = sampling.matched();
  summary.gpus = summarize_gpus(sampling.samples());
  summary.host = summarize_host(sampling.samples());
  summary.throughput = summarize_throughput(throughput);
  summary.time_shares = estimate_time_shares(started_unix_s, started_unix_s + wall_s, sampling.samples(), throughput);
  summary.alerts = sampling.raised();
  // The whole log, scanned once more: the line numbers and counts in the findings are the log's own.
  summary.findings =
      final_findings(diagnose::read_log_file((dir / "train.log").string()), request.context, summary.gpus);
  summary.findings.insert(summary.findings.end(), live_findings.begin(), live_findings.end());
  diagnose::sort_findings(summary.findings);
  if (expectation) summary.expectation = compare(expectation->expectation(), summary.throughput, summary.gpus);
  if (!sampling.error().empty()) {
    const std::string line = "gpusage: sampling stopped early: " + sampling.error() + "\n";
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  io::write_file_atomically((dir / "summary.json").string(), to_json(summary).dump(2) + "\n");
  write_report(summary, (dir / "gpu.jsonl").string(), throughput, request.command_line,
               (dir / "report.html").string());
  const std::string text = render_text(summary);
  write_all(STDERR_FILENO, text.data(), text.size());
  notify.finish(summary);
  for (const auto& note : notify.take_notes()) write_all(STDERR_FILENO, note + "\n");
  return summary;
}

}  // namespace gpusage::run
