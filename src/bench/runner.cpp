#include "bench/runner.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/batch_search.hpp"
#include "bench/bench_options.hpp"
#include "bench/cuda_support.hpp"
#include "bench/model_catalog.hpp"
#include "bench/power.hpp"
#include "bench/result.hpp"
#include "bench/train.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/device/host.hpp"
#include "core/device/types.hpp"
#include "gpusage/build_info.hpp"
#include "pipeline/image_folder.hpp"

extern char** environ;

namespace gpusage::bench {
namespace {

// Internal options of a distributed rank, set by the parent process.
struct RankOptions {
  int rank = -1;
  int world_size = 1;
  int master_port = 0;
  std::string output;
};

class Progress {
 public:
  // Live step-by-step updates ("\r") on a terminal, or when `gpusage bench` forwards them to one
  // (GPUSAGE_BENCH_PROGRESS=tty); one line per trial otherwise.
  explicit Progress(bool enabled) : enabled_(enabled), tty_(enabled && (::isatty(STDERR_FILENO) || forwarded())) {}
  void step(const std::string& label, int step, int total, const TrialResult& so_far) {
    if (!tty_) return;
    std::string rate;
    if (!so_far.step_time_s.empty()) {
      const double last = so_far.step_time_s.back();
      rate = fmt::format(", {:.1f} samples/s", static_cast<double>(so_far.batch * so_far.accumulate) / last);
    }
    std::cerr << fmt::format("\rgpusage-bench: {} step {}/{}{}{}   ", label, step + 1, total,
                             step < so_far.warmup_steps ? " (warm-up)" : "", rate)
              << std::flush;
  }
  void done(const std::string& label, const TrialResult& r) {
    if (!enabled_) return;
    if (tty_) std::cerr << "\r";
    if (r.ok())
      std::cerr << fmt::format("gpusage-bench: {}: {:.2f} samples/s over {} steps{}\n", label, *r.throughput(),
                               r.step_time_s.size(), tty_ ? "            " : "");
    else
      std::cerr << fmt::format("gpusage-bench: {}: failed ({}): {}\n", label, to_string(r.failure), r.reason);
  }
  void note(const std::string& text) {
    if (enabled_) std::cerr << "gpusage-bench: " << text << "\n";
  }

 private:
  static bool forwarded() {
    const char* mode = std::getenv("GPUSAGE_BENCH_PROGRESS");
    return mode && std::string(mode) == "tty";
  }
  bool enabled_;
  bool tty_;
};

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed while choosing a port for the TCPStore");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("could not bind a loopback port for the TCPStore");
  }
  const int port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

// --data DIR, scanned once per run (torchvision's ImageFolder order); null for synthetic data.
std::shared_ptr<const pipeline::ImageFolder> scan_data(const BenchOptions& o) {
  if (o.data == "synthetic") return nullptr;
  auto folder = std::make_shared<const pipeline::ImageFolder>(pipeline::scan_image_folder(o.data));
  constexpr std::size_t kModelClasses = 1000;  // the zoo's classifiers (ModelShape::num_classes)
  if (folder->classes.size() > kModelClasses)
    throw InputError(fmt::format("--data '{}': {} class folders; the models classify {} classes", o.data,
                                 folder->classes.size(), kModelClasses));
  return folder;
}

TrialConfig base_trial(const BenchOptions& o, bool channels_last,
                       const std::shared_ptr<const pipeline::ImageFolder>& folder) {
  TrialConfig c;
  c.folder = folder;
  c.options = o;
  c.steps = *o.steps;
  c.warmup = *o.warmup;
  c.channels_last = channels_last;
  c.memory_limit_bytes = o.memory_limit_bytes;
  return c;
}

std::string trial_label(const BenchOptions& o, int batch) {
  return fmt::format("{} batch {}{}", o.model, batch, o.accumulate > 1 ? fmt::format(" x{}", o.accumulate) : "");
}

// Runs one trial; on CUDA, samples NVML power over its timed steps (from the end of the warm-up).
TrialResult run_with_progress(TrialConfig c, Progress& progress, const std::string& label) {
  std::unique_ptr<PowerSampler> power;
  if (c.options.device == DeviceKind::cuda) power = std::make_unique<PowerSampler>(c.device_index);
  if (power && c.warmup == 0) power->start();
  c.progress = [&](int step, int total, const TrialResult& so_far) {
    if (power && step + 1 == c.warmup) power->start();
    progress.step(label, step, total, so_far);
  };
  TrialResult r = run_trial(c);
  if (power) {
    const std::optional<double> watts = power->stop();
    if (!power->available()) {
      r.power_note = power->note();
    } else if (watts && r.ok() && r.samples > 0) {
      r.average_power_w = *watts;
      r.energy_j_per_sample = *watts * r.timed_wall_s / static_cast<double>(r.samples);
      const std::uint64_t throttled = power->throttle_mask() & ~device::throttle::gpu_idle;
      r.power_note = throttled ? "clock throttling seen: " + device::throttle::describe(throttled) : "";
    } else {
      r.power_note = "no NVML power reading during the timed steps";
    }
  }
  progress.done(label, r);
  return r;
}

// One process per rank, each this same binary with --rank; the parent collects their JSON.
DistributedResult run_distributed(const BenchOptions& o, bool channels_last, int threads, Progress& progress,
                                  const std::shared_ptr<const pipeline::ImageFolder>& folder) {
  DistributedResult d;
  d.processes = o.distributed;
  d.backend = o.device == DeviceKind::cuda ? "nccl" : "gloo";
  const int batch = o.batches.front();

  // Baseline: one process alone with the same batch and threads per process.
  TrialConfig baseline = base_trial(o, channels_last, folder);
  baseline.batch = batch;
  d.baseline = run_with_progress(baseline, progress, trial_label(o, batch) + ", 1 process (baseline)");

  const int port = free_loopback_port();
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("gpusage-bench-{}-{}", ::getpid(), port);
  std::filesystem::create_directories(dir);
  std::vector<pid_t> children;
  std::vector<std::string> outputs;
  BenchOptions child = o;
  child.batch_text = std::to_string(batch);
  child.threads = threads;
  for (int rank = 0; rank < o.distributed; ++rank) {
    std::vector<std::string> args{"/proc/self/exe"};
    for (auto& a : to_arguments(child)) args.push_back(a);
    outputs.push_back((dir / fmt::format("rank{}.json", rank)).string());
    for (auto& a : std::vector<std::string>{"--rank", std::to_string(rank), "--world-size",
                                            std::to_string(o.distributed), "--master-port", std::to_string(port),
                                            "--rank-output", outputs.back(), "--no-progress"})
      args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("could not start distributed rank " + std::to_string(rank));
    children.push_back(pid);
  }
  progress.note(
      fmt::format("{} {} processes running, batch {} each, {} threads each", o.distributed, d.backend, batch, threads));
  for (int rank = 0; rank < o.distributed; ++rank) {
    int status = 0;
    ::waitpid(children[rank], &status, 0);
    TrialResult r;
    r.batch = batch;
    const std::string text = io::try_read_file(outputs[rank]).value_or("");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !text.empty()) {
      r = trial_from_json(nlohmann::json::parse(text));
    } else {
      r.failure = FailureKind::error;
      r.reason = fmt::format("rank {} exited with status {}", rank, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    progress.done(fmt::format("{}, rank {} of {}", trial_label(o, batch), rank, o.distributed), r);
    d.ranks.push_back(std::move(r));
  }
  std::filesystem::remove_all(dir);
  return d;
}

void run_batch_search(const BenchOptions& o, bool channels_last, BenchReport& report, Progress& progress,
                      const std::shared_ptr<const pipeline::ImageFolder>& folder) {
  std::optional<std::int64_t> limit = o.memory_limit_bytes;
  if (o.device == DeviceKind::cpu && !limit) {
    if (const auto available = device::available_memory_bytes()) limit = *available / 2;
    report.warnings.push_back(
        fmt::format("--batch auto on CPU: a trial counts as out of memory when its peak RSS growth exceeds {} bytes "
                    "(--memory-limit; default half of the available memory)",
                    limit.value_or(0)));
  }
  if (o.device == DeviceKind::cuda && limit) cuda::set_memory_limit(0, *limit);
  BatchSearch search;
  TrialConfig trial = base_trial(o, channels_last, folder);
  trial.memory_limit_bytes = limit;
  // Each search trial trains two steps: the second holds gradients and optimizer state at once.
  trial.steps = 1;
  trial.warmup = 1;
  std::optional<TrialResult> aborted;
  while (const auto batch = search.next()) {
    trial.batch = *batch;
    TrialResult r = run_with_progress(trial, progress, trial_label(o, *batch) + " (search)");
    if (r.failure == FailureKind::out_of_memory) {
      search.record(*batch, false, r.reason);
    } else if (r.ok()) {
      search.record(*batch, true);
    } else {
      aborted = std::move(r);  // not a memory limit: the search cannot go on
      break;
    }
  }
  report.search = search;
  if (aborted) {
    report.results.push_back(*aborted);
    return;
  }
  if (search.best() == 0) {
    TrialResult failed;
    failed.batch = 1;
    failed.failure = FailureKind::out_of_memory;
    failed.reason = "batch 1 does not fit: " + search.trials().front().reason;
    report.results.push_back(failed);
    return;
  }
  if (search.reached_limit())
    report.warnings.push_back(
        fmt::format("--batch auto stopped at its cap {}: the largest batch may be higher", search.best()));
  TrialConfig measured = base_trial(o, channels_last, folder);
  measured.memory_limit_bytes = limit;
  measured.batch = search.best();
  report.results.push_back(run_with_progress(measured, progress, trial_label(o, search.best())));
}

std::string joined_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  return line;
}

int run(BenchOptions& o, const RankOptions& rank, const std::string& out, bool show_progress, int argc, char** argv) {
  validate(o);
  const bool cuda_built = cuda::compiled();
  const DeviceKind device = o.device.value_or(cuda_available() ? DeviceKind::cuda : DeviceKind::cpu);
  if (device == DeviceKind::cuda && !cuda_available())
    throw InputError(cuda_built ? "--device cuda: LibTorch sees no CUDA device on this machine; use --device cpu"
                                : "--device cuda: this gpusage-bench was built against a LibTorch without CUDA "
                                  "(reconfigure with CMAKE_PREFIX_PATH set to a CUDA LibTorch); use --device cpu");
  resolve_for_device(o, device);
  if (o.distributed > 1 && o.batches.size() > 1)
    throw InputError(fmt::format("--batch {} with --distributed: give one batch size per process", o.batch_text));
  if (o.distributed > 1 && !distributed_available(device))
    throw InputError(fmt::format("--distributed on {}: this gpusage-bench was built without the {} backend",
                                 to_string(device), device == DeviceKind::cpu ? "Gloo" : "NCCL"));
  const ModelInfo& info = model_info(o.model);
  const bool channels_last = o.channels_last && info.convolutional();
  const int threads = o.threads.value_or(o.distributed > 1 ? std::max(1, device::logical_cpus() / o.distributed) : 0);
  if (threads > 0) set_torch_threads(threads);
  const auto folder = scan_data(o);

  if (rank.rank >= 0) {  // a distributed rank, started by the parent
    if (device == DeviceKind::cuda) cuda::set_device(rank.rank);
    auto communicator = connect_process_group(device, rank.rank, rank.world_size, rank.master_port);
    TrialConfig trial = base_trial(o, channels_last, folder);
    trial.batch = o.batches.front();
    trial.device_index = device == DeviceKind::cuda ? rank.rank : 0;
    trial.communicator = communicator.get();
    const TrialResult r = run_trial(trial);
    io::write_file_atomically(rank.output, to_json(r).dump());
    return 0;
  }

  Progress progress(show_progress);
  BenchReport report;
  const TorchEnvironment torch_env = torch_environment(device);
  Environment& e = report.environment;
  e.device = to_string(device);
  e.device_name = torch_env.device_name;
  e.driver_version = torch_env.driver_version;
  e.cuda_version = torch_env.cuda_version;
  e.cudnn_version = torch_env.cudnn_version;
  e.libtorch_version = torch_env.libtorch_version;
  e.cpu_model = device::cpu_model_name();
  e.cpu_threads = device::logical_cpus();
  e.torch_threads = torch_env.torch_threads;
  e.gpusage_version = build_info::version;
  e.gpusage_commit = build_info::commit;
  e.build_type = build_info::build_type;
  report.options = o;
  report.model_params = model_parameter_count(o.model, *o.resolution, *o.seq_len);
  report.channels_last = channels_last;
  if (device == DeviceKind::cuda) report.cudnn_benchmark = true;
  report.command_line = joined_command_line(argc, argv);
  if (*o.steps < *o.warmup)
    report.warnings.push_back(
        fmt::format("timed steps ({}) are fewer than warm-up steps ({}): the distribution "
                    "rests on few samples",
                    *o.steps, *o.warmup));
  if (device == DeviceKind::cuda && *o.warmup < 10)
    report.warnings.push_back(
        fmt::format("--warmup {} on CUDA: cuDNN autotuning and allocator growth may still be "
                    "in the timed steps (10 or more is the convention)",
                    *o.warmup));
  if (folder) {
    report.data_images = static_cast<std::int64_t>(folder->samples.size());
    report.data_classes = static_cast<int>(folder->classes.size());
    report.data_mode = fmt::format(
        "ImageFolder from disk, {} worker{} per process (libjpeg-turbo), "
        "RandomResizedCrop({}) + flip + normalize{}",
        o.workers, o.workers == 1 ? "" : "s", *o.resolution, device == DeviceKind::cuda ? ", pinned host memory" : "");
    if (!folder->empty_classes.empty())
      report.warnings.push_back(fmt::format(
          "--data: {} class folder{} without images (torchvision's ImageFolder "
          "refuses them): {}",
          folder->empty_classes.size(), folder->empty_classes.size() == 1 ? "" : "s", folder->empty_classes.front()));
    if (device == DeviceKind::cpu)
      report.warnings.push_back(
          "--data on CPU: the loader's workers share the cores with LibTorch's threads, so "
          "data wait includes that contention");
  }
  if (o.distributed > 1) {
    report.distributed = run_distributed(o, channels_last, threads, progress, folder);
    report.results.push_back(report.distributed->ranks.front());
    if (device == DeviceKind::cpu)
      report.warnings.push_back(
          "distributed CPU processes share this machine's cores; scaling efficiency "
          "includes that contention as well as the all-reduce");
    report.warnings.push_back(
        "gradients are all-reduced in one bucket after backward (no overlap with backward, "
        "unlike DDP)");
  } else if (o.batch_auto) {
    run_batch_search(o, channels_last, report, progress, folder);
  } else {
    for (int batch : o.batches) {
      TrialConfig trial = base_trial(o, channels_last, folder);
      trial.batch = batch;
      report.results.push_back(run_with_progress(trial, progress, trial_label(o, batch)));
    }
  }
  for (const TrialResult& r : report.results)
    if (r.loader && r.loader->failed_files > 0) {
      std::string names;
      for (std::size_t i = 0; i < r.loader->failed.size() && i < 3; ++i) names += (i ? "; " : "") + r.loader->failed[i];
      report.warnings.push_back(
          fmt::format("--data: {} unreadable or corrupt file{} skipped, each replaced by the "
                      "next image (all in runs[].loader.failed): {}{}",
                      r.loader->failed_files, r.loader->failed_files == 1 ? "" : "s", names,
                      r.loader->failed_files > 3 ? "; …" : ""));
      break;
    }
  const std::string json = to_json(report).dump(2) + "\n";
  if (out.empty()) {
    std::cout << json << std::flush;
  } else {
    io::write_file_atomically(out, json);
  }
  return 0;
}

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{
      "gpusage-bench: measured training throughput on LibTorch (synthetic data by default).\n"
      "Prints JSON (see `gpusage bench` for the side-by-side table)."};
  app.name("gpusage-bench");
  BenchOptions options;
  add_bench_options(app, options);
  std::string out;
  app.add_option("--out", out, "Write the JSON here (atomically) instead of stdout");
  bool no_progress = false;
  app.add_flag("--no-progress", no_progress, "No progress lines on stderr");
  RankOptions rank;
  app.add_option("--rank", rank.rank)->group("");
  app.add_option("--world-size", rank.world_size)->group("");
  app.add_option("--master-port", rank.master_port)->group("");
  app.add_option("--rank-output", rank.output)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "gpusage-bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return run(options, rank, out, !no_progress, argc, argv);
  } catch (const InputError& e) {
    std::cerr << "gpusage-bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpusage-bench: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpusage::bench
