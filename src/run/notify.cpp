#include "run/notify.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "core/common/error.hpp"
#include "run/child.hpp"

namespace gpusage::run {

NotifyLevel parse_notify_level(const std::string& text) {
  if (text == "info") return NotifyLevel::info;
  if (text == "warning") return NotifyLevel::warning;
  if (text == "error") return NotifyLevel::error;
  throw InputError(fmt::format("--notify-level '{}': accepted values are info, warning, error", text));
}

const char* to_string(NotifyLevel level) {
  switch (level) {
    case NotifyLevel::info: return "info";
    case NotifyLevel::warning: return "warning";
    case NotifyLevel::error: return "error";
  }
  return "info";
}

std::optional<NotifyLevel> level_of(diagnose::Severity severity) {
  switch (severity) {
    case diagnose::Severity::error: return NotifyLevel::error;
    case diagnose::Severity::warning: return NotifyLevel::warning;
    case diagnose::Severity::info: return NotifyLevel::info;
    case diagnose::Severity::not_checked: return std::nullopt;
  }
  return std::nullopt;
}

NotifyLevel level_of_alert(const std::string& alert_severity) {
  return alert_severity == "critical" ? NotifyLevel::error : NotifyLevel::warning;
}

WebhookUrl parse_webhook_url(const std::string& url) {
  static const std::regex form(R"(^(https?://[^/\s?#]+)(/[^\s]*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, form))
    throw InputError(
        fmt::format("--notify-url '{}': give an http:// or https:// URL with a host, e.g. "
                    "https://ntfy.sh/my-training-runs",
                    url));
  return {m[1].str(), m[2].matched ? m[2].str() : "/"};
}

Notifier::Notifier(NotifyConfig config, nlohmann::json base) : config_(std::move(config)), base_(std::move(base)) {
  if (!config_.url.empty()) url_ = parse_webhook_url(config_.url);
  thread_ = std::thread([this] { loop(); });
}

Notifier::~Notifier() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Notifier::live(nlohmann::json event, NotifyLevel level, const std::string& text, double now_s) {
  if (level < config_.level) return;
  std::lock_guard lock(mutex_);
  while (!sent_at_.empty() && now_s - sent_at_.front() >= 60) sent_at_.pop_front();
  if (static_cast<int>(sent_at_.size()) >= kMaxLivePerMinute) {
    ++suppressed_;
    return;
  }
  sent_at_.push_back(now_s);
  nlohmann::json doc = base_;
  doc.update(event);
  doc["severity"] = to_string(level);
  doc["text"] = text;
  queue_.push_back(doc.dump());
  wake_.notify_all();
}

void Notifier::finish(nlohmann::json event, NotifyLevel level, const std::string& text) {
  std::unique_lock lock(mutex_);
  nlohmann::json doc = base_;
  doc.update(event);
  doc["severity"] = to_string(level);
  doc["text"] = text;
  doc["suppressed"] = suppressed_;
  queue_.push_back(doc.dump());
  wake_.notify_all();
  delivered_.wait_for(lock, std::chrono::duration<double>(kFinalDeadline_s),
                      [this] { return queue_.empty() && !busy_; });
}

std::vector<std::string> Notifier::take_notes() {
  std::lock_guard lock(mutex_);
  return std::exchange(notes_, {});
}

void Notifier::loop() {
  while (true) {
    std::string body;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      body = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    deliver(body);
    {
      std::lock_guard lock(mutex_);
      busy_ = false;
    }
    delivered_.notify_all();
  }
}

namespace {

// `sh -c command` with `body` on its stdin, in its own process group; killed after 30 s. Between fork and
// exec only async-signal-safe calls run (other threads may hold locks).
std::optional<std::string> run_hook(const std::string& command, const std::string& body) {
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in[0]);
    ::close(in[1]);
    return fmt::format("fork: {}", std::strerror(errno));
  }
  if (pid == 0) {
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);
    ::dup2(in[0], STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  write_all(in[1], body);  // a hook that does not read its stdin gets EPIPE, which is fine
  ::close(in[1]);
  const double deadline = monotonic_s() + 30;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (monotonic_s() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "--notify: the command ran past 30 s and was killed";
    }
    ::usleep(20000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return fmt::format("--notify: the command exited with status {}", WEXITSTATUS(status));
  return std::nullopt;
}

}  // namespace

void Notifier::deliver(const std::string& body) {
  std::vector<std::string> failures;
  if (!config_.command.empty())
    if (auto failure = run_hook(config_.command, body)) failures.push_back(*failure);
  if (url_) {
    httplib::Client client(url_->scheme_host_port);
    client.set_connection_timeout(10);
    client.set_read_timeout(10);
    client.set_write_timeout(10);
    auto response = client.Post(url_->path, body, "application/json");
    if (!response)
      failures.push_back(fmt::format("--notify-url {}: {}", config_.url, httplib::to_string(response.error())));
    else if (response->status >= 300)
      failures.push_back(fmt::format("--notify-url {}: HTTP {}", config_.url, response->status));
  }
  if (failures.empty()) return;
  std::lock_guard lock(mutex_);
  for (auto& f : failures) notes_.push_back("gpusage: notification not delivered: " + f);
}

}  // namespace gpusage::run
