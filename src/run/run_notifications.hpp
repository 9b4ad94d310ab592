// The run's events turned into notifications (run/notify.hpp): a finding, an alert, the end. Does nothing
// when neither --notify nor --notify-url is given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "monitor/alerts.hpp"
#include "run/notify.hpp"
#include "run/summary.hpp"

namespace gpusage::run {

class RunNotifications {
 public:
  RunNotifications(const NotifyConfig& config, const std::vector<std::string>& command, const std::string& log_dir);
  void finding(const diagnose::Finding& f);
  void alert(const monitor::Alert& a, double now_s);
  // "finished" (exit 0) or "crashed", with summary.json; waits for its delivery (run/notify.hpp).
  void finish(const RunSummary& summary);
  std::vector<std::string> take_notes();

 private:
  std::string host_;
  std::string program_;
  std::unique_ptr<Notifier> notifier_;
};

}  // namespace gpusage::run
