// The training planner: memory and step-time predictions for a workload on a GPU, and the plan built
// from them (largest batch that fits, gradient accumulation to a target batch, throughput, epoch, energy).
//
// The models are documented in docs/MODEL.md, beside the constants they use (estimate/constants.hpp).
#pragma once

#include <algorithm>
#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/gpu.hpp"
#include "core/estimate/calibration.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {

// adamw8bit / paged_adamw8bit: bitsandbytes' blockwise 8-bit states; paged_adamw: 32-bit states in unified
// memory (paged to the host only under pressure, so on the GPU like adamw); adafactor: factored second
// moment, no first moment (transformers' default); lion: one momentum state.
enum class Optimizer { sgd, momentum, adam, adamw, adamw8bit, paged_adamw, paged_adamw8bit, adafactor, lion };
const char* to_string(Optimizer optimizer);
std::optional<Optimizer> parse_optimizer(const std::string& name);
// Every optimizer name parse_optimizer accepts, "|"-separated, for help and error messages.
std::string optimizer_names();

// How data-parallel ranks hold the training state (Rajbhandari et al. 2020, "ZeRO", section 5; DeepSpeed's
// stages, PyTorch FSDP's sharding strategies):
//   ddp    every rank holds everything (DistributedDataParallel);
//   zero1  the optimizer state, with the fp32 master weights, is sharded (DeepSpeed stage 1, Megatron's
//          distributed optimizer); the model's 16-bit weights and gradients stay whole;
//   zero2  the gradients are sharded too (DeepSpeed stage 2, FSDP SHARD_GRAD_OP's memory);
//   fsdp   weights as well (FSDP FULL_SHARD, DeepSpeed stage 3): a unit is gathered to run;
//   hsdp   FSDP within a node, replicated across nodes (HYBRID_SHARD): shards over the node's GPUs.
enum class Parallel { ddp, zero1, zero2, fsdp, hsdp };
const char* to_string(Parallel parallel);
std::optional<Parallel> parse_parallel(const std::string& name);
std::string parallel_names();  // "ddp|zero1|...", for help and error messages

// What lives in pinned host memory instead of the GPU (CPU offload):
//   optimizer    ZeRO-Offload (Ren et al. 2021): the fp32 master weights, optimizer state and fp32
//                gradients; the optimizer step runs on the CPU (DeepSpeed's CPU-Adam);
//   params       FSDP's CPUOffload(offload_params=True) / ZeRO-3 offload_param: weight shards too, copied
//                in for each gather; implies optimizer (the step runs on the CPU, in torch's CPU AdamW);
//   activations  what autograd saves, copied out in forward and back in backward on a side stream
//                (torchtune's activation offloading); about two blocks' worth stays on the GPU.
struct Offload {
  bool optimizer = false;
  bool params = false;
  bool activations = false;
  bool any() const { return optimizer || params || activations; }
  bool steps_on_host() const { return optimizer || params; }  // the optimizer step runs on the CPU
  auto operator<=>(const Offload&) const = default;
};

// Parameter offload moves FSDP's weight shards to the host, so it needs a parallelism that shards the weights
// (fsdp, hsdp): under ddp, zero1 and zero2 every GPU keeps whole weights. False when `offload` asks for it
// under any other. The one statement of the rule: plan's --offload and validate's `offload` column both ask
// it, each with a message that names its own flag or CSV row.
bool offload_allowed(const Offload& offload, Parallel parallel);

// How the GPUs of a node talk: card (the catalog's: NVLink where the card has it, else PCIe), pcie (no
// bridge or switch: two RTX 3090s without their NVLink bridge) or nvlink (the card must have it).
enum class Interconnect { card, pcie, nvlink };
const char* to_string(Interconnect interconnect);
std::optional<Interconnect> parse_interconnect(const std::string& name);

// Where the trainable weights, their gradients and 32-bit optimizer states live: fp32 master weights
// (autocast, apex O2, DeepSpeed/FSDP mixed precision) or the pure-bf16 training of torchtune, LitGPT
// (bf16-true) and torchtitan, where weights, gradients and AdamW's states are all bf16.
enum class MasterWeights { fp32, bf16 };

// How the language-model loss treats the logits (batch x tokens x vocabulary):
//   plain   F.cross_entropy(logits.float()): the fp32 log-softmax is kept for backward, and the 16-bit
//           logits and their gradient are in flight (Hugging Face's default path);
//   chunked torchtune's CEWithChunkedOutputLoss: the output projection runs in 8 chunks, each upcast and
//           reduced on its own, so only the 16-bit logits and one chunk's fp32 copies exist;
//   fused   fused linear cross-entropy (Liger, Unsloth, Apple's Cut Cross-Entropy): the logits are never
//           whole; each chunk's gradient is made in the forward pass and the chunk freed.
// plain: the whole logits' fp32 log-softmax (Hugging Face's loss upcasts; autocast runs cross-entropy in fp32);
// plain16: the same loss left in the model's 16-bit dtype (nn.CrossEntropyLoss on a pure 16-bit model's logits,
// no upcast); chunked: torchtune's chunked output; fused: a fused linear cross-entropy (Liger, Unsloth).
enum class LossImpl { plain, plain16, chunked, fused };
const char* to_string(LossImpl loss);
std::optional<LossImpl> parse_loss(const std::string& name);

// How the optimizer step is implemented, which decides how many times it sweeps the parameters and states:
//   fused    one kernel reads each parameter, gradient and state once and writes them once (torch.optim's
//            fused=True, apex FusedAdam/FusedLAMB, DeepSpeed's FusedAdam, bitsandbytes, TensorFlow's per-variable
//            ApplyAdam, XLA);
//   foreach  torch.optim's default on CUDA since PyTorch 2.0: a multi-tensor kernel per elementwise op of the update
//            (lerp_, mul_, addcmul_, sqrt, div_, add_, addcdiv_ for AdamW), each a pass over its tensor lists, and a
//            temporary list of sqrt(v) (memory.cpp);
//   loop     torch.optim before 2.0 (and Hugging Face's own AdamW): the same ops tensor by tensor, no list temporary.
enum class OptimizerImpl { fused, foreach, loop };
// gpusage bench trains with LibTorch's C++ optimizers, which step each parameter with its own tensor ops
// (torch/csrc/api/src/optim/adamw.cpp: mul_, add_, addcmul_, sqrt, div, add_, addcdiv_ per parameter): the loop.
inline constexpr OptimizerImpl kLibTorchOptimizerImpl = OptimizerImpl::loop;
const char* to_string(OptimizerImpl impl);
std::optional<OptimizerImpl> parse_optimizer_impl(const std::string& name);

// How FP8 training scales its tensors (fp8_linears.cpp prices each):
//   delayed        Transformer Engine's DelayedScaling (its default recipe, NeMo's and Megatron's): each scale
//                  comes from the amax history of earlier steps, so a TE kernel that makes a linear's input writes
//                  it in FP8 directly (LayerNormLinear's norm), and the other casts take the amax in the pass that
//                  writes the FP8 tensor and its transpose;
//   tensorwise     current (dynamic) per-tensor scaling, torchao float8's default (torchtitan): the amax of a
//                  tensor is a reduction pass of its own before the cast, and the transposes are passes of their own;
//   producer-amax  llm.q: the kernel that makes a tensor also takes its abs-max, and every cast (with its
//                  transpose) is a pass of its own, the norms' outputs included.
enum class Fp8Recipe { delayed, tensorwise, producer_amax };
const char* to_string(Fp8Recipe recipe);
std::optional<Fp8Recipe> parse_fp8_recipe(const std::string& name);

// Which fused attention kernel the software runs (attention_kernel.cpp prices each against FlashAttention 2):
//   flash2  FlashAttention 2: flash-attn 2.x, PyTorch's SDPA flash backend from 2.2 (2024-01);
//   flash1  FlashAttention 1's generation: PyTorch's SDPA before 2.2, flash-attn 1.x, xFormers' CUTLASS kernel, the
//           Triton kernels of 2023;
//   cudnn   a Hopper-native kernel on sm90 and newer: cuDNN's fused attention (Transformer Engine's choice there, so
//           NeMo's and Megatron's), FlashAttention 3; FlashAttention 2's speed on older cards.
enum class AttentionKernelGeneration { flash2, flash1, cudnn };
const char* to_string(AttentionKernelGeneration generation);
std::optional<AttentionKernelGeneration> parse_attention_kernel_generation(const std::string& name);

// Which linear maps of a transformer block LoRA adapts: attention (q, k, v, o), MLP (gate, up, down), or
// both (PEFT's "all-linear", QLoRA's recipe).
enum class LoraTargets { attention, mlp, all };
const char* to_string(LoraTargets targets);
std::optional<LoraTargets> parse_lora_targets(const std::string& name);

struct TrainingConfig {
  int batch_per_gpu = 32;
  catalog::Precision precision = catalog::Precision::fp32;  // fp16/bf16 = autocast with fp32 master weights
  Optimizer optimizer = Optimizer::momentum;
  bool checkpointing = false;  // activation checkpointing per segment (block)
  // With checkpointing: keep what the GEMMs and attention produce and recompute only the memory-bound
  // ops (norms, activations, residual adds, rotary) inside each block: selective activation checkpointing
  // as torchtitan's op-level policy and PyTorch's SAC keep the compute-intensive outputs.
  bool selective_checkpointing = false;
  // With checkpointing: only every Nth block is checkpointed (torchtitan's layer-level selective AC,
  // ac_freq); the others keep all they save.
  int checkpoint_every = 1;
  MasterWeights master_weights = MasterWeights::fp32;
  LossImpl loss = LossImpl::plain;
  LoraTargets lora_targets = LoraTargets::all;
  // The optimizer step fused into backward (torchtune's optimizer_in_bwd, PyTorch's
  // register_post_accumulate_grad_hook): each parameter is stepped as soon as its gradient is made, and the
  // gradient freed, so only one tensor's gradient exists at a time.
  bool optimizer_in_backward = false;
  // The gradients' global norm clipped before each optimizer step (torch.nn.utils.clip_grad_norm_; the Hugging
  // Face Trainer's max_grad_norm = 1.0 by default): a norm over every gradient, then every gradient scaled.
  bool clip_grad_norm = false;
  bool channels_last = false;
  // fp16/bf16 as a pure 16-bit model with fp32 master weights (apex amp O2, model.half()) instead of
  // autocast: every op, softmax and norms included, runs and saves in 16-bit.
  bool pure_16bit = false;       // NHWC activations (memory_format=torch.channels_last); vision models
  std::optional<int> lora_rank;  // LoRA adapters of this rank on the workload's lora_targets
  bool qlora = false;            // frozen base stored in 4-bit NF4 (implies LoRA, default rank 16)
  // QLoRA's base prepared by PEFT's prepare_model_for_kbit_training (TRL's SFTTrainer, the Hugging Face QLoRA
  // recipe, Axolotl, LLaMA-Factory): the parameters it did not quantize (embeddings, norms, lm_head) are cast to fp32,
  // so the hidden state the decoder carries is fp32 and every 4-bit linear casts its input to the compute dtype and
  // its output back (bitsandbytes' Linear4bit). Only with fp32 master weights: pure-bf16 recipes do not call it.
  // False: Unsloth, fms-acceleration's accelerated-peft plugin, or a script that calls get_peft_model only.
  bool kbit_upcast = true;
  // LoRA dropout probability (PEFT's lora_dropout; 0 makes it an identity). Above 0 every adapter keeps its
  // own dropped-out copy of its input and the dropout's mask for backward.
  double lora_dropout = 0;
  int gpus_per_node = 1;
  int nodes = 1;
  Parallel parallel = Parallel::ddp;
  Offload offload;
  Interconnect interconnect = Interconnect::card;
  int accumulation_steps = 1;  // micro-batches of batch_per_gpu per optimizer step
  double dataset_size = 0;     // samples per epoch; 0: the workload's default (ImageNet-1k for vision)
  double network_gbs = 0;      // per-node network bandwidth for --nodes > 1, GB/s; 0: the default
  // CUDA before 11.7 / PyTorch before 1.13 load every kernel of every library into the context at start
  // (validation rows of older software); today's default is lazy loading.
  bool eager_module_loading = false;
  // PyTorch before 2.8 reduced a native LayerNorm's weight and bias gradients over the rows in one 32 x 32-thread
  // block per 32 columns (validation rows of older software; step_time.cpp); 2.8's kernel splits the rows too.
  bool column_block_layer_norm_backward = false;
  // optimizer.zero_grad() frees the gradients (set_to_none=True, PyTorch 2.0's default), so each backward starts
  // without them; before 2.0 it zeroed them in place and they stayed for the next step (validation rows of older
  // software, and TensorFlow's, keep them).
  bool gradients_freed_between_steps = true;
  // The optimizer step's implementation (OptimizerImpl): torch.optim's foreach by default, PyTorch 2.0's default
  // for CUDA parameters when fused=True is not asked for (pytorch/pytorch PR 95415).
  OptimizerImpl optimizer_impl = OptimizerImpl::foreach;
  // Hugging Face's eager Python elementwise code (RMSNorm's fp32 chain, rotary's rotate_half) rather than fused
  // kernels (torch.compile, Liger, Transformer Engine, a C++ trainer): Layer::eager_extra_elements.
  bool eager_kernels = true;
  // FP8 training's scaling recipe (precision fp8 only).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // Norms that run in 16 bits under autocast (MosaicML's LPLayerNorm, a norm kernel that takes the 16-bit input):
  // their saved input is 16-bit, not autocast's fp32 (memory.cpp).
  bool low_precision_norm = false;
  // The fused attention kernel's generation (AttentionKernelGeneration); below sm80 SDPA runs its memory-efficient
  // kernel whatever this says.
  AttentionKernelGeneration attention_kernel = AttentionKernelGeneration::flash2;

  int world_size() const { return gpus_per_node * nodes; }
  // Member by member: validate predicts each distinct configuration once (validate_detail.hpp).
  auto operator<=>(const TrainingConfig&) const = default;
};

// Bytes on one GPU at the peak of a training step.
struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double workspace_bytes = 0;  // cuDNN/cuBLAS workspace, transient autocast copies, largest temporary
  double context_bytes = 0;    // CUDA context + NCCL communicator (data parallel) + allocator reserve/fragmentation
  // Of context_bytes, the allocator's cached free segments that it releases and retries with before it
  // reports out-of-memory (ModelConstants::allocator_unreleasable_fraction): nvidia-smi shows them at the
  // peak, but they need not fit.
  double releasable_bytes = 0;
  // Of context_bytes, the caching allocator's reserve beyond the live tensors (rounding, segments,
  // fragmentation): what torch.cuda.max_memory_reserved() counts above max_memory_allocated().
  double allocator_reserve_bytes = 0;
  // Of optimizer_bytes, the paged optimizers' states (bitsandbytes paged_*: CUDA unified memory) that the
  // driver may move to host memory under pressure: they need not fit. Those it had to move are not counted
  // on the GPU at all (optimizer_bytes is what stays).
  double paged_bytes = 0;
  double paged_out_bytes = 0;  // the paged states the driver keeps on the host at the peak (not in the total)
  // Pinned host memory that CPU offload (TrainingConfig::offload) needs per rank: not on the GPU, not in
  // any total below.
  double host_bytes = 0;
  double host_activation_bytes = 0;  // of host_bytes, the saved activations (copied out and back every step)
  // Saved activations and gradients do not peak together: backward frees each block's saved tensors as it makes
  // the block's gradients. So the step peaks either at backward's start (the activations, the workspace and the
  // gradients already alive then) or at the optimizer step (every gradient and the step's own temporaries).
  double backward_gradients_bytes = 0;  // of gradients_bytes, those alive when backward starts
  double step_temporaries_bytes = 0;    // the optimizer step's temporaries (foreach Adam: a state's size)
  double backward_peak_bytes() const { return activations_bytes + workspace_bytes + backward_gradients_bytes; }
  double step_peak_bytes() const { return gradients_bytes + step_temporaries_bytes; }
  bool peaks_at_optimizer_step() const { return step_peak_bytes() > backward_peak_bytes(); }
  // What torch.cuda.max_memory_allocated() reports: the live tensors at the peak. Paged optimizer states are
  // CUDA managed memory (cudaMallocManaged), outside PyTorch's allocator: nvidia-smi counts the resident ones.
  double allocated_bytes() const { return total_bytes() - context_bytes - paged_bytes; }
  // What torch.cuda.max_memory_reserved() reports: the allocator's segments (no CUDA context, no NCCL).
  double reserved_bytes() const { return allocated_bytes() + allocator_reserve_bytes; }
  // What nvidia-smi shows at the step's peak.
  double total_bytes() const {
    return weights_bytes + optimizer_bytes + context_bytes + std::max(backward_peak_bytes(), step_peak_bytes());
  }
  // What has to fit in the card's memory for the step to run.
  double required_bytes() const { return total_bytes() - releasable_bytes - paged_bytes; }
  bool fits(double capacity_bytes) const { return required_bytes() <= capacity_bytes; }
};

enum class Bound { compute, memory, overhead };
const char* to_string(Bound bound);

struct StepTime {
  double compute_s = 0;        // time of the layers whose roofline is set by FLOPs
  double memory_s = 0;         // time of the layers whose roofline is set by bytes moved
  double overhead_s = 0;       // kernel launch / dispatch overhead not hidden behind GPU work
  double optimizer_s = 0;      // optimizer step (memory-bound sweep over parameters and state)
  double communication_s = 0;  // gradient all-reduce / FSDP gathers not overlapped with backward
  double recompute_s = 0;      // extra forward under checkpointing (included in compute_s/memory_s)
  double offload_s = 0;        // CPU offload's PCIe copies that compute could not hide (in step_s)
  double step_s = 0;           // one optimizer step of batch_per_gpu samples
  Bound bound = Bound::compute;
};

struct Prediction {
  TrainingConfig config;
  const catalog::Gpu* gpu = nullptr;
  MemoryBreakdown memory;
  double capacity_bytes = 0;
  bool fits = false;
  int max_batch = 0;  // largest per-GPU batch that fits (0: not even batch 1)
  StepTime time;
  double throughput = 0;                      // samples/s per GPU, accumulation and optimizer step included
  std::optional<double> tokens_per_s;         // language models, per GPU
  int effective_batch = 0;                    // batch_per_gpu x accumulation_steps x world size
  std::optional<double> epoch_time_s;         // whole cluster over dataset_size samples (when known)
  std::optional<double> energy_wh_per_epoch;  // at TDP x GPUs (an upper bound: TDP is a specification)
  std::vector<std::string> advice;
  // The range that held 80% of held-out published runs of this cell (model family x precision x GPU
  // architecture; leave-one-GPU-out, data/validation/intervals.json), and why the request lies outside
  // the validated region when it does.
  double throughput_low = 0;
  double throughput_high = 0;
  std::string interval_basis;
  std::vector<std::string> validation_warnings;
};

// `calibration` null: the default constants. The same pointer is threaded through every function.
MemoryBreakdown estimate_memory(const workload::Workload& workload, const TrainingConfig& config,
                                const catalog::Gpu& gpu, const Calibration* calibration = nullptr);
StepTime estimate_step_time(const workload::Workload& workload, const TrainingConfig& config, const catalog::Gpu& gpu,
                            const Calibration* calibration = nullptr);
// Bytes per second a memory-bound kernel moves on the GPU: the DRAM's rate and the SMs' in series
// (constants.hpp: memory_efficiency, sm_memory_gbs).
double memory_bound_bandwidth(const ModelConstants& k, const catalog::Gpu& gpu);
// Largest per-GPU batch whose memory fits the GPU (0 when batch 1 does not fit).
int max_batch(const workload::Workload& workload, const TrainingConfig& config, const catalog::Gpu& gpu,
              const Calibration* calibration = nullptr);

// Everything at once, advice included.
Prediction predict(const workload::Workload& workload, const TrainingConfig& config, const catalog::Gpu& gpu,
                   const Calibration* calibration = nullptr);
// The same with max_batch(workload, config, gpu, calibration) already known (a sweep computes it once per GPU).
// `timed`, when given, is the workload at the tokens each sample really computes (packing, unpadded data:
// plan's --tokens-per-sample): step time and tokens/s come from it, memory from `workload` (the padded
// length, which the longest sample still needs).
Prediction predict(const workload::Workload& workload, const TrainingConfig& config, const catalog::Gpu& gpu,
                   const Calibration* calibration, int known_max_batch, const workload::Workload* timed = nullptr);

}  // namespace gpusage::estimate

namespace gpusage::estimate {

// The per-GPU micro-batch and accumulation steps that reach `target_batch` samples per optimizer step
// across the world: the largest micro-batch that fits, with the fewest accumulation steps, preferring
// an exact split of the target. Throws InputError when even batch 1 does not fit.
TrainingConfig plan_target_batch(const workload::Workload& workload, TrainingConfig config, const catalog::Gpu& gpu,
                                 int target_batch, const Calibration* calibration = nullptr);
// The same with the largest fitting micro-batch (max_batch) already known.
TrainingConfig plan_target_batch_within(const workload::Workload& workload, TrainingConfig config,
                                        const catalog::Gpu& gpu, int target_batch, int largest);

// Default samples per epoch for a workload: ImageNet-1k's 1,281,167 training images for vision models;
// none for language models (the user gives --dataset-size).
double default_dataset_size(const workload::Workload& workload);

}  // namespace gpusage::estimate
