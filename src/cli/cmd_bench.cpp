// `gpusage bench`: runs gpusage-bench (the LibTorch benchmark, a separate binary so that the gpusage
// binary never links LibTorch) as a child process, then prints measured and predicted side by side.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/options.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/estimate/plan.hpp"
#include "core/workload/workload.hpp"
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
    for (const fs::path& candidate : {self.parent_path() / "gpusage-bench",
                                      self.parent_path().parent_path() / "bench" / "gpusage-bench"}) {
      if (fs::exists(candidate, ec)) return candidate.string();
    }
  }
  throw std::runtime_error(
      "gpusage-bench was not found beside gpusage nor in the build tree (build it with -DGPUSAGE_BUILD_BENCH=ON, "
      "or point GPUSAGE_BENCH_BINARY at it)");
}

// Runs the benchmark, forwarding its progress lines to stderr. Returns its exit code and, when it was 2,
// its one-line error (without the "gpusage-bench: " prefix) in `error_line` instead of forwarding it.
int run_child(const std::string& binary, const std::vector<std::string>& args, std::string& error_line) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe() failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> storage{binary};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("GPUSAGE_BENCH_PROGRESS=", 0) != 0) environment.emplace_back(*e);
  if (::isatty(STDERR_FILENO)) environment.emplace_back("GPUSAGE_BENCH_PROGRESS=tty");
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error(fmt::format("could not start {}", binary));
  }
  // Live "\r" progress updates go straight through; complete lines are held back by one, because when
  // the child fails with exit 2 its last line is the error message, which is reported once, by us.
  std::string pending, held;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
    if (n < 0) continue;
    pending.append(buffer, static_cast<std::size_t>(n));
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
  }
  ::close(pipe_fds[0]);
  if (!pending.empty()) {
    if (!held.empty()) std::cerr << held << "\n";
    held = pending;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  const std::string prefix = "gpusage-bench: ";
  if (code == 2 && held.rfind(prefix, 0) == 0) {
    error_line = held.substr(prefix.size());
  } else if (!held.empty()) {
    std::cerr << held << "\n";
  }
  return code;
}

json null_prediction(const std::string& reason) {
  return {{"throughput", nullptr}, {"step_time_s", nullptr}, {"max_batch", nullptr}, {"memory_bytes", nullptr},
          {"gpu", nullptr}, {"reason", reason}};
}

// What plan predicts for one measured run on `gpu` (the same model, shape, batch, precision, optimizer).
json predict_run(const json& report, const json& run, const catalog::Gpu& gpu) {
  workload::WorkloadOptions shape;
  if (report["resolution"].is_number_integer()) shape.resolution = report["resolution"].get<int>();
  if (report["seq_len"].is_number_integer()) shape.seq_len = report["seq_len"].get<int>();
  const workload::Workload w = workload::build(report["model"].get<std::string>(), shape);
  estimate::TrainingConfig config;
  config.batch_per_gpu = run["batch"].get<int>();
  config.precision = *catalog::parse_precision(report["precision"].get<std::string>());
  config.optimizer = estimate::parse_optimizer(report["optimizer"].get<std::string>()).value_or(config.optimizer);
  const estimate::Prediction p = estimate::predict(w, config, gpu);
  return {{"throughput", p.throughput},
          {"step_time_s", p.time.step_s},
          {"max_batch", p.max_batch},
          {"memory_bytes", p.memory.total_bytes()},
          {"gpu", gpu.id},
          {"reason", nullptr}};
}

// The plan's prediction beside each measured run: on CUDA for the catalog GPU the device's name
// resolves to; on CPU there is no catalog GPU, so it is null with the reason.
void add_predictions(json& report) {
  const json& env = report["environment"];
  const catalog::Gpu* gpu = nullptr;
  std::string reason;
  if (env.value("device", "cpu") != "cuda") {
    reason = "no prediction for a CPU run: plan models NVIDIA GPUs from the catalog";
  } else {
    // CUDA names the device "NVIDIA GeForce RTX 4090" or "NVIDIA H100 80GB HBM3": try it as is, then
    // without the vendor and brand words the catalog's names leave out.
    std::string name = env["device_name"].get<std::string>();
    for (const std::string prefix : {"", "NVIDIA ", "GeForce "}) {
      if (!prefix.empty() && name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
      try {
        gpu = &catalog::Catalog::active().resolve(name);
        break;
      } catch (const InputError& e) {
        reason = fmt::format("'{}' is not in the GPU catalog ({})", env["device_name"].get<std::string>(), e.what());
      }
    }
    if (gpu) reason.clear();
  }
  for (auto& run : report["runs"]) {
    try {
      run["prediction"] = gpu ? predict_run(report, run, *gpu) : null_prediction(reason);
    } catch (const InputError& e) {  // e.g. a model or shape the plan zoo does not cover
      run["prediction"] = null_prediction(std::string("plan cannot predict this run: ") + e.what());
    }
    const json& predicted = run["prediction"]["throughput"];
    run["throughput_error"] = run["throughput"].is_number() && predicted.is_number() && predicted.get<double>() > 0
                                  ? json((run["throughput"].get<double>() - predicted.get<double>()) /
                                         predicted.get<double>())
                                  : json(nullptr);
  }
  if (report["batch_search"].is_object()) {
    report["batch_search"]["plan_max_batch"] = nullptr;
    if (gpu && !report["runs"].empty()) report["batch_search"]["plan_max_batch"] = report["runs"][0]["prediction"]["max_batch"];
  }
}

std::string number_or(const json& value, int decimals, const char* missing = "n/a") {
  return value.is_number() ? report::format_number(value.get<double>(), decimals) : missing;
}

std::string render_table(const json& report) {
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
  bool loader = false;
  for (const auto& run : report["runs"]) loader = loader || run.value("loader", json(nullptr)).is_object();
  if (loader) {
    table.columns.push_back({"loader", "images/s", report::Align::right, 1});
    table.columns.push_back({"workers needed", "", report::Align::right, 1});
  }
  for (const auto& run : report["runs"]) {
    const bool ok = run["status"] == "ok";
    const json& steps = run["step_time_s"];
    auto ms = [&](const char* key) {
      return steps.is_object() ? report::format_number(steps[key].get<double>() * 1e3, 1) : std::string("n/a");
    };
    std::string batch = std::to_string(run["batch"].get<int>());
    if (run.value("accumulate", 1) > 1) batch += fmt::format(" x{}", run["accumulate"].get<int>());
    table.add_row({batch, ok ? "ok" : fmt::format("failed: {}", run["failure"].get<std::string>()),
                   number_or(run["throughput"], 1), number_or(run["prediction"]["throughput"], 1),
                   run["throughput_error"].is_number()
                       ? report::format_number(run["throughput_error"].get<double>() * 100, 1)
                       : "n/a",
                   ms("p50"), ms("p90"), ms("p99"),
                   steps.is_object() ? report::format_number(steps["cv"].get<double>() * 100, 1) : "n/a",
                   run["data_wait_fraction"].is_number()
                       ? report::format_number(run["data_wait_fraction"].get<double>() * 100, 1)
                       : "n/a",
                   run["peak_memory_bytes"].is_number() ? report::format_bytes(run["peak_memory_bytes"].get<double>())
                                                        : "n/a"});
    if (loader) {
      const json& l = run.value("loader", json(nullptr));
      table.rows.back().push_back(l.is_object() ? number_or(l["images_per_s"], 1) : "n/a");
      table.rows.back().push_back(l.is_object() ? number_or(l["workers_needed"], 0) : "n/a");
    }
    if (!ok) table.notes.push_back(fmt::format("batch {}: {}", run["batch"].get<int>(), run.value("reason", "")));
  }
  const json& env = report["environment"];
  const json& config = report["config"];
  table.notes.push_back(fmt::format(
      "{} ({} parameters), {}, {}, {} timed steps after {} warm-up, {}; {} on {} ({} threads), LibTorch {}",
      report["model"].get<std::string>(), report::format_number(config["model_params"].get<double>()),
      report["precision"].get<std::string>(), report["optimizer"].get<std::string>(), config["steps"].get<int>(),
      config["warmup"].get<int>(), config["data_mode"].get<std::string>(), env["device"].get<std::string>(),
      env["device_name"].get<std::string>(), env["torch_threads"].get<int>(),
      env["libtorch_version"].get<std::string>()));
  for (const auto& run : report["runs"]) {
    if (!run.value("loader", json(nullptr)).is_object()) continue;
    const json& l = run["loader"];
    table.notes.push_back(fmt::format(
        "--data: {} images in {} classes; loader alone before training: {} images/s with {} workers, {} per "
        "worker; workers needed = ceil(model images/s without data wait ({}) / per-worker rate)",
        number_or(config["data_images"], 0), number_or(config["data_classes"], 0), number_or(l["images_per_s"], 1),
        l["workers"].get<int>(), number_or(l["per_worker_images_per_s"], 1), number_or(l["model_images_per_s"], 1)));
    break;
  }
  if (!report["runs"].empty()) {
    const json& prediction = report["runs"][0]["prediction"];
    table.notes.push_back(prediction["reason"].is_string()
                              ? "predicted: " + prediction["reason"].get<std::string>()
                              : "predicted: gpusage plan for " + prediction["gpu"].get<std::string>() +
                                    "; error = (measured - predicted) / predicted");
  }
  if (report["batch_search"].is_object())
    table.notes.push_back(fmt::format("--batch auto: largest batch that trains: {} ({} trials); plan's max_batch: {}",
                                      report["batch_search"]["max_batch"].get<int>(),
                                      report["batch_search"]["trials"].size(),
                                      number_or(report["batch_search"]["plan_max_batch"], 0)));
  if (report["distributed"].is_object()) {
    const json& d = report["distributed"];
    std::string per_rank;
    for (const auto& r : d["ranks"]) per_rank += (per_rank.empty() ? "" : ", ") + number_or(r["throughput"], 1);
    table.notes.push_back(fmt::format(
        "--distributed {} ({}): per-process {} samples/s, total {}; one process alone {}; scaling efficiency {}",
        d["processes"].get<int>(), d["backend"].get<std::string>(), per_rank, number_or(d["total_throughput"], 1),
        d["baseline"].is_object() ? number_or(d["baseline"]["throughput"], 1) : "n/a",
        d["scaling_efficiency"].is_number()
            ? report::format_number(d["scaling_efficiency"].get<double>() * 100, 1) + " %"
            : "n/a"));
  }
  for (const auto& w : report["warnings"]) table.notes.push_back("warning: " + w.get<std::string>());
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

  std::ifstream in(temp);
  std::stringstream text;
  text << in.rdbuf();
  json report = json::parse(text.str());
  add_predictions(report);
  if (command.format == Format::json) {
    emit(report.dump(2) + "\n", command.out);
  } else {
    emit(render_table(report), command.out);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "bench", "Measure training throughput on this machine (LibTorch) beside plan's prediction");
  auto state = std::make_shared<BenchCommand>();
  bench::add_bench_options(*command, state->options);
  add_format_option(*command, state->format, {Format::table, Format::json});
  command->add_option("--out", state->out, "Write the output to FILE (atomically) instead of stdout");
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
