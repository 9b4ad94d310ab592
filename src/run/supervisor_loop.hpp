// Internal to run: the event loop of `gpusage run` (supervisor.cpp opens the run's files and writes its summary).
// One poll loop over the child's output, its signals, the typed input and the sampling thread's wake-ups; each
// event has its handler, and after each round the decisions (log rules, hang, stop, notes) are taken over one
// state (LoopState). Nothing here prints the summary.
#pragma once

#include <poll.h>

#include <array>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "monitor/alerts.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/prometheus_server.hpp"
#include "monitor/sampler.hpp"
#include "run/advice.hpp"
#include "run/child.hpp"
#include "run/expectation.hpp"
#include "run/hang.hpp"
#include "run/log_watch.hpp"
#include "run/output_lines.hpp"
#include "run/run_notifications.hpp"
#include "run/sampling_thread.hpp"
#include "run/summary.hpp"
#include "run/supervisor.hpp"
#include "run/train_log.hpp"

namespace gpusage::run {

// What the loop works with, made before the child starts (supervisor.cpp) and outliving the loop.
struct RunResources {
  std::string executable;
  monitor::Sampler* sampler = nullptr;
  monitor::AlertEngine* alerts = nullptr;
  monitor::LogWriter* gpu_log = nullptr;
  monitor::PrometheusServer* prometheus = nullptr;  // null without --prometheus
  TrainLog* train_log = nullptr;
  std::optional<ExpectationWatch>* expectation = nullptr;
  RunNotifications* notify = nullptr;
};

// One output stream of the child on its way to one of gpusage's descriptors and to train.log.
struct Stream {
  int from = -1;
  int to = -1;
  bool open = false;
  bool at_line_start = true;
  LineAssembler lines;
};

// Everything the handlers change while the run lasts.
struct LoopState {
  std::array<Stream, 2> streams;  // the child's stdout (or pty), its stderr in pipe mode
  bool stdout_gone = false, stderr_gone = false;
  bool stdin_open = false;
  std::string to_child;                     // typed input the child has not read yet
  std::vector<std::string> pending;         // our lines, waiting for the child's output to reach a line end
  std::map<std::string, double> last_said;  // rate limit per alert (kind, GPU)
  std::deque<std::string> last_lines;       // the hang finding's evidence
  std::vector<TimedThroughput> throughput;
  std::vector<diagnose::Finding> live_findings;  // the run's own (expectation, hang); the log's come at the end
  std::optional<HangWatch> hang;
  bool implausible_said = false;  // run-throughput-implausible announced
  double last_output_s = 0;
  double last_scan_s = 0;
  double last_interrupt_s = -1e9;
  std::optional<double> kill_after_s;  // gpusage sent SIGTERM: SIGKILL at this time if still running
  std::optional<std::string> stopped_by;
  std::optional<int> wait_status;
  double exited_at_s = 0;
};

// The pipe the sampling thread writes a byte to when it has something to say; closed last.
struct WakePipe {
  WakePipe();
  ~WakePipe();
  WakePipe(const WakePipe&) = delete;
  WakePipe& operator=(const WakePipe&) = delete;
  int read_fd = -1, write_fd = -1;
};

class SupervisorLoop {
 public:
  // Start: spawns the child (on a pty when stdout is a terminal) and the sampling thread.
  SupervisorLoop(const RunRequest& request, const RunResources& resources);
  SupervisorLoop(const SupervisorLoop&) = delete;
  SupervisorLoop& operator=(const SupervisorLoop&) = delete;

  // Until the child has exited and its output has ended (or stayed quiet for a second after).
  void run();
  // The end: the output's last bytes, the child reaped, the sampling stopped, the last alerts and findings said.
  // Returns the run's wall time in seconds.
  double finish();

  const LoopState& state() const { return state_; }
  SamplingThread& sampling() { return *sampling_; }

 private:
  // One round of poll: the descriptors to watch and how long to wait.
  std::vector<pollfd> poll_set() const;
  int poll_timeout_ms() const;
  // Handlers, one per event.
  void on_signals();
  void on_signal(int signo);
  void on_wake();
  void on_input();
  void on_child_writable();
  void on_output(Stream& s);
  // What the output's lines feed: throughput, the hang's evidence, the log rules.
  void take_lines(const std::vector<std::string>& lines);
  // Decisions after each round.
  void scan_log(bool now);
  void announce_alerts();
  void check_hang();
  void enforce_stop();
  void flush_pending(bool force);
  // Our lines and our interventions.
  void say(std::string line) { state_.pending.push_back(std::move(line)); }
  void stop_run(const char* why);
  void interrupt();
  void forward(int signo);

  const RunRequest& request_;
  RunResources res_;
  WakePipe wake_;
  SignalRoute signals_;
  Spawned child_;
  double started_mono_s_ = 0;
  std::optional<RawTerminal> raw_;
  std::optional<SamplingThread> sampling_;
  LogWatch watch_;
  RunPractice practice_;                // what the advice need not recommend
  const catalog::Gpu* card_ = nullptr;  // the predicted card, for the plausibility of throughput
  const bool stderr_tty_;
  LoopState state_;
  std::array<char, 65536> buffer_{};
};

}  // namespace gpusage::run
