// gpusage fit-batch -- CMD ... {batch} ...: the largest batch that trains, found by running the command. The
// search and the report are in src/run/fit_batch; each try is `gpusage run`'s supervisor.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/time.hpp"
#include "core/device/backend.hpp"
#include "core/setup/plan.hpp"
#include "run/child.hpp"
#include "run/expectation.hpp"
#include "run/fit_batch.hpp"
#include "run/supervisor.hpp"

namespace gpusage::cli {

namespace {

// plan's largest fitting batch for the workload on --gpu, else on the card NVML names; none when neither is
// known.
std::optional<int> predicted_largest(const setup::TrainingSetup& options) {
  const catalog::Catalog& catalog = catalog::Catalog::active();
  const catalog::Gpu* gpu = options.gpu.empty() ? nullptr : &catalog.resolve(options.gpu_spec(options.gpu, catalog));
  if (!gpu) {
    auto backend = device::open_nvml_backend();
    const device::SystemInfo& system = backend->system();
    if (!system.available || system.gpus.empty()) return std::nullopt;
    try {
      gpu = &run::catalog_card(system.gpus.front());
    } catch (const InputError&) {
      return std::nullopt;  // a card the catalog does not know: the search starts from 1
    }
  }
  // plan --batch auto on the card: the same prediction as every other command's (setup::run_plan).
  estimate::SweepRequest request;
  request.gpus = {gpu};
  const estimate::Sweep sweep = setup::run_plan(options, request);
  const int largest = sweep.predictions.front().max_batch;
  return largest > 0 ? std::optional<int>(largest) : std::nullopt;
}

}  // namespace

void add_fit_batch_command(CLI::App& app) {
  struct State {
    setup::TrainingSetup workload;  // the command's model and setup, --gpu and --target-batch
    std::vector<std::string> command;
    int steps = 5;
    std::optional<int> start;
    int max_batch = 65536;
    double try_timeout_s = 600;
    double timeout_s = 3600;
    std::string log_dir;
    double interval_s = 1;
    Format format = Format::table;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "fit-batch",
      "Find the largest batch that trains, by running your command: {batch} in it is replaced by each\n"
      "batch tried. Each try runs under `gpusage run` (GPUs sampled, logs in DIR/try-N-batch-B) until the\n"
      "program prints --steps throughput lines (tqdm, Hugging Face, Lightning, Keras), then gpusage stops it\n"
      "and its process group; a CUDA/TensorFlow/JAX out-of-memory error in its output fails the try, any\n"
      "other failure ends the search. The search doubles from --start (default: plan's predicted largest\n"
      "batch when --model or --hf-config is given, else 1), then bisects. The program's output goes to\n"
      "stderr; stdout holds only the report. No change to your code; any framework, torchrun included.\n"
      "Examples:\n"
      "  gpusage fit-batch -- python train.py --batch-size {batch} --max-steps 20\n"
      "  gpusage fit-batch --model resnet50 --precision bf16 --target-batch 1024 -- python train.py --bs "
      "{batch}\n"
      "  gpusage fit-batch --steps 3 --try-timeout 300 -- torchrun --nproc-per-node 2 train.py --batch "
      "{batch}");
  command->add_option("--steps", state->steps, i18n::N_("Throughput lines a try must print to count as trained"))
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--start", state->start, i18n::N_("First batch to try (default: plan's prediction, else 1)"))
      ->check(CLI::Range(1, 1 << 24));
  command->add_option("--max-batch", state->max_batch, i18n::N_("Largest batch to try"))
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  command
      ->add_option("--try-timeout", state->try_timeout_s,
                   i18n::N_("Seconds one try may run before it is stopped (a failure)"))
      ->check(CLI::Range(1.0, 604800.0))
      ->capture_default_str();
  command->add_option("--timeout", state->timeout_s, i18n::N_("Seconds the whole search may take"))
      ->check(CLI::Range(1.0, 604800.0))
      ->capture_default_str();
  command->add_option("--log-dir", state->log_dir, i18n::N_("Directory for the tries' logs"))
      ->default_str("gpusage-runs/<UTC time>-fit-batch");
  command->add_option("--interval", state->interval_s, i18n::N_("Seconds between GPU samples, 0.1 to 3600"))
      ->default_str("1");
  add_format_option(*command, state->format, {Format::table, Format::json});
  state->workload.precision = "fp32";  // as `gpusage run`: PyTorch's default without autocast
  SetupDoor door;
  door.model_help = i18n::N_("Zoo model of the command, to start from plan's prediction");
  door.gpu_help = i18n::N_("GPU for the prediction (default: the card NVML names)");
  door.target_batch_help =
      i18n::N_("Global batch per GPU to keep: prints the accumulation plan with the largest batch that ran");
  const auto layers = bind_setup(*command, state->workload, door);
  command->add_option("command", state->command, i18n::N_("The program and its arguments, after --, with {batch}"))
      ->required();
  command->callback([state, layers] {
    bool has_placeholder = false;
    for (const auto& a : state->command) has_placeholder = has_placeholder || a.find("{batch}") != std::string::npos;
    if (!has_placeholder)
      throw InputError(
          i18n::tr("fit-batch: the command has no {batch}: write it where the batch size goes, e.g. "
                   "-- python train.py --batch-size {batch}"));
    print_setup_layers(*layers);
    run::FitBatchReport report;
    report.target_batch = state->workload.target_batch;
    if (state->workload.has_model()) report.predicted = predicted_largest(state->workload);
    const int start = state->start.value_or(report.predicted.value_or(1));
    const std::string dir =
        state->log_dir.empty() ? run::default_log_dir({"fit-batch"}, wallclock::unix_now_s()) : state->log_dir;
    run::BatchSearch search(std::min(start, state->max_batch), state->max_batch);
    const double began_s = run::monotonic_s();
    while (auto batch = search.next()) {
      const double left_s = state->timeout_s - (run::monotonic_s() - began_s);
      if (left_s <= 0) {
        report.stopped = i18n::trf("the search's --timeout {:g} s was reached", state->timeout_s);
        break;
      }
      run::RunRequest request;
      request.command = run::with_batch(state->command, *batch);
      request.log_dir =
          (std::filesystem::path(dir) / fmt::format("try-{}-batch-{}", report.tries.size() + 1, *batch)).string();
      request.interval_s = state->interval_s;
      request.stop_after_steps = state->steps;
      request.output_to_stderr = true;  // stdout holds only the report
      request.time_limit_s = std::min(state->try_timeout_s, left_s);
      request.command_line = "gpusage fit-batch";
      fmt::print(stderr, "{}", i18n::trf("gpusage: fit-batch: try {}: batch {}\n", report.tries.size() + 1, *batch));
      const run::RunSummary summary = run::supervise_run(request);
      run::Try t;
      t.batch = *batch;
      t.result = run::classify(summary);
      t.exit_code = summary.exit_code;
      t.wall_s = summary.wall_s;
      t.log_dir = summary.log_dir;
      for (const auto& g : summary.gpus)
        if (g.memory_peak_bytes)
          t.memory_peak_bytes = std::max(t.memory_peak_bytes.value_or(0), static_cast<double>(*g.memory_peak_bytes));
      if (!summary.throughput.empty()) t.throughput = summary.throughput.front();
      report.tries.push_back(t);
      if (t.result == run::TryResult::failed) {
        report.stopped = i18n::trf("batch {} failed without an out-of-memory error ({}; see {}/train.log)", *batch,
                                   summary.stopped_by == "time-limit" ? i18n::tr("it ran past --try-timeout")
                                                                      : i18n::trf("exit status {}", summary.exit_code),
                                   summary.log_dir);
        break;
      }
      search.record(*batch, t.result == run::TryResult::ran);
    }
    report.largest = search.largest_ran();
    if (state->format == Format::json)
      fmt::print("{}\n", run::to_json(report).dump(2));
    else
      fmt::print("{}", run::render_text(report));
  });
}

}  // namespace gpusage::cli
