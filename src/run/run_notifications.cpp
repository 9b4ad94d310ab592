#include "run/run_notifications.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/diagnose/doctor.hpp"
#include "report/table.hpp"
#include "run/child.hpp"

namespace gpusage::run {

namespace {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("this host");
}

}  // namespace

RunNotifications::RunNotifications(const NotifyConfig& config, const std::vector<std::string>& command,
                                   const std::string& log_dir)
    : host_(host_name()), program_(command.empty() ? "run" : command.front()) {
  if (!config.any()) return;
  notifier_ = std::make_unique<Notifier>(
      config, nlohmann::json{{"source", "gpusage run"}, {"host", host_}, {"command", command}, {"log_dir", log_dir}});
}

void RunNotifications::finding(const diagnose::Finding& f) {
  const auto level = level_of(f.severity);
  if (!notifier_ || !level) return;
  notifier_->live({{"event", "finding"}, {"finding", diagnose::to_json(f)}}, *level,
                  fmt::format("gpusage run on {}: {} [{}]: {}", host_, diagnose::to_string(f.severity), f.id, f.title),
                  monotonic_s());
}

void RunNotifications::alert(const monitor::Alert& a, double now_s) {
  if (!notifier_) return;
  notifier_->live({{"event", "alert"}, {"alert", monitor::to_json(a)}}, level_of_alert(a.severity),
                  fmt::format("gpusage run on {}: alert: {}", host_, a.message), now_s);
}

void RunNotifications::finish(const RunSummary& summary) {
  if (!notifier_) return;
  const bool crashed = summary.exit_code != 0;
  std::string line = fmt::format("gpusage run on {}: {} {} after {}: {}", host_, program_,
                                 crashed ? "crashed" : "finished", report::format_duration(summary.wall_s),
                                 summary.signal ? fmt::format("killed by signal {}", *summary.signal)
                                                : fmt::format("exit status {}", summary.exit_code));
  if (!summary.findings.empty() && summary.findings.front().severity == diagnose::Severity::error)
    line += fmt::format("; {}: {}", summary.findings.front().id, summary.findings.front().title);
  notifier_->finish({{"event", crashed ? "crashed" : "finished"}, {"summary", to_json(summary)}},
                    crashed ? NotifyLevel::error : NotifyLevel::info, line);
}

std::vector<std::string> RunNotifications::take_notes() {
  return notifier_ ? notifier_->take_notes() : std::vector<std::string>{};
}

}  // namespace gpusage::run
