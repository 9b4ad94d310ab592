// Each subcommand lives in its own file and registers itself on the root app here.
// A command's callback parses nothing by hand: CLI11 validates, the core computes, src/report renders.
// Errors: throw gpusage::InputError for user mistakes (exit 2); anything else is an internal failure (exit 1).
#pragma once

#include <CLI/CLI.hpp>

namespace gpusage::cli {

void add_gpus_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_guide_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_monitor_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_fit_batch_command(CLI::App& app);

// Thrown by a command whose exit status is its own result (gpusage run: the child's status).
struct ExitStatus {
  int code;
};
void add_docs_command(CLI::App& app);  // hidden: man page and completions for the build

}  // namespace gpusage::cli
