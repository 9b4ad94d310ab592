// One training step, in pieces the tests can check: gradient accumulation over micro-batches, the
// all-reduce between processes, fp16 loss scaling, gradient-norm clipping and the non-finite check.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.hpp"
#include "bench/data_source.hpp"
#include "bench/torch_models.hpp"

namespace gpusage::bench {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;
  // Replaces each tensor by its mean over the processes.
  virtual void all_reduce_mean(std::vector<torch::Tensor>& tensors) = 0;
  virtual void barrier() = 0;
};

struct TrainerConfig {
  torch::Device device = torch::kCPU;
  Precision precision = Precision::fp32;
  OptimizerKind optimizer = OptimizerKind::momentum;
  bool language = false;
  int accumulate = 1;
  std::optional<double> clip_norm;
  bool channels_last = false;
  double learning_rate = 0;  // 0: the optimizer's usual value (SGD 0.01, AdamW 1e-4)
  Communicator* communicator = nullptr;
};

struct StepOutcome {
  double loss = 0;                  // mean over the micro-batches (unscaled)
  std::optional<double> grad_norm;  // global L2 norm before clipping, when computed (--clip, fp16)
  bool finite = true;               // loss and (when computed) gradients finite
  bool updated = true;              // false: the optimizer step was skipped (non-finite)
};

// Global L2 norm of the gradients of `parameters`, computed on the device without a host sync, and,
// when it is above `max_norm`, the gradients scaled by max_norm / (norm + 1e-6) — what
// torch.nn.utils.clip_grad_norm_ does. Returns the norm before clipping (a 0-d tensor).
torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, std::optional<double> max_norm);

class Trainer {
 public:
  Trainer(std::shared_ptr<BenchModelImpl> model, const TrainerConfig& config);

  // Zeroes the gradients, then runs forward (under autocast for fp16/bf16) and backward on
  // `accumulate` micro-batches from `source`, each loss divided by `accumulate` (and multiplied by the
  // fp16 loss scale). Adds the time spent in source.next() to `data_wait_s`. Returns the summed,
  // unscaled loss as a 0-d tensor on the device.
  torch::Tensor accumulate_gradients(DataSource& source, double& data_wait_s);
  // All-reduce, unscale, clip, check, update; reads the loss (and norm) back: one host sync per step.
  StepOutcome finish_step(const torch::Tensor& loss);
  StepOutcome step(DataSource& source, double& data_wait_s) {
    return finish_step(accumulate_gradients(source, data_wait_s));
  }

  BenchModelImpl& model() { return *model_; }
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  std::optional<double> loss_scale() const;

 private:
  torch::Tensor loss_of(const Batch& batch);

  std::shared_ptr<BenchModelImpl> model_;
  TrainerConfig config_;
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  // fp16 dynamic loss scaling (torch.cuda.amp.GradScaler's defaults).
  double scale_ = 65536.0;
  int growth_tracker_ = 0;
  static constexpr double kGrowthFactor = 2.0;
  static constexpr double kBackoffFactor = 0.5;
  static constexpr int kGrowthInterval = 2000;
};

// Puts 4-D parameters in channels_last (NHWC) memory order, what PyTorch's module.to(memory_format=…) does.
void to_channels_last(torch::nn::Module& module);

}  // namespace gpusage::bench
