// Internal helpers of the estimate module shared by the memory and time models.
#pragma once

#include <algorithm>

#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

// Bytes per activation element: fp32 and tf32 store fp32; autocast (fp16/bf16) stores 16-bit
// activations. fp8 training (Transformer Engine) keeps activations outside GEMMs in bf16, so 2 as well.
inline double activation_element_bytes(catalog::Precision precision) {
  using P = catalog::Precision;
  return precision == P::fp32 || precision == P::tf32 ? 4.0 : 2.0;
}

// 16-bit autocast rather than a pure 16-bit model: the ops on autocast's fp32 list (softmax, norms) keep
// and write 4-byte tensors, which both models add on top of the 16-bit ones.
// Pure-bf16 training (MasterWeights::bf16) is a pure 16-bit model too.
inline bool runs_under_autocast(const TrainingConfig& config) {
  return activation_element_bytes(config.precision) < 4 && !config.pure_16bit &&
         config.master_weights == MasterWeights::fp32;
}

// The LoRA rank in force: --lora R, or QLoRA's default rank 16 (Dettmers et al. 2023 use r=64 for
// their largest runs; 16 is PEFT's common default for 7B models).
inline int lora_rank(const TrainingConfig& config) {
  if (config.lora_rank) return *config.lora_rank;
  return config.qlora ? 16 : 0;
}

// Bytes per trainable weight, per gradient and per element of a 32-bit optimizer state: 4 with fp32
// master weights, 2 in pure-bf16 training (MasterWeights::bf16).
inline double master_element_bytes(const TrainingConfig& config) {
  return config.master_weights == MasterWeights::bf16 ? 2.0 : 4.0;
}

// The ranks one copy of the sharded state is spread over: none under DDP; the node's GPUs under HSDP
// (replicated across nodes); every rank otherwise.
inline int shard_ranks(const TrainingConfig& config) {
  if (config.parallel == Parallel::ddp) return 1;
  return config.parallel == Parallel::hsdp ? config.gpus_per_node : config.world_size();
}
inline bool shards_gradients(const TrainingConfig& config) {
  return config.parallel == Parallel::zero2 || config.parallel == Parallel::fsdp || config.parallel == Parallel::hsdp;
}
inline bool shards_weights(Parallel parallel) { return parallel == Parallel::fsdp || parallel == Parallel::hsdp; }
inline bool shards_weights(const TrainingConfig& config) { return shards_weights(config.parallel); }

// torchtune's CEWithChunkedOutputLoss splits the output projection and the loss into 8 chunks
// (num_output_chunks = 8, torchtune/modules/loss/ce_chunked_output_loss.py).
inline constexpr double kLossChunks = 8;

// The share of the logits' gradient pair in flight at once in backward: whole for the plain loss, one
// chunk for the chunked one, none whole for the fused one (made chunk by chunk inside the loss).
inline double logits_in_flight_share(const TrainingConfig& config) {
  switch (config.loss) {
    case LossImpl::plain:
    case LossImpl::plain16: return 1.0;
    case LossImpl::chunked: return 1.0 / kLossChunks;
    case LossImpl::fused: return 0.0;
  }
  return 1.0;
}

// Whether block `segment` is recomputed in backward: every block under full checkpointing, every Nth
// (counting from the first) with checkpoint_every N.
inline bool checkpointed(const TrainingConfig& config, int segment) {
  return config.checkpointing && segment >= 0 && segment % std::max(1, config.checkpoint_every) == 0;
}

// What selective checkpointing keeps of a checkpointed block: the outputs of GEMMs and attention (counted
// on the layers that produce them) are saved, so those layers are not recomputed; the memory-bound ops'
// tensors are recomputed.
inline bool kept_under_selective(const workload::Layer& layer) {
  using workload::OpClass;
  return layer.op == OpClass::matmul || layer.op == OpClass::attention || layer.op == OpClass::conv;
}

// Whether `layer` runs its forward again in backward.
inline bool recomputed(const TrainingConfig& config, const workload::Layer& layer) {
  return checkpointed(config, layer.segment) && !(config.selective_checkpointing && kept_under_selective(layer));
}

// Whether LoRA adapts matrix `m` under config.lora_targets.
inline bool adapts(const TrainingConfig& config, const workload::Matrix& m) {
  return config.lora_targets == LoraTargets::all || (config.lora_targets == LoraTargets::attention) == m.attention;
}

// What LoRA dropout keeps for backward in `layer`, per sample: an adapted matrix's A reads dropout(x), a new
// tensor it saves for its weight gradient, and the dropout saves its mask (torch.bool, 1 byte per element).
// Without dropout A reads x itself, which the base linear map's account already holds. PEFT and LitGPT give
// every adapted module its own dropout (LitGPT's fused qkv has one for the three).
inline double lora_dropout_saved_bytes_per_sample(const workload::Layer& layer, const TrainingConfig& config) {
  if (config.lora_dropout <= 0 || lora_rank(config) <= 0) return 0;
  double bytes = 0;
  for (const workload::Matrix& m : layer.lora_targets) {
    if (adapts(config, m)) bytes += layer.input_elements * (activation_element_bytes(config.precision) + 1);
  }
  return bytes;
}

// Bytes of optimizer state per trainable parameter that holds a full-size state (the factored Adafactor's
// rows and columns are counted by the caller). bitsandbytes' 8-bit states: 1 byte each plus one fp32
// absmax per block of 256 values (bitsandbytes optim: blockwise quantization, block size 256).
double optimizer_state_bytes_per_param(const TrainingConfig& config);

struct AdapterShape {
  double linear_params = 0;     // parameters of the adaptable matrices, all of them (what QLoRA quantizes)
  double adapter_params = 0;    // LoRA parameters: r * (in + out) per adapted matrix (--lora-targets)
  double adapted_matrices = 0;  // how many matrices carry adapters
};
AdapterShape adapter_shape(const workload::Workload& w, const TrainingConfig& config);

// The memory-bound work LoRA adds to one layer per micro-batch, in bytes and kernels. Each adapted matrix
// W (in x out) runs x -> A (in x r) -> B (r x out) -> scale -> add into W's output, as PEFT's LoRA layer
// does (result + lora_B(lora_A(dropout(x))) * scaling): A reads x, and B's output is written, scaled
// (read and written) and added to the base output (two reads, one write): in + 6 out elements per row, the
// thin GEMMs' FLOPs (2 r (in + out) per row) being negligible beside them. Backward moves about twice
// that in six kernels (the scale's and the add's gradients, input and weight gradients of A and B).
// QLoRA dequantizes every NF4 matrix, adapted or not, before each use, in forward and again for the
// input-gradient GEMM in backward (bitsandbytes MatMul4Bit): read 4.127 bits, write 16 bits per weight,
// in two kernels (the double-quantized constants, then the weights).
// Whether QLoRA's k-bit preparation has upcast the model's unquantized parameters (TrainingConfig::kbit_upcast):
// QLoRA with fp32 master weights that asks for it.
bool kbit_upcast_applies(const TrainingConfig& config);

struct AdapterCost {
  double forward_bytes = 0, backward_bytes = 0;
  double forward_kernels = 0, backward_kernels = 0;
};

AdapterCost adapter_cost(const workload::Layer& layer, const TrainingConfig& config, const ModelConstants& k,
                         double batch, double element);

}  // namespace gpusage::estimate
