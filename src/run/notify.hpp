// Notifications of `gpusage run`: each event worth a person's attention (a finding or alert at or above
// --notify-level while the run lasts, and the run's end: finished or crashed, with the summary) goes as one
// JSON document to
//   --notify CMD       `sh -c CMD` with the JSON on its stdin (30 s each, then killed);
//   --notify-url URL   an HTTP(S) POST of the JSON (a webhook: ntfy, Slack-compatible, anything; 10 s
//   timeout).
// Delivery runs on its own thread, so a slow hook never holds up the child's output. Live events are
// rate-limited (at most kMaxLivePerMinute a minute; the ones dropped are counted in the final event); the
// final event is always sent, and gpusage waits for it (at most kFinalDeadline_s) before it exits.
//
// The JSON: { "source": "gpusage run", "event": "finding" | "alert" | "finished" | "crashed",
//   "severity": "info" | "warning" | "error", "text": one line for chat hooks (Slack reads "text"),
//   "host", "command", "log_dir", and "finding" (doctor's finding JSON) | "alert" (the monitor's alert JSON)
//   | "summary" (summary.json) with "suppressed" (live events dropped by the rate limit) }.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/diagnose/finding.hpp"

namespace gpusage::run {

enum class NotifyLevel { info, warning, error };
// "info" | "warning" | "error"; throws InputError naming the value and what is accepted.
NotifyLevel parse_notify_level(const std::string& text);
const char* to_string(NotifyLevel level);
std::optional<NotifyLevel> level_of(diagnose::Severity severity);  // none for not_checked
NotifyLevel level_of_alert(const std::string& alert_severity);     // "critical" is error

struct NotifyConfig {
  std::string command;  // --notify
  std::string url;      // --notify-url
  NotifyLevel level = NotifyLevel::warning;
  bool any() const { return !command.empty() || !url.empty(); }
};

// The URL split for cpp-httplib: "http://host:port" and the path ("/" when none). Throws InputError for
// anything but an http:// or https:// URL with a host.
struct WebhookUrl {
  std::string scheme_host_port;
  std::string path;
};
WebhookUrl parse_webhook_url(const std::string& url);

inline constexpr int kMaxLivePerMinute = 6;
inline constexpr double kFinalDeadline_s = 15;

class Notifier {
 public:
  // `base`: the fields every event carries (host, command, log_dir).
  Notifier(NotifyConfig config, nlohmann::json base);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // A live event at `level` (dropped below --notify-level or beyond the rate limit). `now_s`: a monotonic
  // time.
  void live(nlohmann::json event, NotifyLevel level, const std::string& text, double now_s);
  // The run's end: always sent; waits until it was delivered (or kFinalDeadline_s passed).
  void finish(nlohmann::json event, NotifyLevel level, const std::string& text);
  // One line for each delivery that failed, for the user.
  std::vector<std::string> take_notes();

 private:
  void loop();
  void deliver(const std::string& body);

  NotifyConfig config_;
  nlohmann::json base_;
  std::optional<WebhookUrl> url_;
  std::mutex mutex_;
  std::condition_variable wake_, delivered_;
  std::deque<std::string> queue_;
  std::deque<double> sent_at_;
  int suppressed_ = 0;
  bool stop_ = false;
  bool busy_ = false;
  std::vector<std::string> notes_;
  std::thread thread_;
};

}  // namespace gpusage::run
