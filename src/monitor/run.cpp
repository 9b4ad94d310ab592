#include "monitor/run.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <memory>
#include <ostream>
#include <utility>

#include "core/common/error.hpp"
#include "monitor/interactive.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/prometheus_server.hpp"
#include "monitor/sampler.hpp"
#include "monitor/views.hpp"

namespace gpusage::monitor {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void request_stop(int) { g_stop = true; }

// SIGINT and SIGTERM end the loop instead of the process, so the log is closed and the terminal restored.
// No SA_RESTART: a pending sleep or getch returns at once.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop = false;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

timespec monotonic_now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}

timespec add_seconds(timespec t, double seconds) {
  double whole = std::floor(seconds);
  t.tv_sec += static_cast<time_t>(whole);
  t.tv_nsec += static_cast<long>((seconds - whole) * 1e9);
  if (t.tv_nsec >= 1'000'000'000L) {
    t.tv_sec += 1;
    t.tv_nsec -= 1'000'000'000L;
  }
  return t;
}

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// Sleeps until `deadline` (CLOCK_MONOTONIC) or a stop request.
void sleep_until(const timespec& deadline) {
  while (!g_stop && ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

void check(const MonitorOptions& o) {
  if (!(o.interval_s >= 0.1 && o.interval_s <= 3600))
    throw InputError(fmt::format("--interval {:g}: accepted values are 0.1 to 3600 seconds", o.interval_s));
  if (o.count && *o.count < 1) throw InputError(fmt::format("--count {}: must be at least 1", *o.count));
  if (o.once && o.view == View::interactive)
    throw InputError("--once prints one summary; it cannot be combined with the interactive view");
}

}  // namespace

int run_monitor(const MonitorOptions& options, std::ostream& out, std::ostream& err) {
  check(options);
  // Everything that can fail on the user's input fails before the first sample.
  std::unique_ptr<LogWriter> log;
  if (!options.log_path.empty()) log = std::make_unique<LogWriter>(options.log_path);
  std::unique_ptr<PrometheusServer> prometheus;
  if (!options.prometheus.empty()) {
    ListenAddress address = parse_listen_address(options.prometheus);
    prometheus = std::make_unique<PrometheusServer>(address);
    err << fmt::format("gpusage: serving Prometheus metrics at http://{}:{}/metrics\n", address.host,
                       prometheus->port());
  }
  bool replay = !options.simulate_path.empty();
  Sampler sampler(replay ? device::open_replay_backend(options.simulate_path) : device::open_nvml_backend());
  // The summary and the interactive view say it themselves; machine-readable streams keep stdout clean.
  if (!sampler.system().available &&
      (options.view == View::csv || options.view == View::json || options.view == View::prometheus))
    err << "gpusage: " << sampler.system().message << "; showing host CPU and memory only\n";
  AlertEngine alerts(options.alerts);
  StopOnSignals signals;

  std::vector<Alert> raised;
  std::vector<std::string> log_warnings;  // a disk fault on --log: printed once, the monitor carries on
  auto say_log_warnings = [&] {
    for (const std::string& w : std::exchange(log_warnings, {})) err << w << "\n";
  };
  auto take = [&](Tick& tick) {
    tick.sample = sampler.next();
    AlertEngine::Update update = alerts.evaluate(tick.sample);
    tick.alerts = std::move(update.active);
    raised = std::move(update.raised);
    if (log) {
      log->write(tick.sample, tick.alerts);
      if (auto warning = log->take_warning()) log_warnings.push_back(std::move(*warning));
    }
    if (prometheus) prometheus->publish(prometheus_text(tick.sample, tick.alerts));
  };
  if (!replay) {
    // CPU figures are rates: take a baseline and wait briefly so the first reading already has them.
    sampler.prime();
    sleep_until(add_seconds(monotonic_now(), std::min(0.1, options.interval_s)));
  }

  if (options.once) {
    Tick tick;
    take(tick);
    switch (options.view) {
      case View::csv: out << csv_header() << csv_rows(tick.sample); break;
      case View::json: out << sample_json(tick.sample, tick.alerts).dump(2) << "\n"; break;
      case View::prometheus: out << prometheus_text(tick.sample, tick.alerts); break;
      default: out << render_summary(tick.sample, tick.alerts, options.width); break;
    }
    out.flush();
    say_log_warnings();
    return 0;
  }

  long taken = 0;
  auto more = [&] {
    return !g_stop && (!options.count || taken < *options.count) && (taken == 0 || !sampler.exhausted());
  };
  if (options.view == View::interactive) {
    run_interactive(
        options.interval_s,
        [&](Tick& tick) {
          if (!more()) return false;
          take(tick);
          ++taken;
          return true;
        },
        g_stop);
    say_log_warnings();  // after the screen is restored: stderr would scribble over the curses view
    return 0;
  }

  if (options.view == View::csv) out << csv_header();
  timespec deadline = monotonic_now();
  while (more()) {
    Tick tick;
    take(tick);
    ++taken;
    switch (options.view) {
      case View::csv: out << csv_rows(tick.sample); break;
      case View::json: out << sample_json(tick.sample, tick.alerts).dump() << "\n"; break;
      case View::prometheus: out << prometheus_text(tick.sample, tick.alerts) << "\n"; break;
      default: out << render_summary(tick.sample, tick.alerts, options.width) << "\n"; break;
    }
    out.flush();
    for (const Alert& a : raised) err << "gpusage: alert: " << a.message << "\n";
    say_log_warnings();
    if (!more()) break;
    deadline = add_seconds(deadline, options.interval_s);
    timespec now = monotonic_now();
    if (before(deadline, now)) deadline = now;  // fell behind (slow NVML, suspended): do not burst
    sleep_until(deadline);
  }
  return 0;
}

}  // namespace gpusage::monitor
