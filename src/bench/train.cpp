// The training loop and its measurement (BENCHMARKING.md): warm-up excluded, the device synchronised
// at both ends of the timed region, one host sync per step (the loss and gradient-norm read-back, which
// also times each step on the GPU rather than the launch queue), memory peaks reset per trial.
#include "bench/train.hpp"

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "bench/cuda_support.hpp"
#include "bench/model_catalog.hpp"
#include "bench/trainer.hpp"
#include "core/common/error.hpp"
#include "core/device/host.hpp"

namespace gpusage::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// torch.autocast(device_type, dtype) as a scope; the API changed in LibTorch 2.4.
class AutocastScope {
 public:
  AutocastScope(const torch::Device& device, Precision precision) {
    if (precision != Precision::fp16 && precision != Precision::bf16) return;
    active_ = true;
    const auto dtype = precision == Precision::fp16 ? at::kHalf : at::kBFloat16;
    cuda_ = device.is_cuda();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    const auto type = cuda_ ? at::kCUDA : at::kCPU;
    at::autocast::set_autocast_dtype(type, dtype);
    at::autocast::set_autocast_enabled(type, true);
#else
    if (cuda_) {
      at::autocast::set_autocast_gpu_dtype(dtype);
      at::autocast::set_enabled(true);
    } else {
      at::autocast::set_autocast_cpu_dtype(dtype);
      at::autocast::set_cpu_enabled(true);
    }
#endif
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!active_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(cuda_ ? at::kCUDA : at::kCPU, false);
#else
    if (cuda_)
      at::autocast::set_enabled(false);
    else
      at::autocast::set_cpu_enabled(false);
#endif
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
};

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> grads;
  grads.reserve(parameters.size());
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

bool is_out_of_memory_message(const std::string& message) {
  return message.find("out of memory") != std::string::npos ||
         message.find("can't allocate memory") != std::string::npos ||
         message.find("not enough memory") != std::string::npos;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, std::optional<double> max_norm) {
  const auto grads = gradients_of(parameters);
  if (grads.empty()) return torch::zeros({});
  const auto norms = at::_foreach_norm(grads, 2);
  torch::Tensor total = torch::stack(norms).norm(2);
  if (max_norm) {
    // clip_coef = max_norm / (norm + 1e-6), clamped to 1: gradients under the threshold stay as they are.
    const torch::Tensor coefficient = (*max_norm / (total + 1e-6)).clamp_max(1.0);
    for (const auto& g : grads) g.mul_(coefficient);
  }
  return total;
}

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
}

Trainer::Trainer(std::shared_ptr<BenchModelImpl> model, const TrainerConfig& config)
    : model_(std::move(model)), config_(config), parameters_(model_->parameters()) {
  if (config_.accumulate < 1) throw std::invalid_argument("Trainer: accumulate must be at least 1");
  if (config_.optimizer == OptimizerKind::adamw) {
    const double lr = config_.learning_rate > 0 ? config_.learning_rate : 1e-4;
    optimizer_ = std::make_unique<torch::optim::AdamW>(parameters_, torch::optim::AdamWOptions(lr).weight_decay(0.01));
  } else {
    const double lr = config_.learning_rate > 0 ? config_.learning_rate : 0.01;
    const double momentum = config_.optimizer == OptimizerKind::momentum ? 0.9 : 0.0;
    optimizer_ = std::make_unique<torch::optim::SGD>(
        parameters_, torch::optim::SGDOptions(lr).momentum(momentum).weight_decay(1e-4));
  }
}

std::optional<double> Trainer::loss_scale() const {
  return config_.precision == Precision::fp16 ? std::optional<double>(scale_) : std::nullopt;
}

torch::Tensor Trainer::loss_of(const Batch& batch) {
  AutocastScope autocast(config_.device, config_.precision);
  const torch::Tensor logits = model_->forward(batch.input);
  if (config_.language)
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat),
                                                batch.target.reshape({-1}));
  return torch::nn::functional::cross_entropy(logits.to(torch::kFloat), batch.target);
}

torch::Tensor Trainer::accumulate_gradients(DataSource& source, double& data_wait_s) {
  optimizer_->zero_grad();
  torch::Tensor total;
  const double fp16_scale = config_.precision == Precision::fp16 ? scale_ : 1.0;
  for (int micro = 0; micro < config_.accumulate; ++micro) {
    const auto wait_start = Clock::now();
    const Batch batch = source.next();
    data_wait_s += seconds_since(wait_start);
    const torch::Tensor loss = loss_of(batch) / config_.accumulate;
    (fp16_scale == 1.0 ? loss : loss * fp16_scale).backward();
    total = total.defined() ? total + loss.detach() : loss.detach();
  }
  return total;
}

StepOutcome Trainer::finish_step(const torch::Tensor& loss) {
  std::vector<torch::Tensor> grads = gradients_of(parameters_);
  if (config_.communicator && config_.communicator->world_size() > 1) config_.communicator->all_reduce_mean(grads);
  const bool fp16 = config_.precision == Precision::fp16;
  if (fp16 && !grads.empty()) at::_foreach_mul_(grads, 1.0 / scale_);
  const bool need_norm = config_.clip_norm.has_value() || fp16;
  torch::Tensor readback;
  if (need_norm) {
    const torch::Tensor norm = clip_gradients(parameters_, config_.clip_norm);
    readback = torch::stack({loss.to(torch::kDouble), norm.to(torch::kDouble)}).cpu();
  } else {
    readback = loss.to(torch::kDouble).reshape({1}).cpu();
  }
  StepOutcome outcome;
  const double* values = readback.data_ptr<double>();
  outcome.loss = values[0];
  if (need_norm) outcome.grad_norm = values[1];
  outcome.finite = std::isfinite(outcome.loss) && (!outcome.grad_norm || std::isfinite(*outcome.grad_norm));
  // A non-finite step is never applied (what GradScaler does for fp16; for fp32/bf16 it is the
  // exploding-gradient pitfall, reported by the caller).
  outcome.updated = outcome.finite;
  if (outcome.updated) optimizer_->step();
  if (fp16) {
    if (!outcome.finite) {
      scale_ *= kBackoffFactor;
      growth_tracker_ = 0;
    } else if (++growth_tracker_ == kGrowthInterval) {
      scale_ *= kGrowthFactor;
      growth_tracker_ = 0;
    }
  }
  return outcome;
}

namespace {

void run_trial_inner(const TrialConfig& c, TrialResult& result) {
  const BenchOptions& o = c.options;
  const ModelInfo& info = model_info(o.model);
  const bool cuda = o.device == DeviceKind::cuda;
  const torch::Device device =
      cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(c.device_index)) : torch::Device(torch::kCPU);
  torch::manual_seed(o.seed);
  std::optional<std::int64_t> rss_start;
  if (cuda) {
    cuda::set_device(c.device_index);
    // fp32 means IEEE fp32 (PyTorch enables TF32 for cuDNN by default; the benchmark states it instead).
    at::globalContext().setAllowTF32CuBLAS(o.precision == Precision::tf32);
    at::globalContext().setAllowTF32CuDNN(o.precision == Precision::tf32);
    at::globalContext().setBenchmarkCuDNN(true);
    cuda::reset_peak_memory(c.device_index);
  } else if (device::reset_peak_rss()) {
    rss_start = device::current_rss_bytes();
  }

  ModelShape shape;
  shape.resolution = o.resolution.value_or(224);
  shape.seq_len = o.seq_len.value_or(1024);
  auto model = make_model(o.model, shape);
  model->to(device);
  if (c.channels_last) to_channels_last(*model);
  model->train();

  TrainerConfig tc;
  tc.device = device;
  tc.precision = o.precision;
  tc.optimizer = o.optimizer;
  tc.language = info.language();
  tc.accumulate = o.accumulate;
  tc.clip_norm = o.clip_norm;
  tc.channels_last = c.channels_last;
  tc.communicator = c.communicator;
  Trainer trainer(model, tc);

  std::unique_ptr<DataSource> source_owner;
  ImageFolderSource* folder_source = nullptr;
  if (c.folder) {
    pipeline::LoaderConfig lc;
    lc.batch_size = c.batch;
    lc.image_size = shape.resolution;
    lc.workers = std::max(1, o.workers);
    lc.seed = o.seed + 1;
    if (c.communicator) {
      lc.shard_index = c.communicator->rank();
      lc.shard_count = c.communicator->world_size();
    }
    auto s = std::make_unique<ImageFolderSource>(*c.folder, lc, device, c.channels_last);
    folder_source = s.get();
    // The loader alone first: at least 256 images (a quarter of a second at ~1000 images/s per worker)
    // and 16 per worker, so that start-up (cold caches, first buffers) weighs little in the rate.
    const int probe_images = std::max(256, 16 * lc.workers);
    const int probe_batches = std::max(2, (probe_images + c.batch - 1) / c.batch);
    const ImageFolderSource::Probe p = s->probe(probe_batches);
    LoaderResult& l = result.loader.emplace();
    l.workers = lc.workers;
    l.probe_images = p.images;
    l.images_per_s = p.images_per_s;
    l.per_worker_images_per_s = p.per_worker_images_per_s;
    source_owner = std::move(s);
  } else {
    SyntheticSource::Shape data;
    data.language = info.language();
    data.batch = c.batch;
    data.resolution = shape.resolution;
    data.num_classes = shape.num_classes;
    data.seq_len = shape.seq_len;
    data.channels_last = c.channels_last;
    source_owner = std::make_unique<SyntheticSource>(data, device, o.seed + 1);
  }
  DataSource& source = *source_owner;
  result.tokens_per_sample = info.language() ? shape.seq_len : 0;
  // Counts and names the files the loader skipped, also when the trial stops early.
  struct RecordFailures {
    ImageFolderSource* source;
    TrialResult& result;
    ~RecordFailures() {
      if (!source || !result.loader) return;
      const pipeline::LoaderStats s = source->stats();
      result.loader->failed_files = s.failed_files;
      result.loader->failed.clear();
      for (const auto& f : s.failed) result.loader->failed.push_back(f.path + ": " + f.reason);
    }
  } record_failures{folder_source, result};

  const int total_steps = c.warmup + c.steps;
  Clock::time_point timed_start = Clock::now();
  for (int step = 0; step < total_steps; ++step) {
    if (step == c.warmup) {
      synchronize(device);
      if (c.communicator) c.communicator->barrier();
      timed_start = Clock::now();
    }
    const auto step_start = Clock::now();
    double wait_s = 0;
    const StepOutcome outcome = trainer.step(source, wait_s);  // ends with a host sync
    const double step_s = seconds_since(step_start);
    if (!outcome.finite) {
      ++result.nonfinite_steps;
      if (!result.first_nonfinite_step) result.first_nonfinite_step = step;
    }
    if (step >= c.warmup) {
      result.step_time_s.push_back(step_s);
      result.data_wait_s.push_back(wait_s);
      result.loss.push_back(outcome.loss);
      if (outcome.grad_norm) result.grad_norm.push_back(*outcome.grad_norm);
    }
    if (rss_start && c.memory_limit_bytes) {
      const auto peak = device::peak_rss_bytes();
      if (peak && *peak - *rss_start > *c.memory_limit_bytes) {
        result.failure = FailureKind::out_of_memory;
        result.reason = "peak RSS growth " + std::to_string(*peak - *rss_start) + " bytes exceeded --memory-limit " +
                        std::to_string(*c.memory_limit_bytes);
        return;
      }
    }
    if (c.progress) c.progress(step, total_steps, result);
  }
  synchronize(device);
  result.timed_wall_s = seconds_since(timed_start);
  result.samples = static_cast<std::int64_t>(c.steps) * c.batch * o.accumulate;
  result.final_loss_scale = trainer.loss_scale();

  if (cuda) {
    const auto peak = cuda::peak_memory(c.device_index);
    result.peak_allocated_bytes = static_cast<double>(peak.allocated_bytes);
    result.peak_reserved_bytes = static_cast<double>(peak.reserved_bytes);
  } else {
    if (rss_start) {
      if (const auto peak = device::peak_rss_bytes())
        result.peak_rss_growth_bytes = static_cast<double>(*peak - *rss_start);
    }
    result.power_note = "no power counter on CPU";
  }

  const int all_steps = total_steps;
  if (o.precision == Precision::fp16 ? result.nonfinite_steps == all_steps : result.nonfinite_steps > 0) {
    result.failure = FailureKind::non_finite;
    result.reason = "loss or gradients not finite in " + std::to_string(result.nonfinite_steps) + " of " +
                    std::to_string(all_steps) + " steps (first at step " +
                    std::to_string(result.first_nonfinite_step.value_or(-1)) +
                    "); those updates were skipped — lower the learning rate or use --clip";
  }
}

}  // namespace

TrialResult run_trial(const TrialConfig& c) {
  TrialResult result;
  result.batch = c.batch;
  result.accumulate = c.options.accumulate;
  result.warmup_steps = c.warmup;
  bool out_of_memory = false;
  std::string message;
  try {
    run_trial_inner(c, result);
  } catch (const InputError&) {
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    out_of_memory = true;
    message = first_line(e.what_without_backtrace());
  } catch (const c10::Error& e) {
    message = first_line(e.what_without_backtrace());
    out_of_memory = is_out_of_memory_message(message);
    if (!out_of_memory) {
      result.failure = FailureKind::error;
      result.reason = message;
    }
  } catch (const std::bad_alloc&) {
    out_of_memory = true;
    message = "std::bad_alloc";
  } catch (const std::exception& e) {
    result.failure = FailureKind::error;
    result.reason = first_line(e.what());
  }
  // Recovery happens here, outside the catch blocks: the model, optimizer and batch were destroyed
  // while unwinding, so emptying the cache gives their memory back before the next trial.
  if (out_of_memory) {
    result.failure = FailureKind::out_of_memory;
    result.reason = message;
    result.step_time_s.clear();
  }
  if (c.options.device == DeviceKind::cuda) cuda::empty_cache();
  return result;
}

TorchEnvironment torch_environment(DeviceKind device, int device_index) {
  TorchEnvironment env;
  env.libtorch_version = TORCH_VERSION;
  env.cuda_available = torch::cuda::is_available();
  env.cuda_devices = static_cast<int>(torch::cuda::device_count());
  env.torch_threads = torch::get_num_threads();
  if (device == DeviceKind::cuda && env.cuda_available) {
    const cuda::DeviceInfo info = cuda::device_info(device_index);
    env.device_name = info.name;
    env.device_memory_bytes = info.total_memory_bytes;
    env.driver_version =
        info.driver_cuda_version ? std::optional<std::string>("CUDA " + *info.driver_cuda_version) : std::nullopt;
    env.cuda_version = info.runtime_cuda_version;
    env.cudnn_version = info.cudnn_version;
  } else {
    env.device_name = device::cpu_model_name();
  }
  return env;
}

void set_torch_threads(int threads) { torch::set_num_threads(threads); }

bool cuda_available() { return cuda::compiled() && torch::cuda::is_available(); }

std::int64_t model_parameter_count(const std::string& id, int resolution, int seq_len) {
  ModelShape shape;
  shape.resolution = resolution;
  shape.seq_len = seq_len;
  auto model = make_model(id, shape);
  return count_parameters(*model);
}

}  // namespace gpusage::bench
