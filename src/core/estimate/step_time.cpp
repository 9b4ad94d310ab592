// Step-time model: a roofline per layer with calibrated efficiencies, forward plus backward (one micro-batch:
// step_time_layers.cpp), then what each optimizer step adds once: autocast's weight casts, the optimizer step,
// CPU offload's copies, data-parallel communication, kernel overheads. See docs/MODEL.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"
#include "core/estimate/adapters.hpp"
#include "core/estimate/collectives.hpp"
#include "core/estimate/planner.hpp"
#include "core/estimate/step_time_detail.hpp"

namespace gpusage::estimate {

namespace {

// torch.optim's Adam or AdamW stepped op by op on the GPU (OptimizerImpl foreach or loop); a step on the host
// (offload) is priced by the host's own rate.
bool unfused_adam_step(const TrainingConfig& config) {
  return (config.optimizer == Optimizer::adam || config.optimizer == Optimizer::adamw) &&
         config.optimizer_impl != OptimizerImpl::fused && !config.offload.steps_on_host();
}

// Bytes moved per trainable parameter by one optimizer step. Fused: read the weight and its gradient, write the
// weight (3 x the master element), and read and write each state: SGD 12, momentum 20, Adam/AdamW 28 in fp32;
// pure bf16 halves them; 8-bit AdamW moves 1-byte states; Adafactor's factored state is negligible. torch.optim's
// foreach and loop Adam(W) run each op of the update as its own pass (torch/optim/adamw.py, _multi_tensor_adamw):
// lerp_ of m toward g (read m and g, write m), mul_ of v (read, write), addcmul_ of g squared into v (read v and g,
// write v), sqrt of v into a temporary (read v, write it), div_ and add_ of eps on the temporary (read and write it
// twice), addcdiv_ of the parameter by m over it (read p, m and it; write p): 14 state-sized accesses, 2 of the
// gradient and 2 of the parameter, where the fused kernel makes 4, 1 and 2. Weight decay's read and write of the
// parameters (torch.optim.AdamW's default 0.01; the Hugging Face Trainer's default 0) is left out.
double optimizer_traffic_per_param(const TrainingConfig& config) {
  const double master = master_element_bytes(config);  // the parameter's and its gradient's width
  const double states = optimizer_state_bytes_per_param(config);
  if (unfused_adam_step(config)) return 2 * master + 2 * master + 14 * (states / 2);
  return 3 * master + 2 * states;
}

// Autocast casts each fp32 weight to 16-bit once per forward: read 4 B, write 2 B per parameter (pure
// bf16 training has no fp32 copy to cast).
void add_weight_casts(detail::MicroBatch& mb, const detail::StepRates& r, const TrainingConfig& config, double params) {
  if (r.element < 4 && r.trains_base && config.master_weights == MasterWeights::fp32) {
    const double kernel_fixed_s = r.k->kernel_fixed_s;
    const double cast_s = 6 * params / r.bandwidth + mb.parameter_tensors / 2 * kernel_fixed_s;
    mb.forward_s += cast_s;
    mb.memory_s += 6 * params / r.bandwidth;
    mb.fixed_s += mb.parameter_tensors / 2 * kernel_fixed_s;
    mb.kernels += mb.parameter_tensors / 2;
  }
}

// The optimizer step: the bytes it moves on the GPU, the kernels it launches and its time.
struct OptimizerStep {
  double bytes = 0;
  double kernels = 0;
  double seconds = 0;
};

// Optimizer: a memory-bound sweep over trainable parameters and their state, in multi-tensor kernels.
// Mixed precision adds the grad scaler's unscale and inf check (read and write each gradient).
// A sharded optimizer (ZeRO, FSDP) steps only its rank's 1/N of the parameters.
OptimizerStep gpu_optimizer_step(const detail::StepRates& r, const TrainingConfig& config, double trainable,
                                 double parameter_tensors) {
  const ModelConstants& k = *r.k;
  const double shards = shard_ranks(config);
  OptimizerStep step;
  step.bytes = optimizer_traffic_per_param(config) * trainable / shards;
  if (config.precision == catalog::Precision::fp16) step.bytes += 8 * trainable / shards;
  // Kernels of the step: a fused step's few per chunk of tensors; foreach Adam(W)'s eight ops (the step count's
  // add and the seven above) each per chunk; the loop's eight per tensor.
  const double optimizer_chunks = std::ceil(parameter_tensors / k.optimizer_tensors_per_kernel);
  step.kernels = !unfused_adam_step(config)                        ? optimizer_chunks * 4
                 : config.optimizer_impl == OptimizerImpl::foreach ? optimizer_chunks * 8
                                                                   : parameter_tensors * 8;
  // Gradient clipping (clip_grad_norm_ with foreach kernels): one pass reads every gradient for the per-tensor
  // norms, a second reads and writes every gradient to scale it by max_norm / total (done whether or not the
  // norm exceeds it, so the host never waits on the value): 3 x the gradient bytes, on the rank's shard.
  if (config.clip_grad_norm) {
    step.bytes += 3 * master_element_bytes(config) * trainable / shards;
    step.kernels += optimizer_chunks * 2;
  }
  step.seconds = step.bytes / r.bandwidth + step.kernels * k.kernel_fixed_s;
  return step;
}

// CPU offload (docs/MODEL.md, "CPU offload"): the PCIe copies one micro-batch cannot hide behind its kernels.
// The step runs on the host over the same bytes, at the host's bandwidth (torch's CPU AdamW under FSDP's parameter
// offload, DeepSpeed's CPU-Adam otherwise), so `step` leaves the GPU; the GPU streams the gradients out while
// backward runs and, unless the weights live on the host, takes the updated 16-bit weights back after the step.
double offload_exposed_per_micro_batch_s(OptimizerStep& step, const detail::StepRates& r, const TrainingConfig& config,
                                         const MemoryBreakdown& memory, const detail::MicroBatch& mb, double params,
                                         double trainable, double pcie) {
  const ModelConstants& k = *r.k;
  const double shards = shard_ranks(config);
  const double sixteen_bit = r.element < 4 ? 2 : 4;  // a 16-bit model's weights and gradients
  double offload_s = 0;
  if (config.offload.steps_on_host()) {
    const double host_gbs = k.host_optimizer_gbs / (config.offload.params ? k.torch_cpu_optimizer_slowdown : 1.0);
    step.seconds = step.bytes / (host_gbs * 1e9);
    if (!config.offload.params) step.seconds += 2 * trainable / shards / pcie;
    step.bytes = 0;
    step.kernels = 0;
    offload_s += master_element_bytes(config) * trainable / shards / pcie;
  }
  // Parameter offload copies each weight shard in for forward's gather and again for backward's.
  if (config.offload.params && shards_weights(config)) {
    offload_s += 2 * params * sixteen_bit / shards / pcie;
  }
  // Activation offload copies what the blocks save out in forward and back in backward.
  offload_s += 2 * memory.host_activation_bytes / pcie;
  // The copies run on their own streams beside the micro-batch's kernels; what they cannot hide is exposed.
  return std::max(0.0, offload_s - k.allreduce_overlap_fraction * (mb.forward_s + mb.backward_s + mb.recompute_s));
}

// The step from its parts: the micro-batches, the optimizer step, the exposed offload and communication, and
// the host's dispatch when it is slower than the GPU; what bounds it; the calibration's per-card scale.
StepTime assemble(StepTime t, const detail::StepRates& r, const TrainingConfig& config, const detail::MicroBatch& mb,
                  const OptimizerStep& optimizer, double offload_exposed_s, const Calibration* calibration) {
  const ModelConstants& k = *r.k;
  const int accumulation = std::max(1, config.accumulation_steps);
  const double micro_s = mb.forward_s + mb.backward_s + mb.recompute_s + offload_exposed_s;
  t.offload_s = accumulation * offload_exposed_s;
  double gpu_s = accumulation * micro_s + t.optimizer_s;
  // The host issues every kernel; when it is slower than the GPU, the GPU waits (eager-mode overhead).
  const double host_s = (accumulation * mb.kernels + optimizer.kernels) * k.host_dispatch_s;
  t.compute_s = mb.compute_s * accumulation;
  t.memory_s = mb.memory_s * accumulation + optimizer.bytes / r.bandwidth;
  t.overhead_s = mb.fixed_s * accumulation + optimizer.kernels * k.kernel_fixed_s + std::max(0.0, host_s - gpu_s);
  t.recompute_s = mb.recompute_s * accumulation;
  const double scale = calibration ? calibration->scale_for(r.gpu->id) : 1.0;
  t.step_s = (std::max(gpu_s, host_s) + t.communication_s) * scale;
  if (t.overhead_s >= t.compute_s && t.overhead_s >= t.memory_s) {
    t.bound = Bound::overhead;
  } else {
    t.bound = t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
  }
  return t;
}

}  // namespace

double memory_bound_bandwidth(const ModelConstants& k, const catalog::Gpu& gpu) {
  const double dram = gpu.memory_bandwidth_gbs * 1e9 * k.memory_efficiency;
  if (k.sm_memory_gbs <= 0 || gpu.sm_count <= 0) return dram;
  // The DRAM's time and the SMs' time to keep the bytes in flight add (constants.hpp, sm_memory_gbs).
  return 1.0 / (1.0 / dram + 1.0 / (gpu.sm_count * k.sm_memory_gbs * 1e9));
}

StepTime estimate_step_time(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
                            const Calibration* calibration) {
  const ModelConstants& k = calibration ? calibration->constants : default_constants();
  const detail::StepRates r = detail::make_step_rates(k, w, config, gpu);
  detail::MicroBatch mb = detail::micro_batch_time(r, w, config);
  const double params = static_cast<double>(w.params());
  const double trainable = r.trains_base ? params : adapter_shape(w, config).adapter_params;
  add_weight_casts(mb, r, config, params);
  OptimizerStep optimizer = gpu_optimizer_step(r, config, trainable, mb.parameter_tensors);
  // The memory model is needed only for what it puts on the host (offloaded activations, paged-out states);
  // the step time is evaluated for every row of every fold of validate's fit, so it is not run otherwise.
  const bool paged = config.optimizer == Optimizer::paged_adamw || config.optimizer == Optimizer::paged_adamw8bit;
  const MemoryBreakdown memory =
      config.offload.activations || paged ? estimate_memory(w, config, gpu, calibration) : MemoryBreakdown{};
  const double pcie = detail::pcie_gbs(gpu) * 1e9 * k.link_efficiency;
  const double offload_exposed_s =
      offload_exposed_per_micro_batch_s(optimizer, r, config, memory, mb, params, trainable, pcie);
  // Paged optimizer states the driver moved to the host come back over PCIe for the step and go out again
  // when the next forward needs the room: twice their bytes per optimizer step.
  if (paged) {
    optimizer.seconds += 2 * memory.paged_out_bytes / pcie;
  }
  StepTime t;
  t.optimizer_s = optimizer.seconds;
  t.communication_s = detail::communication_s(r, w, config, mb, params, trainable);
  return assemble(t, r, config, mb, optimizer, offload_exposed_s, calibration);
}

}  // namespace gpusage::estimate
