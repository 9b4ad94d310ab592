// `gpusage run -- CMD`: starts CMD in its own process group (on a pseudo-terminal when stdout is a terminal),
// passes its output through unchanged while copying it to DIR/train.log, samples the GPUs its process tree
// uses into DIR/gpu.jsonl, announces the monitor's alerts and doctor's log findings as they appear, and at
// the end writes DIR/summary.json and DIR/report.html and prints the summary. The child finds DIR in
// $GPUSAGE_RUN_DIR.
//
// Exit status: the child's, or 128+N when signal N killed it (143 when --kill-on-hang ended a hung run). Ctrl-C,
// SIGTERM and SIGHUP are forwarded to the child's group; a second Ctrl-C within 3 s kills the group (SIGKILL).
//
// Flow control: output is copied with blocking writes, so when the terminal or the disk is slower than the
// child, gpusage stops reading and the child blocks on its own write. Nothing is dropped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/log_rules.hpp"
#include "monitor/alerts.hpp"
#include "run/expectation.hpp"
#include "run/notify.hpp"
#include "run/summary.hpp"

namespace gpusage::run {

struct RunRequest {
  std::vector<std::string> command;  // CMD and its arguments
  std::string log_dir;               // empty: gpusage-runs/<UTC time>-<command name>
  double interval_s = 1.0;
  std::string prometheus;  // HOST:PORT, empty for none
  monitor::AlertConfig alerts;
  diagnose::RunContext context;  // --model/--batch/--gpu for the OOM fix
  std::string command_line;      // as typed, for the report page
  // plan's workload options given: predict once at the start and watch the throughput against it.
  std::optional<ExpectationRequest> expectation;
  // Seconds the throughput must stay outside the 80% interval before the finding.
  double expectation_window_s = 60;
  // --hang-after: seconds without output before the hang finding, whatever the GPUs do (run/hang.hpp); none: no
  // watchdog.
  std::optional<double> hang_after_s;
  bool kill_on_hang = false;  // then SIGTERM to the child's group, SIGKILL 5 s later if it is still there
  NotifyConfig notify;        // --notify, --notify-url, --notify-level
  // fit-batch's tries: end the run (SIGTERM, SIGKILL 5 s later) after this many throughput lines, or this long.
  std::optional<int> stop_after_steps;
  std::optional<double> time_limit_s;
  // The child's stdout goes to gpusage's stderr (through pipes), so that gpusage's own stdout carries only its
  // report (fit-batch's table or JSON).
  bool output_to_stderr = false;
};

// "gpusage-runs/20261202T205012Z-python": the default log directory for a run started at `unix_time_s`.
std::string default_log_dir(const std::vector<std::string>& command, double unix_time_s);

// Where execvp would find `name` on `path` ($PATH); a name with a '/' is taken as it is. Empty when none is
// an executable file.
std::string resolve_executable(const std::string& name, const std::string& path);

// Throws InputError (exit 2) for bad options, a command that cannot be found and a log directory that cannot
// be created; nothing is started then. Returns the exit status described above.
int supervise(const RunRequest& request);
// The same, returning the summary (its exit_code is the status above).
RunSummary supervise_run(const RunRequest& request);

}  // namespace gpusage::run
