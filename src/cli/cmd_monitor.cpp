// gpusage monitor: `nvidia-smi -l 1` for people who train. The work is in src/monitor (run_monitor).
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/common/i18n.hpp"
#include "monitor/run.hpp"

namespace gpusage::cli {

void add_monitor_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "monitor",
      "Watch GPUs while you train: utilization, memory, power, clocks and throttle reasons, processes with their "
      "CPU use, and alerts (input bottleneck, throttling, memory nearly full, ECC errors,\n"
      "retired pages and remapped rows, and XID events the driver reports: each with what it means and the fix).\n"
      "Examples:\n"
      "  gpusage monitor                          # interactive view (q quits)\n"
      "  gpusage monitor --once                   # one summary\n"
      "  gpusage monitor --format csv --interval 0.5 --log run.csv\n"
      "  gpusage monitor --prometheus 127.0.0.1:9400\n"
      "Environment: GPUSAGE_NVML_LIBRARY=PATH loads NVML from PATH.");
  struct Settings {
    monitor::MonitorOptions run;
    Format format = Format::table;
    long count = 0;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--interval", settings->run.interval_s, i18n::N_("Seconds between samples, 0.1 to 3600"))
      ->default_str("1");
  command->add_flag("--once", settings->run.once, i18n::N_("Print one summary and exit"));
  // prometheus: the text /metrics serves, on stdout (for node_exporter's textfile collector, or to check it).
  add_format_option(*command, settings->format, {Format::table, Format::csv, Format::json, Format::prometheus});
  command->add_option(
      "--log", settings->run.log_path,
      i18n::N_("Append every sample to FILE: .csv for CSV, .jsonl for JSON Lines (written per sample)"));
  command->add_option("--prometheus", settings->run.prometheus,
                      i18n::N_("Serve /metrics at HOST:PORT (PORT alone binds 127.0.0.1)"));
  command->add_option("--simulate", settings->run.simulate_path,
                      i18n::N_("Replay a JSON Lines trace recorded with --format json or --log FILE.jsonl"));
  command->add_option("--count", settings->count, i18n::N_("Stop after N samples (default: run until q or Ctrl-C)"));
  command
      ->add_option(
          "--idle-alert-after", settings->run.alerts.low_utilization_window_s,
          i18n::N_("Seconds of low GPU utilization (with a training process) before the input-bottleneck alert"))
      ->default_str("30");
  command->callback([settings] {
    monitor::MonitorOptions run = settings->run;
    if (settings->count != 0) run.count = settings->count;
    switch (settings->format) {
      case Format::csv: run.view = monitor::View::csv; break;
      case Format::json: run.view = monitor::View::json; break;
      case Format::prometheus: run.view = monitor::View::prometheus; break;
      default:
        // The interactive view needs a terminal; piped or redirected, the summary streams as text.
        run.view = !run.once && ::isatty(STDOUT_FILENO) && ::isatty(STDIN_FILENO) ? monitor::View::interactive
                                                                                  : monitor::View::table;
    }
    run.width = terminal_width();
    monitor::run_monitor(run, std::cout, std::cerr);
  });
}

}  // namespace gpusage::cli
