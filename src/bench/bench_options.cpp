#include "bench/bench_options.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "bench/model_catalog.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"

namespace gpusage::bench {

const char* to_string(DeviceKind device) { return device == DeviceKind::cuda ? "cuda" : "cpu"; }

const char* to_string(OptimizerKind optimizer) {
  switch (optimizer) {
    case OptimizerKind::sgd: return "sgd";
    case OptimizerKind::momentum: return "momentum";
    case OptimizerKind::adamw: return "adamw";
  }
  return "?";
}

namespace {

// A choice among an enum's names, in any case: the help reads "{cpu,cuda}" (CLI11's CheckedTransformer printed
// "ENUM:value in {cpu->0,cuda->1} OR {0,1}"), and the value becomes the enum's number CLI11 reads.
template <class E>
CLI::Validator enum_names(const std::vector<std::pair<std::string, E>>& names) {
  std::string list;
  for (const auto& [name, value] : names) list += (list.empty() ? "" : ",") + name;
  return CLI::Validator(
      [names, list](std::string& text) -> std::string {
        std::string lower = text;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const auto& [name, value] : names) {
          if (name == lower) {
            text = std::to_string(static_cast<int>(value));
            return {};
          }
        }
        return "'" + text + "' is not one of {" + list + "}";
      },
      "{" + list + "}", "enum_names");
}

}  // namespace

void add_bench_options(CLI::App& app, BenchOptions& o) {
  app.add_option("model", o.model, "Model to train: " + model_ids_text())->default_str("resnet50");
  app.add_option("--device", o.device, "cuda|cpu (default: cuda when a GPU is visible)")
      ->transform(enum_names<DeviceKind>({{"cpu", DeviceKind::cpu}, {"cuda", DeviceKind::cuda}}))
      ->type_name("DEVICE");
  app.add_option("--batch", o.batch_text,
                 "Per-process batch sizes, comma-separated, or 'auto' for the largest that trains "
                 "(default 32 on CUDA, 8 on CPU)");
  app.add_option("--precision", o.precision,
                 "fp32|tf32|fp16|bf16: fp16 and bf16 are autocast with fp32 master weights (fp16 with "
                 "loss scaling); CPU: fp32, bf16")
      ->transform(enum_names<Precision>(
          {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}}))
      ->type_name("PRECISION")
      ->default_str("fp32");
  app.add_option("--optimizer", o.optimizer, "sgd|momentum|adamw")
      ->transform(enum_names<OptimizerKind>(
          {{"sgd", OptimizerKind::sgd}, {"momentum", OptimizerKind::momentum}, {"adamw", OptimizerKind::adamw}}))
      ->type_name("OPTIMIZER")
      ->default_str("momentum");
  app.add_option("--steps", o.steps, "Timed optimizer steps per batch size (default 50 on CUDA, 10 on CPU)");
  app.add_option("--warmup", o.warmup, "Untimed steps before timing (default 10 on CUDA, 2 on CPU)");
  app.add_option("--resolution", o.resolution, "Image side in pixels for vision models (default 224)");
  app.add_option("--seq-len", o.seq_len, "Tokens per sample for language models (default 1024)");
  app.add_option("--data", o.data,
                 "synthetic (batches resident on the device) or an ImageFolder directory (one sub-folder of "
                 "JPEG/PNG images per class), decoded on --workers threads")
      ->default_str("synthetic");
  app.add_option("--workers", o.workers, "Data-loading threads for --data DIR (0: one per logical CPU)")
      ->default_str("0");
  app.add_flag("--channels-last", o.channels_last,
               "NHWC activations and weights (model.to(memory_format=torch.channels_last)) for convolutional "
               "models, as plan's --channels-last; default NCHW");
  app.add_option("--accumulate", o.accumulate, "Micro-batches per optimizer step (gradient accumulation)")
      ->default_str("1");
  app.add_option("--clip", o.clip_norm, "Clip the global gradient norm to this value; the norm is recorded");
  app.add_option("--distributed", o.distributed,
                 "Data-parallel processes on this machine (c10d: Gloo on CPU, NCCL on CUDA)")
      ->default_str("1");
  app.add_option("--memory-limit", o.memory_limit_bytes,
                 "Memory limit in bytes for --batch auto (CUDA: allocator fraction; CPU: peak RSS growth; "
                 "default on CPU: half of the available memory)");
  app.add_option("--threads", o.threads,
                 "CPU threads for LibTorch's intra-op pool (default: LibTorch's own, which follows "
                 "OMP_NUM_THREADS and the OpenMP runtime; with --distributed, logical CPUs / processes)");
  app.add_option("--seed", o.seed, "Seed for weights and synthetic data")->default_str("0");
}

void validate(BenchOptions& o) {
  model_info(o.model);
  if (!o.batch_text.empty()) {
    const BatchList list = parse_batch_list(o.batch_text);
    o.batches = list.sizes;
    o.batch_auto = list.is_auto;
  }
  auto positive = [](const std::optional<int>& v, const char* flag) {
    if (v && *v < 1) throw InputError(fmt::format("{} {}: must be at least 1", flag, *v));
  };
  positive(o.steps, "--steps");
  positive(o.resolution, "--resolution");
  positive(o.seq_len, "--seq-len");
  positive(o.threads, "--threads");
  if (o.warmup && *o.warmup < 0) throw InputError(fmt::format("--warmup {}: must be 0 or more", *o.warmup));
  if (o.accumulate < 1) throw InputError(fmt::format("--accumulate {}: must be at least 1", o.accumulate));
  if (o.workers < 0) throw InputError(fmt::format("--workers {}: must be 0 or more", o.workers));
  if (o.clip_norm && !(*o.clip_norm > 0))
    throw InputError(fmt::format("--clip {}: the norm threshold must be a positive number", *o.clip_norm));
  if (o.distributed < 1 || o.distributed > 64)
    throw InputError(fmt::format("--distributed {}: give 1 to 64 processes", o.distributed));
  if (o.memory_limit_bytes && *o.memory_limit_bytes < 1)
    throw InputError(fmt::format("--memory-limit {}: must be a positive number of bytes", *o.memory_limit_bytes));
  if (o.batch_auto && o.distributed > 1)
    throw InputError("--batch auto with --distributed: search the batch with one process first, then pass it");
  const ModelInfo& info = model_info(o.model);
  if (o.data != "synthetic") {
    // The folder's contents are checked by gpusage-bench when it scans it (pipeline::scan_image_folder).
    std::error_code ec;
    if (!std::filesystem::is_directory(o.data, ec))
      throw InputError(
          fmt::format("--data '{}': not a directory; give an ImageFolder directory (one sub-folder of "
                      "images per class) or synthetic",
                      o.data));
    if (info.language())
      throw InputError(
          fmt::format("--data '{}': {} is a language model; an ImageFolder feeds vision models "
                      "(use --data synthetic)",
                      o.data, o.model));
  }
  if (o.channels_last && !info.convolutional())
    throw InputError(
        fmt::format("--channels-last: {} has no convolutions to lay out (accepted with the resnet "
                    "and mobilenet models)",
                    o.model));
  if (info.family == ModelFamily::vit && o.resolution && *o.resolution % 16 != 0)
    throw InputError(fmt::format("--resolution {}: {} needs a multiple of its patch size 16", *o.resolution, o.model));
}

void resolve_for_device(BenchOptions& o, DeviceKind device) {
  o.device = device;
  const bool cuda = device == DeviceKind::cuda;
  if (!cuda && (o.precision == Precision::fp16 || o.precision == Precision::tf32))
    throw InputError(
        fmt::format("--precision {} needs --device cuda; on CPU use fp32 or bf16", to_string(o.precision)));
  if (o.batch_text.empty()) o.batches = {cuda ? 32 : 8};
  if (!o.steps) o.steps = cuda ? 50 : 10;
  if (!o.warmup) o.warmup = cuda ? 10 : 2;
  if (!o.resolution) o.resolution = 224;
  if (!o.seq_len) o.seq_len = 1024;
  // --workers 0: one loader thread per logical CPU (they sleep when the prefetch queue is full).
  if (o.data != "synthetic" && o.workers == 0)
    o.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<std::string> to_arguments(const BenchOptions& o) {
  std::vector<std::string> args{o.model};
  auto add = [&](const char* flag, const std::string& value) {
    args.emplace_back(flag);
    args.push_back(value);
  };
  if (o.device) add("--device", to_string(*o.device));
  if (!o.batch_text.empty()) add("--batch", o.batch_text);
  add("--precision", to_string(o.precision));
  add("--optimizer", to_string(o.optimizer));
  if (o.steps) add("--steps", std::to_string(*o.steps));
  if (o.warmup) add("--warmup", std::to_string(*o.warmup));
  if (o.resolution) add("--resolution", std::to_string(*o.resolution));
  if (o.seq_len) add("--seq-len", std::to_string(*o.seq_len));
  add("--data", o.data);
  add("--workers", std::to_string(o.workers));
  if (o.channels_last) args.emplace_back("--channels-last");
  add("--accumulate", std::to_string(o.accumulate));
  if (o.clip_norm) add("--clip", fmt::format("{}", *o.clip_norm));
  add("--distributed", std::to_string(o.distributed));
  if (o.memory_limit_bytes) add("--memory-limit", std::to_string(*o.memory_limit_bytes));
  if (o.threads) add("--threads", std::to_string(*o.threads));
  add("--seed", std::to_string(o.seed));
  return args;
}

}  // namespace gpusage::bench
