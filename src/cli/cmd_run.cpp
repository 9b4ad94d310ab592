// gpusage run -- CMD: one training run watched from start to end. The work is in src/run (supervise).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/io.hpp"
#include "core/workload/traced.hpp"
#include "core/workload/workload.hpp"
#include "run/supervisor.hpp"

namespace gpusage::cli {

void add_run_command(CLI::App& app) {
  struct State {
    run::RunRequest request;
    std::string model;
    std::string workload_file;
    std::optional<int> batch;
    std::string precision;
    std::string gpu;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "run",
      "Run a training program and watch it: its output passes through unchanged (on a pseudo-terminal when\n"
      "stdout is one) and goes to DIR/train.log; its GPUs are sampled into DIR/gpu.jsonl; the monitor's "
      "alerts\n"
      "and doctor's log rules (OOM, NaN loss, NCCL, DataLoader, ...) print as 'gpusage:' lines as they "
      "happen;\n"
      "at the end a summary (utilization, peak memory, energy, throughput, findings with fixes) goes to "
      "stderr,\n"
      "DIR/summary.json and DIR/report.html. Exits with the program's status (128+N when signal N killed "
      "it).\n"
      "The program sees DIR as $GPUSAGE_RUN_DIR.\n"
      "Examples:\n"
      "  gpusage run -- python train.py --epochs 3\n"
      "  gpusage run --log-dir runs/r1 --model resnet50 --batch 256 -- torchrun --nproc-per-node 2 train.py\n"
      "  gpusage run --prometheus 127.0.0.1:9400 -- python train.py");
  command
      ->add_option("--log-dir", state->request.log_dir,
                   "Directory for train.log, gpu.jsonl, summary.json, report.html")
      ->default_str("gpusage-runs/<UTC time>-<command name>");
  command->add_option("--interval", state->request.interval_s, "Seconds between GPU samples, 0.1 to 3600")
      ->default_str("1");
  command->add_option("--prometheus", state->request.prometheus,
                      "Serve /metrics at HOST:PORT while the run lasts (PORT alone binds 127.0.0.1)");
  command
      ->add_option(
          "--idle-alert-after", state->request.alerts.low_utilization_window_s,
          "Seconds of low GPU utilization (with the run's process on it) before the input-bound alert")
      ->default_str("30");
  command->add_option("--model", state->model, "Zoo model of the run, for the OOM fix (e.g. resnet50, gpt2)");
  command->add_option("--workload", state->workload_file,
                      "Or the run's model traced by gpusage-trace (its workload JSON), for the OOM fix")
      ->excludes("--model");
  command->add_option("--batch", state->batch, "Per-GPU batch of the run (default: what the log prints)")
      ->check(CLI::Range(1, 1 << 24));
  command
      ->add_option("--precision", state->precision,
                   "fp32 | tf32 | fp16 | bf16 | fp8 of the run (default fp32)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "fp8"}));
  command->add_option("--gpu", state->gpu, "GPU of the run, for the OOM fix (default: the capacity the OOM message reports)");
  command->add_option("command", state->request.command, "The program and its arguments, after --")
      ->required();
  command->callback([state] {
    run::RunRequest request = state->request;
    // Bad names fail here, before the child starts.
    std::optional<workload::Workload> workload;
    if (!state->model.empty()) workload = workload::build(state->model);
    if (!state->workload_file.empty()) {
      workload = workload::from_traced_workload(io::read_file(state->workload_file, "traced workload"),
                                                state->workload_file);
    }
    const catalog::Catalog& catalog = catalog::Catalog::active();
    if (!state->gpu.empty()) request.context.gpu = &catalog.resolve(state->gpu);
    request.context.workload = workload ? &*workload : nullptr;
    request.context.batch = state->batch;
    if (!state->precision.empty()) request.context.precision = catalog::parse_precision(state->precision);
    request.command_line = "gpusage run";
    for (const auto& a : request.command) request.command_line += " " + a;
    const int status = run::supervise(request);
    if (status != 0) throw ExitStatus{status};
  });
}

}  // namespace gpusage::cli
