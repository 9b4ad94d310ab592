#include "run/supervisor.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/log_scan.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/prometheus_server.hpp"
#include "monitor/sampler.hpp"
#include "monitor/views.hpp"
#include "run/advice.hpp"
#include "run/child.hpp"
#include "run/plausibility.hpp"
#include "run/run_notifications.hpp"
#include "run/run_report.hpp"
#include "run/summary.hpp"
#include "run/supervisor_loop.hpp"
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

void check(const RunRequest& r) {
  if (r.command.empty()) throw InputError("run: no command given; usage: gpusage run [OPTIONS] -- CMD [ARGS...]");
  if (!(r.interval_s >= 0.1 && r.interval_s <= 3600))
    throw InputError(fmt::format("--interval {:g}: accepted values are 0.1 to 3600 seconds", r.interval_s));
  if (!(r.expectation_window_s >= 0 && r.expectation_window_s <= 86400))
    throw InputError(
        fmt::format("--expect-window {:g}: accepted values are 0 to 86400 seconds", r.expectation_window_s));
  if (r.hang_after_s && !(*r.hang_after_s > 0 && *r.hang_after_s <= 604800))
    throw InputError(fmt::format("--hang-after {:g}: accepted values are above 0 and up to 604800 seconds (a week)",
                                 *r.hang_after_s));
  if (r.kill_on_hang && !r.hang_after_s)
    throw InputError("--kill-on-hang needs --hang-after SECONDS (how long a run may print nothing)");
  if (!r.notify.url.empty()) parse_webhook_url(r.notify.url);
}

// The prediction, made before the child starts; its line says what the run is held against.
std::optional<ExpectationWatch> start_expectation(const RunRequest& request, const device::SystemInfo& system) {
  if (!request.expectation) return std::nullopt;
  const ExpectationResult result = make_expectation(*request.expectation, system);
  if (!result.note.empty()) write_all(STDERR_FILENO, "gpusage: " + result.note + "\n");
  if (!result.expectation) return std::nullopt;
  const Expectation& e = *result.expectation;
  write_all(STDERR_FILENO,
            i18n::trf("gpusage: plan predicts {:.4g} samples/s per GPU (80%: {:.4g}\u2013{:.4g}), {} at the peak, "
                      "MFU {} for {}\n",
                      e.samples_per_s, e.samples_per_s_low, e.samples_per_s_high, units::format_bytes(e.memory_bytes),
                      e.peak_tflops ? fmt::format("{:.1f}%", 100 * efficiency(e, e.samples_per_s).mfu.value_or(0))
                                    : i18n::tr("n/a"),
                      e.label()));
  return ExpectationWatch(e, request.expectation_window_s);
}

}  // namespace

int supervise(const RunRequest& request) { return supervise_run(request).exit_code; }

namespace {

// Everything that can fail on the user's input fails before the child starts: the command is found, the log
// directory made, gpu.jsonl started afresh, the Prometheus endpoint bound.
struct RunFiles {
  std::string executable;
  fs::path dir;
  std::unique_ptr<TrainLog> train_log;
  std::unique_ptr<monitor::LogWriter> gpu_log;
  std::unique_ptr<monitor::PrometheusServer> prometheus;
};

RunFiles open_run_files(const RunRequest& request, double started_unix_s) {
  RunFiles files;
  const char* path_env = std::getenv("PATH");
  files.executable = resolve_executable(request.command.front(), path_env ? path_env : "/usr/bin:/bin");
  if (files.executable.empty())
    throw InputError(fmt::format("run: command '{}' not found (not an executable file{})", request.command.front(),
                                 request.command.front().find('/') == std::string::npos ? " on $PATH" : ""));
  files.dir =
      request.log_dir.empty() ? fs::path(default_log_dir(request.command, started_unix_s)) : fs::path(request.log_dir);
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  if (ec || !fs::is_directory(files.dir))
    throw InputError(fmt::format("--log-dir {}: cannot create the directory: {}", files.dir.string(),
                                 ec ? ec.message() : "a file of that name exists"));
  // The child (and what it starts) can find the run's directory, e.g. to save its own files beside the logs.
  ::setenv("GPUSAGE_RUN_DIR", fs::absolute(files.dir).c_str(), 1);
  files.train_log = std::make_unique<TrainLog>(files.dir / "train.log");
  fs::remove(files.dir / "gpu.jsonl", ec);  // the log writer appends; a reused directory starts afresh
  files.gpu_log = std::make_unique<monitor::LogWriter>((files.dir / "gpu.jsonl").string());
  if (!request.prometheus.empty()) {
    const monitor::ListenAddress address = monitor::parse_listen_address(request.prometheus);
    files.prometheus = std::make_unique<monitor::PrometheusServer>(address);
    const std::string line = i18n::trf("gpusage: serving Prometheus metrics at http://{}:{}/metrics\n", address.host,
                                       files.prometheus->port());
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  return files;
}

// The end: the summary from what the loop saw and the samples, the whole log scanned once more, summary.json,
// report.html, the summary on stderr and the last notification.
RunSummary summarize_run(const RunRequest& request, const RunFiles& files, double started_unix_s, double wall_s,
                         SupervisorLoop& loop, const device::SystemInfo& system,
                         const std::optional<ExpectationWatch>& expectation, RunNotifications& notify) {
  const LoopState& state = loop.state();
  SamplingThread& sampling = loop.sampling();
  const int wait_status = *state.wait_status;
  RunSummary summary;
  summary.command = request.command;
  summary.log_dir = files.dir.string();
  summary.started_unix_s = started_unix_s;
  summary.wall_s = wall_s;
  summary.stopped_by = state.stopped_by;
  if (WIFSIGNALED(wait_status)) {
    summary.signal = WTERMSIG(wait_status);
    summary.exit_code = 128 + *summary.signal;
  } else {
    summary.exit_code = WEXITSTATUS(wait_status);
  }
  summary.gpu_available = system.available;
  summary.gpu_message = system.message;
  summary.gpus_matched = sampling.matched();
  summary.gpus = summarize_gpus(sampling.samples());
  summary.host = summarize_host(sampling.samples());
  summary.throughput = summarize_throughput(state.throughput);
  summary.time_shares =
      estimate_time_shares(started_unix_s, started_unix_s + wall_s, sampling.samples(), state.throughput);
  summary.alerts = sampling.raised();
  // The whole log, scanned once more: the line numbers and counts in the findings are the log's own.
  summary.findings =
      final_findings(diagnose::read_log_file((files.dir / "train.log").string()), request.context, summary.gpus);
  drop_followed_advice(summary.findings, practice_of(request));
  std::vector<diagnose::Finding> live = state.live_findings;
  if (expectation) {
    summary.expectation = compare(expectation->expectation(), summary.throughput, summary.gpus);
    // An impossible median: no MFU, and the finding about the whole run replaces the live one.
    const catalog::Gpu* card = catalog::Catalog::active().find(expectation->expectation().gpu_id);
    if (auto f = withdraw_implausible(*summary.expectation, card)) {
      std::erase_if(live, [&](const diagnose::Finding& l) { return l.id == f->id; });
      live.push_back(std::move(*f));
    }
  }
  summary.findings.insert(summary.findings.end(), live.begin(), live.end());
  diagnose::sort_findings(summary.findings);
  if (!sampling.error().empty()) {
    const std::string line = "gpusage: sampling stopped early: " + sampling.error() + "\n";
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  io::write_file_atomically((files.dir / "summary.json").string(), to_json(summary).dump(2) + "\n");
  write_report(summary, (files.dir / "gpu.jsonl").string(), state.throughput, request.command_line,
               (files.dir / "report.html").string());
  const std::string text = render_text(summary);
  write_all(STDERR_FILENO, text.data(), text.size());
  notify.finish(summary);
  for (const auto& note : notify.take_notes()) write_all(STDERR_FILENO, note + "\n");
  return summary;
}

}  // namespace

RunSummary supervise_run(const RunRequest& request) {
  check(request);
  const double started_unix_s = monitor::unix_now_s();
  RunFiles files = open_run_files(request, started_unix_s);
  monitor::Sampler sampler(device::open_nvml_backend());
  const device::SystemInfo system = sampler.system();
  if (!system.available) {
    const std::string line = i18n::trf("gpusage: {}; sampling host CPU and memory only\n", system.message);
    write_all(STDERR_FILENO, line.data(), line.size());
  }
  monitor::AlertEngine alerts(request.alerts);
  std::optional<ExpectationWatch> expectation = start_expectation(request, system);
  RunNotifications notify(request.notify, request.command, files.dir.string());
  RunResources resources;
  resources.executable = files.executable;
  resources.sampler = &sampler;
  resources.alerts = &alerts;
  resources.gpu_log = files.gpu_log.get();
  resources.prometheus = files.prometheus.get();
  resources.train_log = files.train_log.get();
  resources.expectation = &expectation;
  resources.notify = &notify;
  SupervisorLoop loop(request, resources);
  loop.run();
  const double wall_s = loop.finish();
  files.gpu_log.reset();  // closed (and synced) before it is read back for the report
  files.train_log.reset();
  return summarize_run(request, files, started_unix_s, wall_s, loop, system, expectation, notify);
}

}  // namespace gpusage::run
