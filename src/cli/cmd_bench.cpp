// `gpusage bench`: runs gpusage-bench (the LibTorch benchmark, a separate binary so that the gpusage
// binary never links LibTorch) as a child process, then prints measured and predicted side by side.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/bench_options.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/json.hpp"
#include "core/common/subprocess.hpp"
#include "core/common/units.hpp"
#include "core/estimate/compare.hpp"
#include "report/table.hpp"

extern char** environ;

namespace gpusage::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct BenchCommand {
  bench::BenchOptions options;
  Format format = Format::table;
  std::string out;
};

// $GPUSAGE_BENCH_BINARY, else beside this binary (installed), else the build tree's src/bench.
std::string find_bench_binary() {
  if (const char* env = std::getenv("GPUSAGE_BENCH_BINARY"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate :
         {self.parent_path() / "gpusage-bench", self.parent_path().parent_path() / "bench" / "gpusage-bench"}) {
      if (fs::exists(candidate, ec)) return candidate.string();
    }
  }
  // The wheel, tarball and .deb carry no gpusage-bench: it links the user's own LibTorch (README "Install").
  throw InputError(i18n::tr(
      "gpusage bench needs gpusage-bench, the LibTorch benchmark, which the wheel, tarball and .deb do not carry "
      "(it links your LibTorch): build it from source with `make bench` (or -DGPUSAGE_BUILD_BENCH=ON and "
      "-DCMAKE_PREFIX_PATH=/path/to/libtorch), then put it beside gpusage or set GPUSAGE_BENCH_BINARY"));
}

// Runs the benchmark, forwarding its progress lines to stderr. Returns its exit code and, when it was 2,
// its one-line error (without the "gpusage-bench: " prefix) in `error_line` instead of forwarding it.
int run_child(const std::string& binary, const std::vector<std::string>& args, std::string& error_line) {
  process::Options options;
  options.argv = {binary};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.capture = process::Stream::standard_error;
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("GPUSAGE_BENCH_PROGRESS=", 0) != 0) environment.emplace_back(*e);
  if (::isatty(STDERR_FILENO)) environment.emplace_back("GPUSAGE_BENCH_PROGRESS=tty");
  options.environment = std::move(environment);
  // Live "\r" progress updates go straight through; complete lines are held back by one, because when
  // the child fails with exit 2 its last line is the error message, which is reported once, by us.
  std::string pending, held;
  options.on_output = [&](std::string_view chunk) {
    pending.append(chunk);
    std::size_t end;
    while ((end = pending.find_first_of("\r\n")) != std::string::npos) {
      if (!held.empty()) std::cerr << held << "\n";
      held.clear();
      if (pending[end] == '\r') {
        std::cerr << pending.substr(0, end + 1);
      } else {
        held = pending.substr(0, end);
      }
      pending.erase(0, end + 1);
      std::cerr << std::flush;
    }
  };
  const process::Result result = process::run(options);
  if (!result.started) throw std::runtime_error(fmt::format("could not start {}", binary));
  if (!pending.empty()) {
    if (!held.empty()) std::cerr << held << "\n";
    held = pending;
  }
  const int code = result.exit_code < 0 ? 1 : result.exit_code;
  const std::string prefix = "gpusage-bench: ";
  if (code == 2 && held.rfind(prefix, 0) == 0) {
    error_line = held.substr(prefix.size());
  } else if (!held.empty()) {
    std::cerr << held << "\n";
  }
  return code;
}

json null_prediction(const std::string& reason) {
  return {{"throughput", nullptr},   {"step_time_s", nullptr}, {"max_batch", nullptr},
          {"memory_bytes", nullptr}, {"gpu", nullptr},         {"reason", reason}};
}

// The comparison written into the JSON document gpusage-bench produced: beside each run, plan's prediction
// (or null with the reason) and the throughput error; plan's max_batch beside --batch auto's search.
void add_predictions(json& report, const estimate::BenchComparison& compared) {
  json& runs = report["runs"];
  for (std::size_t i = 0; i < runs.size() && i < compared.runs.size(); ++i) {
    const estimate::RunComparison& r = compared.runs[i];
    if (r.prediction) {
      const estimate::Prediction& p = *r.prediction;
      runs[i]["prediction"] = {{"throughput", p.throughput}, {"step_time_s", p.time.step_s},
                               {"max_batch", p.max_batch},   {"memory_bytes", p.memory.total_bytes()},
                               {"gpu", p.gpu->id},           {"reason", nullptr}};
    } else {
      runs[i]["prediction"] = null_prediction(compared.reason);
    }
    runs[i]["throughput_error"] = json_util::optional(r.throughput_error);
  }
  if (report["batch_search"].is_object()) {
    const bool predicted = !compared.runs.empty() && compared.runs.front().prediction;
    report["batch_search"]["plan_max_batch"] =
        predicted ? json(compared.runs.front().prediction->max_batch) : json(nullptr);
  }
}

std::string number_or(const std::optional<double>& value, int decimals) {
  return value ? report::format_number(*value, decimals) : "n/a";
}

std::string render_table(const estimate::BenchFile& file, const estimate::BenchComparison& compared) {
  report::Table table;
  table.columns = {{"batch", "", report::Align::right},
                   {"status", "", report::Align::left},
                   {"measured", "samples/s"},
                   {"predicted", "samples/s", report::Align::right, 1},
                   {"error", "%", report::Align::right, 1},
                   {"p50", "ms"},
                   {"p90", "ms", report::Align::right, 2},
                   {"p99", "ms", report::Align::right, 2},
                   {"CV", "%", report::Align::right, 3},
                   {"data wait", "%", report::Align::right, 3},
                   {"peak memory", "", report::Align::right, 2}};
  // --data DIR: the loader alone (images/s) and the workers that keep the model fed.
  const bool loader = std::any_of(file.runs.begin(), file.runs.end(), [](const auto& run) { return run.loader; });
  if (loader) {
    table.columns.push_back({"loader", "images/s", report::Align::right, 1});
    table.columns.push_back({"workers needed", "", report::Align::right, 1});
  }
  for (std::size_t i = 0; i < file.runs.size(); ++i) {
    const estimate::BenchRun& run = file.runs[i];
    const estimate::RunComparison& compared_run = compared.runs[i];
    auto ms = [&](double estimate::StepTimeSummary::*field) {
      return run.step_time ? report::format_number((*run.step_time).*field * 1e3, 1) : std::string("n/a");
    };
    std::string batch = std::to_string(run.batch);
    if (run.accumulate > 1) batch += fmt::format(" x{}", run.accumulate);
    const auto percent = [](const std::optional<double>& fraction) {
      return fraction ? report::format_number(*fraction * 100, 1) : std::string("n/a");
    };
    table.add_row({batch, run.ok ? "ok" : fmt::format("failed: {}", run.failure), number_or(run.throughput, 1),
                   compared_run.prediction ? report::format_number(compared_run.prediction->throughput, 1) : "n/a",
                   percent(compared_run.throughput_error), ms(&estimate::StepTimeSummary::p50_s),
                   ms(&estimate::StepTimeSummary::p90_s), ms(&estimate::StepTimeSummary::p99_s),
                   run.step_time ? report::format_number(run.step_time->cv * 100, 1) : "n/a",
                   percent(run.data_wait_fraction),
                   run.peak_memory_bytes ? units::format_bytes(*run.peak_memory_bytes) : "n/a"});
    if (loader) {
      table.rows.back().push_back(run.loader ? number_or(run.loader->images_per_s, 1) : "n/a");
      table.rows.back().push_back(run.loader ? number_or(run.loader->workers_needed, 0) : "n/a");
    }
    if (!run.ok) table.notes.push_back(fmt::format("batch {}: {}", run.batch, run.reason));
  }
  table.notes.push_back(fmt::format(
      "{} ({} parameters), {}, {}, {} timed steps after {} warm-up, {}; {} on {} ({} threads), LibTorch {}", file.model,
      number_or(file.model_params, 0), file.precision, file.optimizer, file.steps ? std::to_string(*file.steps) : "n/a",
      file.warmup ? std::to_string(*file.warmup) : "n/a", file.data_mode, file.device, file.device_name,
      file.torch_threads ? std::to_string(*file.torch_threads) : "n/a", file.libtorch_version));
  for (const auto& run : file.runs) {
    if (!run.loader) continue;
    const estimate::LoaderSummary& l = *run.loader;
    table.notes.push_back(fmt::format(
        "--data: {} images in {} classes; loader alone before training: {} images/s with {} workers, {} per "
        "worker; workers needed = ceil(model images/s without data wait ({}) / per-worker rate)",
        number_or(file.data_images, 0), number_or(file.data_classes, 0), number_or(l.images_per_s, 1), l.workers,
        number_or(l.per_worker_images_per_s, 1), number_or(l.model_images_per_s, 1)));
    break;
  }
  table.notes.push_back(compared.gpu ? "predicted: gpusage plan for " + compared.gpu->id +
                                           "; error = (measured - predicted) / predicted"
                                     : "predicted: " + compared.reason);
  if (file.batch_search) {
    const bool predicted = !compared.runs.empty() && compared.runs.front().prediction;
    table.notes.push_back(
        fmt::format("--batch auto: largest batch that trains: {} ({} trials); plan's max_batch: {}",
                    file.batch_search->max_batch, file.batch_search->trials,
                    predicted ? report::format_number(compared.runs.front().prediction->max_batch) : "n/a"));
  }
  if (file.distributed) {
    const estimate::DistributedSummary& d = *file.distributed;
    std::string per_rank;
    for (const auto& t : d.rank_throughputs) per_rank += (per_rank.empty() ? "" : ", ") + number_or(t, 1);
    table.notes.push_back(fmt::format(
        "--distributed {} ({}): per-process {} samples/s, total {}; one process alone {}; scaling efficiency {}",
        d.processes, d.backend, per_rank, number_or(d.total_throughput, 1), number_or(d.baseline_throughput, 1),
        d.scaling_efficiency ? report::format_number(*d.scaling_efficiency * 100, 1) + " %" : "n/a"));
  }
  for (const auto& w : file.warnings) table.notes.push_back("warning: " + w);
  table.dropped_hint = "use --format json for every field";
  return report::render_text(table, terminal_width());
}

void run_bench(BenchCommand& command) {
  bench::validate(command.options);  // bad values are reported before anything starts
  const std::string binary = find_bench_binary();
  std::string temp = (fs::temp_directory_path() / "gpusage-bench-XXXXXX").string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw std::runtime_error("could not create a temporary file for the benchmark's results");
  ::close(fd);
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove_temp{temp};

  std::vector<std::string> args = bench::to_arguments(command.options);
  args.insert(args.end(), {"--out", temp});
  std::string error_line;
  const int code = run_child(binary, args, error_line);
  if (code == 2) throw InputError(error_line.empty() ? "gpusage-bench rejected the options" : error_line);
  if (code != 0) throw std::runtime_error(fmt::format("gpusage-bench failed with exit code {}", code));

  const std::string text = io::read_file(temp, "gpusage-bench result");
  const estimate::BenchFile file = estimate::parse_bench_file(text, binary, "gpusage-bench result");
  // bench has no --calibration: the prediction is plan's with the default constants.
  const estimate::BenchComparison compared =
      estimate::compare_bench(file, estimate::Calibration{}, catalog::Catalog::active());
  if (command.format == Format::json) {
    json report = json::parse(text);
    add_predictions(report, compared);
    emit(report.dump(2) + "\n", command.out);
  } else {
    emit(render_table(file, compared), command.out);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "bench", i18n::N_("Measure training throughput on this machine (LibTorch) beside plan's prediction"));
  auto state = std::make_shared<BenchCommand>();
  bench::add_bench_options(*command, state->options);
  add_format_option(*command, state->format, {Format::table, Format::json});
  command->add_option("--out", state->out, i18n::N_("Write the output to FILE (atomically) instead of stdout"));
  command->footer(
      "Examples:\n"
      "  gpusage bench resnet18 --device cpu --resolution 64 --batch 2,4,8 --steps 5\n"
      "  gpusage bench resnet50 --precision bf16 --batch auto --format json --out resnet50.json\n"
      "  gpusage bench gpt2 --seq-len 256 --batch 4 --accumulate 8 --clip 1.0\n"
      "  gpusage bench resnet18 --device cpu --distributed 2 --batch 8\n"
      "  gpusage bench resnet50 --data ~/imagenet/train --workers 8 --batch 64");
  command->callback([state] { run_bench(*state); });
}

}  // namespace gpusage::cli
