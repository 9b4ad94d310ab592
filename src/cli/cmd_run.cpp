// gpusage run -- CMD: one training run watched from start to end. The work is in src/run (supervise).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/i18n.hpp"
#include "core/workload/workload.hpp"
#include "run/supervisor.hpp"

namespace gpusage::cli {

void add_run_command(CLI::App& app) {
  struct State {
    run::RunRequest request;
    setup::TrainingSetup workload;  // the run's model and training setup, its --batch and --gpu
    std::string notify_level = "warning";
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
      "Given the workload (--model, --hf-config or --workload, --batch, and plan's options: --precision,\n"
      "--seq-len, --lora, ...), run predicts the run once at the start as `gpusage plan` would on its GPU (the card "
      "NVML names, or\n"
      "--gpu) and keeps the prediction beside what it measures: throughput against plan's 80% interval (a\n"
      "finding when the program's own throughput lines stay outside it for --expect-window seconds), memory\n"
      "against NVML's peak, utilization, and MFU: model FLOPs per sample x measured samples/s over the card's\n"
      "dense tensor peak for the precision (docs/MODEL.md). One 'it' (tqdm) or step is --batch x --accumulate\n"
      "samples per GPU. The summary then reads, for example (a scripted run at 2 it/s under the NVML stub):\n"
      "  gpusage: predicted (plan) for ResNet-50 bf16 batch 256 on GeForce RTX 5090, against measured:\n"
      "  gpusage:   throughput   predicted 1753 samples/s (80%: 1731-2056), measured 2 it/s median = 512\n"
      "             samples/s per GPU: below the interval\n"
      "  gpusage:   as planned   gpusage plan --model resnet50 --precision bf16 --batch 256 --gpu rtx5090\n"
      "  gpusage:   memory       predicted 12.9 GiB, measured peak 18.6 GiB\n"
      "  gpusage:   utilization  predicted 100% (no host stalls), measured median 12%\n"
      "  gpusage: MFU 6.0%: 12.5 TFLOPS achieved of 209.5 dense bf16 TFLOPS on GeForce RTX 5090 (24.4 GFLOP\n"
      "           per sample x 512 samples/s)\n"
      "  gpusage: time [sssssssssiiiiiiiiiiiiiiiiiiiiiiiiiii####] startup 23%, input wait 67%, eval/checkpoint 0%,\n"
      "           training 9% (s i e #)\n"
      "The time bar (whenever the program prints throughput lines) splits the wall time into startup (before\n"
      "the first line), input wait (GPU idle while steps flow), evaluation/checkpointing (the lines paused) and\n"
      "training, and names the fix for the largest avoidable share (docs/MODEL.md: how, and its limits).\n"
      "GPU health is watched too: an XID the driver reports through NVML (its number, the GPU, the time, what it\n"
      "usually means and NVIDIA's next step), uncorrected ECC errors that appear during the run, pages retired or\n"
      "rows remapped during it, a retirement or remap waiting for a GPU reset, and a remapping failure are\n"
      "alerts with the fix (reset the GPU, drain the node, RMA), e.g.\n"
      "  gpusage: alert: GPU 0 at 2026-12-02T21:13:05Z: XID 79 (GPU has fallen off the bus): the GPU stopped\n"
      "           answering on PCIe; ... Next: drain the node and reboot it ...\n"
      "A GPU without these counters (GeForce cards, ECC off) simply has none of these alerts.\n"
      "Examples:\n"
      "  gpusage run -- python train.py --epochs 3\n"
      "  gpusage run --model resnet50 --batch 256 --precision bf16 -- python train.py\n"
      "  gpusage run --log-dir runs/r1 --model gpt2 --batch 8 --gpus 2 -- torchrun --nproc-per-node 2 train.py\n"
      "  gpusage run --hang-after 600 --kill-on-hang -- torchrun --nproc-per-node 8 train.py\n"
      "  gpusage run --notify-url https://ntfy.sh/my-runs --hang-after 900 -- python train.py\n"
      "  gpusage run --prometheus 127.0.0.1:9400 -- python train.py");
  command
      ->add_option("--log-dir", state->request.log_dir,
                   i18n::N_("Directory for train.log, gpu.jsonl, summary.json, report.html"))
      ->default_str("gpusage-runs/<UTC time>-<command name>");
  command->add_option("--interval", state->request.interval_s, i18n::N_("Seconds between GPU samples, 0.1 to 3600"))
      ->default_str("1");
  command->add_option("--prometheus", state->request.prometheus,
                      i18n::N_("Serve /metrics at HOST:PORT while the run lasts (PORT alone binds 127.0.0.1)"));
  command
      ->add_option(
          "--idle-alert-after", state->request.alerts.low_utilization_window_s,
          i18n::N_("Seconds of low GPU utilization (with the run's process on it) before the input-bound alert"))
      ->default_str("30");
  command
      ->add_option(
          "--expect-window", state->request.expectation_window_s,
          i18n::N_("Seconds the program's throughput must stay outside plan's 80% interval before the finding"))
      ->default_str("60");
  command
      ->add_option("--hang-after", state->request.hang_after_s,
                   i18n::N_("Seconds with no output before the hang finding, however busy the GPUs (ranks waiting in a "
                            "collective keep theirs at 100%): what the GPUs and each process of the run were doing "
                            "(state, wait channel) and the last lines it printed"))
      ->check(CLI::Range(1e-3, 604800.0));
  command->add_flag(
      "--kill-on-hang", state->request.kill_on_hang,
      i18n::N_("End a hung run: SIGTERM to the program's process group, SIGKILL 5 s later (needs --hang-after)"));
  command->add_option(
      "--notify", state->request.notify.command,
      i18n::N_("Run CMD (with sh -c) for each finding or alert at --notify-level or above and at the end, "
               "with the event as JSON on its stdin (e.g. 'jq -r .text | mail -s run me@example.org')"));
  command->add_option(
      "--notify-url", state->request.notify.url,
      i18n::N_("POST the same JSON to URL (a webhook: ntfy, Slack-compatible, anything that takes JSON); "
               "at most 6 live events a minute, the end always"));
  command
      ->add_option(
          "--notify-level", state->notify_level,
          i18n::N_("Least severity that notifies while the run lasts: info | warning | error (the end always does)"))
      ->capture_default_str();
  // Without autocast PyTorch trains in fp32: the run's default, where plan's is fp16.
  state->workload.precision = "fp32";
  SetupDoor door;
  door.model_help = i18n::N_(
      "Zoo model of the run (e.g. resnet50, gpt2; `gpusage plan --help` lists them): the OOM fix, and "
      "with --batch the prediction");
  door.batch_help = i18n::N_("Per-GPU batch of the run (default: what the log prints)");
  door.single_batch = true;
  door.gpu_help = i18n::N_(
      "GPU of the run, for the OOM fix and the prediction (default: the card NVML names; for the OOM "
      "fix, the capacity the OOM message reports)");
  const auto layers = bind_setup(*command, state->workload, door);
  command->add_option("command", state->request.command, i18n::N_("The program and its arguments, after --"))
      ->required();
  command->callback([state, command, layers] {
    run::RunRequest request = state->request;
    request.notify.level = run::parse_notify_level(state->notify_level);
    const setup::TrainingSetup& options = state->workload;
    // Bad names and options fail here, before the child starts.
    std::optional<workload::Workload> workload;
    if (options.has_model()) {
      workload = options.build_workload();
      options.build_timed_workload(*workload);
      options.training_config(*workload);
      options.calibration();
    }
    print_setup_layers(*layers);  // where --recipe and --train-config set what the prediction uses
    const catalog::Catalog& catalog = catalog::Catalog::active();
    if (!options.gpu.empty()) request.context.gpu = &catalog.resolve(options.gpu_spec(options.gpu, catalog));
    request.context.workload = workload ? &*workload : nullptr;
    if (!options.batch.empty()) request.context.batch = std::stoi(options.batch);  // checked: 1 to 2^24
    if (command->get_option("--precision")->count() > 0)
      request.context.precision = catalog::parse_precision(options.precision);
    if (workload && request.context.batch) {
      run::ExpectationRequest& expect = request.expectation.emplace();
      expect.setup = options;
      expect.gpu = request.context.gpu;
    } else if (workload) {
      fmt::print(stderr, "gpusage: {}\n",
                 i18n::tr("no prediction: give --batch (the per-GPU batch) with --model, --hf-config or --workload"));
    }
    request.command_line = "gpusage run";
    for (const auto& a : request.command) request.command_line += " " + a;
    const int status = run::supervise(request);
    if (status != 0) throw ExitStatus{status};
  });
}

}  // namespace gpusage::cli
