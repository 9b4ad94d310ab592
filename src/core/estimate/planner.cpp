// The planner: predictions for one configuration, the largest batch, accumulation to a target batch,
// and advice with the numbers after each change.
#include "core/estimate/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/units.hpp"
#include "core/estimate/adapters.hpp"
#include "core/estimate/attention_kernel.hpp"
#include "core/estimate/uncertainty.hpp"

namespace gpusage::estimate {

const ModelConstants& default_constants() {
  static const ModelConstants constants{};
  return constants;
}

const ModelConstants& prior_constants() {
  static const ModelConstants prior = [] {
    ModelConstants k{};
    // Large cuDNN convolutions and cuBLAS GEMMs reach 60-80% of the dense tensor peak (NVIDIA Deep
    // Learning Performance Guide, "Matrix Multiplication Background"); TF32 about as close to its own.
    k.conv_tensor_efficiency = 0.7;
    k.matmul_tensor_efficiency = 0.7;
    k.tf32_relative_efficiency = 0.9;
    // SGEMM on CUDA cores: 80-90% of the FP32 peak.
    k.conv_fp32_efficiency = 0.8;
    k.matmul_fp32_efficiency = 0.8;
    // FlashAttention-2 reaches 50-73% of the A100 peak against 70-80% for a GEMM (Dao 2023): about 0.8.
    k.attention_relative_efficiency = 0.8;
    // The DRAM side alone, with the SMs' in-flight limit counted apart (sm_memory_gbs): 90% of peak, where
    // STREAM-like copies that keep enough in flight end (80-90% of peak, the SMs' limit included).
    k.memory_efficiency = 0.9;
    // cuDNN's depthwise kernels: a quarter of an elementwise kernel's bandwidth.
    k.depthwise_conv_relative_efficiency = 0.25;
    // A kernel's GPU-side launch, ramp and tail: about 2 us; eager PyTorch's host dispatch: 10-20 us per op.
    k.kernel_fixed_s = 2e-6;
    k.host_dispatch_s = 12e-6;
    // The allocator is assumed to give none of its reserve back until runs at the card's edge say so.
    k.allocator_unreleasable_fraction = k.allocator_overhead_fraction;
    return k;
  }();
  return prior;
}

const char* to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd: return "sgd";
    case Optimizer::momentum: return "momentum";
    case Optimizer::adam: return "adam";
    case Optimizer::adamw: return "adamw";
    case Optimizer::adamw8bit: return "adamw8bit";
    case Optimizer::paged_adamw: return "paged_adamw";
    case Optimizer::paged_adamw8bit: return "paged_adamw8bit";
    case Optimizer::adafactor: return "adafactor";
    case Optimizer::lion: return "lion";
  }
  return "?";
}

namespace {
constexpr Optimizer kOptimizers[] = {
    Optimizer::sgd,         Optimizer::momentum,        Optimizer::adam,      Optimizer::adamw, Optimizer::adamw8bit,
    Optimizer::paged_adamw, Optimizer::paged_adamw8bit, Optimizer::adafactor, Optimizer::lion};

// The value of `all` whose to_string is `name`: the one parser of every named option value.
template <typename E, std::size_t N>
std::optional<E> parse_named(const std::string& name, const E (&all)[N]) {
  for (E value : all) {
    if (name == to_string(value)) return value;
  }
  return std::nullopt;
}

// Every value's name, "|"-separated, for help and error messages.
template <typename E, std::size_t N>
std::string joined_names(const E (&all)[N]) {
  std::string names;
  for (E value : all) names += std::string(names.empty() ? "" : "|") + to_string(value);
  return names;
}
}  // namespace

std::optional<Optimizer> parse_optimizer(const std::string& name) { return parse_named(name, kOptimizers); }

std::string optimizer_names() { return joined_names(kOptimizers); }

const char* to_string(LossImpl loss) {
  switch (loss) {
    case LossImpl::plain: return "plain";
    case LossImpl::plain16: return "plain16";
    case LossImpl::chunked: return "chunked";
    case LossImpl::fused: return "fused";
  }
  return "?";
}

std::optional<LossImpl> parse_loss(const std::string& name) {
  constexpr LossImpl kAll[] = {LossImpl::plain, LossImpl::plain16, LossImpl::chunked, LossImpl::fused};
  return parse_named(name, kAll);
}

const char* to_string(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::fused: return "fused";
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::loop: return "loop";
  }
  return "?";
}

std::optional<OptimizerImpl> parse_optimizer_impl(const std::string& name) {
  constexpr OptimizerImpl kAll[] = {OptimizerImpl::fused, OptimizerImpl::foreach, OptimizerImpl::loop};
  return parse_named(name, kAll);
}

const char* to_string(LoraTargets targets) {
  switch (targets) {
    case LoraTargets::attention: return "attn";
    case LoraTargets::mlp: return "mlp";
    case LoraTargets::all: return "all";
  }
  return "?";
}

std::optional<LoraTargets> parse_lora_targets(const std::string& name) {
  constexpr LoraTargets kAll[] = {LoraTargets::attention, LoraTargets::mlp, LoraTargets::all};
  return parse_named(name, kAll);
}

const char* to_string(Interconnect interconnect) {
  switch (interconnect) {
    case Interconnect::card: return "card";
    case Interconnect::pcie: return "pcie";
    case Interconnect::nvlink: return "nvlink";
  }
  return "?";
}

std::optional<Interconnect> parse_interconnect(const std::string& name) {
  constexpr Interconnect kAll[] = {Interconnect::card, Interconnect::pcie, Interconnect::nvlink};
  return parse_named(name, kAll);
}

const char* to_string(Parallel parallel) {
  switch (parallel) {
    case Parallel::ddp: return "ddp";
    case Parallel::zero1: return "zero1";
    case Parallel::zero2: return "zero2";
    case Parallel::fsdp: return "fsdp";
    case Parallel::hsdp: return "hsdp";
  }
  return "?";
}

namespace {
constexpr Parallel kParallels[] = {Parallel::ddp, Parallel::zero1, Parallel::zero2, Parallel::fsdp, Parallel::hsdp};
}  // namespace

std::optional<Parallel> parse_parallel(const std::string& name) { return parse_named(name, kParallels); }

bool offload_allowed(const Offload& offload, Parallel parallel) { return !offload.params || shards_weights(parallel); }

std::string parallel_names() { return joined_names(kParallels); }

const char* to_string(Bound bound) {
  switch (bound) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::overhead: return "overhead";
  }
  return "?";
}

double default_dataset_size(const workload::Workload& w) {
  // ImageNet-1k (ILSVRC 2012) training split: 1,281,167 images (Russakovsky et al. 2015, Table 2).
  return w.domain == workload::Domain::vision ? 1281167.0 : 0.0;
}

TrainingConfig plan_target_batch(const workload::Workload& w, TrainingConfig config, const catalog::Gpu& gpu,
                                 int target_batch, const Calibration* calibration) {
  return plan_target_batch_within(w, config, gpu, target_batch, max_batch(w, config, gpu, calibration));
}

TrainingConfig plan_target_batch_within(const workload::Workload& w, TrainingConfig config, const catalog::Gpu& gpu,
                                        int target_batch, int largest) {
  if (target_batch < 1) throw InputError(fmt::format("--target-batch {} must be at least 1", target_batch));
  if (largest < 1) {
    throw InputError(
        fmt::format("{} does not fit on {} even at batch 1, so no accumulation plan reaches "
                    "--target-batch {}",
                    w.display_name, gpu.name, target_batch));
  }
  const int world = config.world_size();
  const int per_gpu = (target_batch + world - 1) / world;  // samples each GPU contributes per step
  // Fewest accumulation steps first; among those, an exact split of the target when one exists.
  const int min_steps = (per_gpu + largest - 1) / largest;
  for (int steps = min_steps; steps <= min_steps * 4 && steps <= per_gpu; ++steps) {
    if (per_gpu % steps == 0 && per_gpu / steps <= largest && per_gpu * world == target_batch) {
      config.accumulation_steps = steps;
      config.batch_per_gpu = per_gpu / steps;
      return config;
    }
  }
  config.accumulation_steps = min_steps;
  config.batch_per_gpu = (per_gpu + min_steps - 1) / min_steps;
  return config;
}

namespace {

// The table's memory column is the peak nvidia-smi shows (total_bytes); what must fit (required_bytes) leaves
// out the allocator's releasable cache and paged optimizer states. Said beside the "needs" figure, so that the
// two numbers read as the two quantities they are.
std::string beyond_required_text(const MemoryBreakdown& m) {
  const double beyond = m.total_bytes() - m.required_bytes();
  if (beyond < 0.05 * units::kGiB) return "";
  return i18n::trf(
      "; the table's {} is the peak nvidia-smi shows, {} more in cached blocks the allocator frees "
      "{}before it runs out",
      units::format_gib(m.total_bytes()), units::format_gib(beyond),
      m.paged_bytes > 0 ? i18n::tr("and paged optimizer states the driver moves to the host ") : "");
}

std::optional<catalog::Precision> mixed_precision_for(const catalog::Gpu& gpu) {
  if (gpu.supports(catalog::Precision::bf16)) return catalog::Precision::bf16;
  if (gpu.supports(catalog::Precision::fp16)) return catalog::Precision::fp16;
  return std::nullopt;
}

void add_advice(Prediction& p, const workload::Workload& w, const catalog::Gpu& gpu, const Calibration* calibration) {
  const TrainingConfig& c = p.config;
  auto& advice = p.advice;
  using catalog::Precision;

  if (gpu.modification) {
    advice.push_back(i18n::trf("{} ({}) is a modified card: {}", gpu.name, gpu.id, *gpu.modification));
  } else if (const auto watts = catalog::default_laptop_power_w(gpu)) {
    advice.push_back(
        i18n::trf("assumed: {:g} W, the top of the {}'s {:g}-{:g} W range; its laptop's maker sets the "
                  "limit (nvidia-smi -q -d POWER shows it): give yours with --gpu-power W (or --gpu {}@<W>w)",
                  *watts, gpu.name, gpu.power_min_w.value_or(*watts), gpu.tdp_w, gpu.id));
  }
  if (gpu.default_note) advice.push_back(*gpu.default_note);
  if (auto note = attention_fallback_note(gpu, w)) advice.push_back(std::move(*note));
  if (!gpu.matmul_tflops(c.precision)) {
    advice.push_back(i18n::trf(
        "{} has no {} tensor cores: matrix math runs at its FP32 rate of {:.1f} TFLOPS; "
        "use {} instead",
        gpu.name, catalog::to_string(c.precision), gpu.fp32_tflops, gpu.supports(Precision::fp16) ? "fp16" : "fp32"));
  }

  if (!p.fits) {
    advice.push_back(i18n::trf("batch {} needs {} but {} has {}: it does not fit{}", c.batch_per_gpu,
                               units::format_gib(p.memory.required_bytes()), gpu.name,
                               units::format_gib(p.capacity_bytes), beyond_required_text(p.memory)));
    if (p.max_batch > 0) {
      const int steps = (c.batch_per_gpu + p.max_batch - 1) / p.max_batch;
      advice.push_back(
          i18n::trf("keep the effective batch: --batch {} with {} accumulation steps "
                    "(--target-batch {})",
                    (c.batch_per_gpu + steps - 1) / steps, steps, c.batch_per_gpu * c.world_size()));
    }
    if (c.precision == Precision::fp32 || c.precision == Precision::tf32) {
      if (auto mixed = mixed_precision_for(gpu)) {
        TrainingConfig m = c;
        m.precision = *mixed;
        advice.push_back(i18n::trf("mixed precision (--precision {}): largest batch {}", catalog::to_string(*mixed),
                                   max_batch(w, m, gpu, calibration)));
      }
    }
    if (!c.checkpointing) {
      TrainingConfig m = c;
      m.checkpointing = true;
      const int largest = max_batch(w, m, gpu, calibration);
      if (largest > p.max_batch) {
        advice.push_back(
            i18n::trf("activation checkpointing (--checkpointing): largest batch {} for about "
                      "a third more compute",
                      largest));
      }
    }
    if (w.domain == workload::Domain::language && lora_rank(c) == 0) {
      TrainingConfig m = c;
      m.lora_rank = 16;
      const double lora_total = estimate_memory(w, m, gpu, calibration).required_bytes();
      m.qlora = true;
      const double qlora_total = estimate_memory(w, m, gpu, calibration).required_bytes();
      advice.push_back(i18n::trf("fine-tune with LoRA rank 16 (--lora 16): {} at this batch; QLoRA (--qlora): {}",
                                 units::format_gib(lora_total), units::format_gib(qlora_total)));
    }
    if (!c.offload.steps_on_host() && lora_rank(c) == 0 && !shards_weights(c)) {
      // ZeRO-Offload: the optimizer state and fp32 masters on the host, where a full fine-tune keeps most bytes.
      TrainingConfig m = c;
      m.offload.optimizer = true;
      if (m.optimizer == Optimizer::paged_adamw || m.optimizer == Optimizer::paged_adamw8bit)
        m.optimizer = Optimizer::adamw;
      const MemoryBreakdown offloaded = estimate_memory(w, m, gpu, calibration);
      if (offloaded.fits(gpu.memory_bytes())) {
        advice.push_back(
            i18n::trf("keep the optimizer state on the CPU (--offload optimizer, DeepSpeed ZeRO-Offload): "
                      "{} on the GPU and {} of pinned host memory, for a slower step",
                      units::format_gib(offloaded.total_bytes()), units::format_gib(offloaded.host_bytes)));
      }
    }
    if (!shards_weights(c)) {
      // The fewest GPUs FSDP needs, first alone, then together with checkpointing (activations are not
      // sharded, so a long sequence may need both).
      bool found = false;
      for (bool checkpointing : {c.checkpointing, true}) {
        for (int gpus : {2, 4, 8, 16, 32, 64}) {
          TrainingConfig m = c;
          m.parallel = Parallel::fsdp;
          m.checkpointing = checkpointing;
          m.gpus_per_node = std::min(gpus, 8);
          m.nodes = std::max(1, gpus / 8);
          const MemoryBreakdown sharded = estimate_memory(w, m, gpu, calibration);
          const double total = sharded.total_bytes();
          if (sharded.fits(gpu.memory_bytes())) {
            advice.push_back(
                i18n::trf("shard weights, gradients and optimizer state with FSDP over {} GPUs "
                          "(--parallel fsdp --gpus {}{}{}): {} per GPU",
                          gpus, m.gpus_per_node, m.nodes > 1 ? fmt::format(" --nodes {}", m.nodes) : "",
                          checkpointing && !c.checkpointing ? " --checkpointing" : "", units::format_gib(total)));
            found = true;
            break;
          }
        }
        if (found || c.checkpointing) break;  // the second pass adds checkpointing only when it was off
      }
    }
    return;
  }

  const double used = p.memory.required_bytes() / p.capacity_bytes;
  if (used > 0.9) {
    advice.push_back(i18n::trf(
        "needs {:.0f}% of memory ({} of {} must fit{}): fragmentation or a longer sequence could OOM; batch {} "
        "leaves 10% headroom",
        used * 100, units::format_gib(p.memory.required_bytes()), units::format_gib(p.capacity_bytes),
        beyond_required_text(p.memory), std::max(1, static_cast<int>(p.max_batch * 0.9))));
  }
  if (p.time.bound == Bound::overhead) {
    advice.push_back(
        i18n::tr("kernel launch overhead dominates: a larger batch, CUDA graphs or torch.compile would "
                 "keep the GPU busy"));
  }
  if (c.precision == Precision::fp32 || c.precision == Precision::tf32) {
    if (auto mixed = mixed_precision_for(gpu)) {
      TrainingConfig m = c;
      m.precision = *mixed;
      const StepTime faster = estimate_step_time(w, m, gpu, calibration);
      const double throughput = m.batch_per_gpu * m.accumulation_steps / faster.step_s;
      advice.push_back(i18n::trf("mixed precision (--precision {}) predicts {:.0f} samples/s ({:.1f}x)",
                                 catalog::to_string(*mixed), throughput, throughput / p.throughput));
    }
  }
}

}  // namespace

Prediction predict(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
                   const Calibration* calibration) {
  return predict(w, config, gpu, calibration, max_batch(w, config, gpu, calibration));
}

Prediction predict(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
                   const Calibration* calibration, int known_max_batch, const workload::Workload* timed) {
  if (config.batch_per_gpu < 1) throw InputError(fmt::format("batch {} must be at least 1", config.batch_per_gpu));
  if (config.gpus_per_node < 1 || config.nodes < 1) throw InputError("--gpus and --nodes must be at least 1");
  Prediction p;
  p.config = config;
  p.gpu = &gpu;
  p.memory = estimate_memory(w, config, gpu, calibration);
  p.capacity_bytes = gpu.memory_bytes();
  p.fits = p.memory.fits(p.capacity_bytes);
  p.max_batch = known_max_batch;
  const workload::Workload& timed_workload = timed ? *timed : w;
  p.time = estimate_step_time(timed_workload, config, gpu, calibration);
  const int accumulation = std::max(1, config.accumulation_steps);
  p.effective_batch = config.batch_per_gpu * accumulation * config.world_size();
  p.throughput = config.batch_per_gpu * accumulation / p.time.step_s;
  if (w.domain == workload::Domain::language) p.tokens_per_s = p.throughput * timed_workload.seq_len;
  const double dataset = config.dataset_size > 0 ? config.dataset_size : default_dataset_size(w);
  if (dataset > 0) {
    p.epoch_time_s = dataset / (p.throughput * config.world_size());
    p.energy_wh_per_epoch = *p.epoch_time_s * gpu.tdp_w * config.world_size() / 3600.0;
  }
  add_advice(p, w, gpu, calibration);
  const Interval interval = throughput_interval(builtin_interval_table(), p.throughput, model_family(w.id),
                                                catalog::to_string(config.precision), gpu.architecture,
                                                config.world_size(), fine_tuning_method(config, w.causal_lm));
  p.throughput_low = interval.low;
  p.throughput_high = interval.high;
  p.interval_basis = interval.basis;
  p.validation_warnings = interval.warnings;
  return p;
}

}  // namespace gpusage::estimate
