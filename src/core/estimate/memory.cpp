// Memory model: bytes on one GPU at the peak of a training step. See docs/MODEL.md.
#include <algorithm>
#include <map>

#include "core/estimate/adapters.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

namespace {

// Adafactor's factored second moment of a matrix: one row and one column vector (Shazeer and Stern 2018,
// "Adafactor", section 3), against a full state for vectors (norm weights, biases). A layer's weight
// matrix is out x (params / out) with out its output's last dimension; an embedding's is vocabulary x width.
double adafactor_state_elements(const workload::Workload& w, const TrainingConfig& config, int rank) {
  double elements = 0;
  if (rank > 0) {
    for (const auto& layer : w.layers) {
      for (const auto& m : layer.lora_targets) {
        // A: r x in, B: out x r, for each copy (an MoE layer's experts)
        if (adapts(config, m))
          elements += static_cast<double>(m.copies) * (2.0 * rank + static_cast<double>(m.in + m.out));
      }
    }
    return elements;
  }
  for (const auto& layer : w.layers) {
    if (layer.params == 0) continue;
    const double width = layer.output_shape.empty() ? 0 : static_cast<double>(layer.output_shape.back());
    const bool matrix = (layer.op == workload::OpClass::matmul || layer.op == workload::OpClass::embedding) &&
                        width > 0 && layer.params > 2 * width;
    elements += matrix ? static_cast<double>(layer.params) / width + width : static_cast<double>(layer.params);
  }
  return elements;
}

// What the loss keeps for backward per logit element (the loss layer's input), by implementation (LossImpl):
// plain, the fp32 log-softmax; plain16, the log-softmax in the logits' own 16-bit width; chunked, the 16-bit logits
// chunks plus one of the chunks' fp32 log-softmax; fused, nothing whole (one chunk about the size of the hidden states
// at a time, left out).
double loss_saved_bytes_per_logit(const TrainingConfig& config) {
  switch (config.loss) {
    case LossImpl::plain: return 4;  // layers.cpp's cross_entropy, which saved_bytes_per_sample uses
    case LossImpl::plain16: return activation_element_bytes(config.precision);
    case LossImpl::chunked: return activation_element_bytes(config.precision) + 4.0 / kLossChunks;
    case LossImpl::fused: return 0;
  }
  return 4;
}

// Bytes one layer keeps for backward, per sample.
double saved_bytes_per_sample(const workload::Layer& layer, const TrainingConfig& config) {
  // The plain loss is the graph's own account (layers.cpp, cross_entropy: the fp32 log-softmax).
  if (layer.op == workload::OpClass::loss && config.loss != LossImpl::plain) {
    return layer.input_elements * loss_saved_bytes_per_logit(config);
  }
  const bool sixteen_bit_norm = config.low_precision_norm && layer.op == workload::OpClass::normalization;
  const double autocast = runs_under_autocast(config) && !sixteen_bit_norm ? 1.0 : 0.0;
  return layer.saved_elements * activation_element_bytes(config.precision) + layer.saved_fixed_bytes +
         autocast * layer.autocast_extra_saved_bytes + lora_dropout_saved_bytes_per_sample(layer, config);
}

// The gradients in flight during backward beyond the saved activations, per sample: when backward reaches
// layer i it holds the gradients of i's output and input (about two outputs' worth), but autograd has already
// freed the saved tensors of every layer after i. So the peak is max over i of (saved up to i + 2 outputs of
// i), which is the saved total plus max over i of (2 outputs of i - saved after i) when positive. A network
// whose early layers are the widest (a convnet's stem) reaches backward's widest gradients with little saved
// left; a transformer's equal blocks put the peak at the last block.
double backward_in_flight_bytes_per_sample(const workload::Workload& w, const TrainingConfig& config) {
  const double element = activation_element_bytes(config.precision);
  double saved_after = 0, in_flight = 0;
  bool feeds_loss = false;  // the layer visited next (the one before in the graph) produced the logits
  for (auto layer = w.layers.rbegin(); layer != w.layers.rend(); ++layer) {
    const double share = feeds_loss ? logits_in_flight_share(config) : 1.0;
    in_flight = std::max(in_flight, 2 * layer->output_elements() * element * share - saved_after);
    saved_after += saved_bytes_per_sample(*layer, config);
    feeds_loss = layer->op == workload::OpClass::loss;
  }
  return in_flight;
}

// Activations kept for backward, per sample, by where they are kept. With checkpointing, each checkpointed
// block keeps only its input (selective: also its GEMM outputs) and one block at a time is recomputed, so
// its recomputed working set is added once (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost").
struct SavedActivations {
  double outside_blocks = 0;        // layers in no block: stem, embedding, head, loss
  std::map<int, double> per_block;  // what each block keeps through the step
  double recompute_peak = 0;        // the largest checkpointed block's recomputed set

  double blocks() const {
    double sum = 0;
    for (const auto& [segment, bytes] : per_block) sum += bytes;
    return sum;
  }
  double largest_block() const {
    double largest = 0;
    for (const auto& [segment, bytes] : per_block) largest = std::max(largest, bytes);
    return largest;
  }
  double total() const { return outside_blocks + blocks() + recompute_peak; }
  // With activation offloading the blocks' tensors go to the host as forward makes them and come back as
  // backward needs them: two blocks' worth is on the GPU at a time (the one in transfer and the one in use,
  // torchtune's double-buffered streams). What lies outside the blocks stays.
  double on_host_when_offloaded() const { return std::max(0.0, blocks() - 2 * largest_block()); }
};

SavedActivations saved_activations_per_sample(const workload::Workload& w, const TrainingConfig& config) {
  const double element = activation_element_bytes(config.precision);
  SavedActivations saved;
  std::map<int, double> recomputed;
  for (const auto& layer : w.layers) {
    const double bytes = saved_bytes_per_sample(layer, config);
    if (layer.segment < 0) {
      saved.outside_blocks += bytes;
    } else if (!checkpointed(config, layer.segment)) {
      saved.per_block[layer.segment] += bytes;
    } else {
      if (!saved.per_block.count(layer.segment)) saved.per_block[layer.segment] = layer.input_elements * element;
      (config.selective_checkpointing && kept_under_selective(layer) ? saved.per_block[layer.segment]
                                                                     : recomputed[layer.segment]) += bytes;
    }
  }
  for (const auto& [segment, bytes] : recomputed) saved.recompute_peak = std::max(saved.recompute_peak, bytes);
  return saved;
}

// The bytes of the step's largest output, per sample: the logits, `logits_element_bytes` wide, count in the
// share the loss implementation holds whole (logits_in_flight_share); every other output is activation-wide.
double largest_output_bytes_per_sample(const workload::Workload& w, const TrainingConfig& config,
                                       double logits_element_bytes) {
  const double element = activation_element_bytes(config.precision);
  double largest = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const bool logits = i + 1 < w.layers.size() && w.layers[i + 1].op == workload::OpClass::loss;
    const double bytes_per_element = logits ? logits_element_bytes * logits_in_flight_share(config) : element;
    largest = std::max(largest, w.layers[i].output_elements() * bytes_per_element);
  }
  return largest;
}

// The step's largest output and its gradient, which the caching allocator keeps as free segments of their
// own once they die (docs/MODEL.md, "The allocator's cached pair"): the logits in fp32 under the plain loss
// (16-bit under plain16, one chunk's under the chunked loss, none whole under the fused one), else the widest
// activation.
double largest_transient_pair_bytes(const workload::Workload& w, const TrainingConfig& config) {
  const double logits_element = config.loss == LossImpl::plain16 ? activation_element_bytes(config.precision) : 4.0;
  return 2 * config.batch_per_gpu * largest_output_bytes_per_sample(w, config, logits_element);
}

}  // namespace

double optimizer_state_bytes_per_param(const TrainingConfig& config) {
  const double element = master_element_bytes(config);
  switch (config.optimizer) {
    case Optimizer::sgd: return 0;
    case Optimizer::momentum:
    case Optimizer::lion: return element;
    case Optimizer::adam:
    case Optimizer::adamw:
    case Optimizer::paged_adamw: return 2 * element;
    case Optimizer::adamw8bit:
    case Optimizer::paged_adamw8bit: return 2 * (1 + 4.0 / 256);
    case Optimizer::adafactor: return 0;
  }
  return 2 * element;
}

AdapterShape adapter_shape(const workload::Workload& w, const TrainingConfig& config) {
  AdapterShape shape;
  for (const auto& layer : w.layers) {
    for (const auto& m : layer.lora_targets) shape.linear_params += static_cast<double>(m.copies * m.in * m.out);
  }
  const int rank = lora_rank(config);
  if (rank > 0) {
    for (const auto& layer : w.layers) {
      for (const auto& m : layer.lora_targets) {
        if (!adapts(config, m)) continue;
        shape.adapter_params += static_cast<double>(m.copies * rank) * static_cast<double>(m.in + m.out);
        shape.adapted_matrices += static_cast<double>(m.copies);
      }
    }
  }
  return shape;
}

namespace {

// What every step of estimate_memory asks of the config: the trainable parameters, their element, the ranks
// the state is sharded over.
struct StateShape {
  const ModelConstants* k = nullptr;
  double params = 0;
  bool low_precision = false;  // 16-bit activations
  AdapterShape adapters;
  bool adapted = false;  // LoRA or QLoRA
  double trainable = 0;
  double master = 0;     // bytes of a trainable weight and its gradient
  double n = 1;          // ranks the optimizer state is sharded over
  bool sharded = false;  // the weights too (FSDP, ZeRO-3)
  // The largest unit FSDP gathers (units are the workload's blocks), and how it is gathered: as it is stored,
  // 16-bit in mixed precision, NF4 under QLoRA (FSDP-QLoRA shards the quantized storage and gathers it before
  // dequantizing; a block's parameters are nearly all linear).
  double largest_unit = 0;
  double gathered_element = 0;
  // FSDP's root unit: the parameters outside every block (embeddings, the final norm, lm_head).
  double root_unit = 0;
  // DeepSpeed's ZeRO stages 1-2 and ZeRO-Offload: the model holds 16-bit weights and gradients, and the fp32
  // master copy belongs to the optimizer state (the ZeRO paper's K = 12 bytes per parameter for mixed-precision
  // Adam: master weights, momentum, variance), sharded or offloaded with it.
  bool sixteen_bit_model = false;
};

StateShape state_shape(const workload::Workload& w, const TrainingConfig& config, const ModelConstants& k) {
  StateShape s;
  s.k = &k;
  s.params = static_cast<double>(w.params());
  s.low_precision = activation_element_bytes(config.precision) < 4;
  s.adapters = adapter_shape(w, config);
  s.adapted = lora_rank(config) > 0;
  s.trainable = s.adapted ? s.adapters.adapter_params : s.params;
  s.master = master_element_bytes(config);
  std::map<int, double> unit_params;
  for (const auto& layer : w.layers) unit_params[layer.segment] += static_cast<double>(layer.params);
  for (const auto& [segment, p] : unit_params) {
    if (segment >= 0) s.largest_unit = std::max(s.largest_unit, p);
  }
  s.root_unit = unit_params.contains(-1) ? unit_params.at(-1) : 0.0;
  s.gathered_element = config.qlora ? k.qlora_bits_per_param / 8 : s.low_precision ? 2 : 4;
  s.n = shard_ranks(config);
  s.sharded = shards_weights(config) && s.n > 1;
  const bool masters_with_optimizer =
      !shards_weights(config) &&
      (config.parallel == Parallel::zero1 || config.parallel == Parallel::zero2 || config.offload.steps_on_host());
  s.sixteen_bit_model = masters_with_optimizer && s.low_precision && config.master_weights == MasterWeights::fp32;
  return s;
}

// Trainable weights, their gradients and 32-bit optimizer states: fp32 (master weights, also under
// autocast) or bf16 (pure-bf16 training). The frozen base of LoRA is stored in the training dtype
// (16-bit under mixed precision, as PEFT loads it); QLoRA stores every adaptable linear map in NF4 (the
// lm_head stays 16-bit), and PEFT's prepare_model_for_kbit_training casts the parameters it did not
// quantize (embeddings, norms, lm_head) to fp32: with fp32 master weights, the Hugging Face path,
// those are 4 bytes; pure-bf16 recipes (torchtune, LitGPT) and a base left unprepared (kbit_upcast false) keep
// them 16-bit.
void add_model_state(MemoryBreakdown& m, const StateShape& s, const workload::Workload& w,
                     const TrainingConfig& config) {
  const double master = s.master;
  const double params = s.params;
  if (!s.adapted) {
    m.weights_bytes = master * params;
  } else {
    const double base_element = s.low_precision ? 2 : 4;
    double base = params * base_element;
    if (config.qlora) {
      const double kept_element = kbit_upcast_applies(config) ? 4 : 2;
      base =
          s.adapters.linear_params * s.k->qlora_bits_per_param / 8 + (params - s.adapters.linear_params) * kept_element;
    }
    m.weights_bytes = base + master * s.adapters.adapter_params;
  }
  // A traced model's frozen parameters (a frozen backbone) are stored as the trained ones are, and have no
  // gradient or optimizer state.
  m.weights_bytes += master * static_cast<double>(w.frozen_params());
  m.gradients_bytes = master * s.trainable;
  if (config.optimizer_in_backward && !s.adapted) {
    double largest = 0;  // one parameter tensor's gradient at a time: a layer's weight at most
    for (const auto& layer : w.layers) largest = std::max(largest, static_cast<double>(layer.params));
    m.gradients_bytes = master * largest;
  }
  m.optimizer_bytes = optimizer_state_bytes_per_param(config) * s.trainable;
  if (config.optimizer == Optimizer::adafactor) {
    m.optimizer_bytes = master * adafactor_state_elements(w, config, lora_rank(config));
  }
}

// FSDP's parameter offload (CPUOffload(offload_params=True)): the weight shards live on the host. The GPU holds
// the units it has gathered (the one in use and the one prefetched) and the root unit, which FSDP does not reshard
// after forward, so it stays gathered through backward; of the gradients, the unit's full 16-bit gradient that backward
// writes before it is reduce-scattered and copied out (not a DDP bucket: the bucket rule of ZeRO-Offload does not
// apply), and the root unit's, whose reduce-scatter waits for its last gradient (the embedding's, at the end of
// backward). For a 405B Llama one block is 3.2B parameters: 6.4 GB of gradient, where the bucket rule kept 50 MiB.
void offload_parameters(MemoryBreakdown& m, const StateShape& s) {
  // weights_bytes is the rank's shard plus the two gathered units (shard_and_offload): the shard goes to the host.
  m.host_bytes += m.weights_bytes - 2 * s.largest_unit * s.gathered_element;
  m.weights_bytes = (2 * s.largest_unit + s.root_unit) * s.gathered_element;
  // LoRA and QLoRA train only the adapters, whose gradients are far smaller: as they are, at most a unit's.
  m.gradients_bytes = s.adapted ? std::min(m.gradients_bytes, s.largest_unit * s.gathered_element)
                                : (s.largest_unit + s.root_unit) * s.gathered_element;
}

// ZeRO's 16-bit model, FSDP's and ZeRO's shards, and what CPU offload and paged optimizers keep off the GPU.
void shard_and_offload(MemoryBreakdown& m, const StateShape& s, const TrainingConfig& config) {
  const double n = s.n;
  const double trainable = s.trainable;
  if (s.sixteen_bit_model) {
    m.weights_bytes -= 2 * trainable;
    m.gradients_bytes = 2 * trainable;
    m.optimizer_bytes += 4 * trainable;
  }
  if (s.sharded) {
    // FULL_SHARD (ZeRO-3): every rank holds 1/N of weights, gradients and optimizer state, and gathers
    // one unit's full parameters at a time (two with forward prefetch).
    m.weights_bytes = m.weights_bytes / n + 2 * s.largest_unit * s.gathered_element;
  }
  m.optimizer_bytes /= n;
  if (shards_gradients(config)) m.gradients_bytes /= n;

  // CPU offload. The host keeps what the step needs there: the optimizer state (with the fp32 masters) and
  // fp32 gradients, which the GPU streams out as backward makes them; with parameter offload also the weight
  // shards, of which the GPU holds only the units it has gathered and one unit's gradient before it goes out.
  if (config.offload.steps_on_host()) {
    m.host_bytes += m.optimizer_bytes + s.master * trainable / n;
    m.optimizer_bytes = 0;
    // ZeRO-Offload copies each reduced gradient bucket out as backward fills it (Ren et al. 2021, section
    // 4.1): two buckets on the GPU at a time, the one filling and the one in transfer.
    m.gradients_bytes = std::min(m.gradients_bytes, 2 * s.k->ddp_bucket_bytes);
  }
  if (config.offload.params && shards_weights(config)) offload_parameters(m, s);

  if (config.optimizer == Optimizer::paged_adamw || config.optimizer == Optimizer::paged_adamw8bit) {
    m.paged_bytes = m.optimizer_bytes;
  }
}

// The gradients backward starts with (docs/MODEL.md, "Gradients and activations do not peak together"): on one
// GPU with one micro-batch, the first layer it reaches makes the first (the largest layer's gradient stands for
// it: an LLM's lm_head, a convnet's classifier); the rest come as the saved activations go. All of them are
// there from the start when DDP holds them in its buckets, when accumulation keeps the last micro-batch's, when
// zero_grad() zeroes them in place (PyTorch before 2.0) rather than freeing them, and for adapters (too few to
// matter). torch.optim's foreach Adam and AdamW (the default on CUDA) write the square root of every second moment
// to a new tensor list before the update: one more state's worth while the step runs (PyTorch's torch.optim notes:
// the foreach implementations peak higher by about a list of the parameters' size). Host steps (offload) and
// the step fused into backward take none; bitsandbytes' 8-bit and paged optimizers step in fused kernels.
void add_step_timing(MemoryBreakdown& m, const StateShape& s, const workload::Workload& w,
                     const TrainingConfig& config) {
  double largest_layer = 0;
  for (const auto& layer : w.layers) largest_layer = std::max(largest_layer, static_cast<double>(layer.params));
  const bool gradients_from_start =
      config.world_size() > 1 || config.accumulation_steps > 1 || s.adapted || !config.gradients_freed_between_steps;
  m.backward_gradients_bytes =
      gradients_from_start ? m.gradients_bytes : std::min(m.gradients_bytes, s.master * largest_layer);
  const bool foreach_adam = config.optimizer == Optimizer::adam || config.optimizer == Optimizer::adamw;
  if (foreach_adam && config.optimizer_impl == OptimizerImpl::foreach && !config.offload.steps_on_host() &&
      !config.optimizer_in_backward) {
    m.step_temporaries_bytes = s.master * s.trainable / s.n;
  }
}

void add_activations(MemoryBreakdown& m, const workload::Workload& w, const TrainingConfig& config) {
  const SavedActivations saved = saved_activations_per_sample(w, config);
  m.activations_bytes = config.batch_per_gpu * saved.total();
  if (config.offload.activations) {
    m.host_activation_bytes = config.batch_per_gpu * saved.on_host_when_offloaded();
    m.activations_bytes -= m.host_activation_bytes;
    m.host_bytes += m.host_activation_bytes;
  }
}

// Transients: library workspaces; autocast's 16-bit copies of the fp32 weights (cached for the
// forward pass and kept by autograd for backward); the gradients in flight during backward beyond the
// saved activations still alive (above). With checkpointing a segment is recomputed and its gradients
// computed while the other segments' inputs stay, so the largest gradient pair counts in full.
// Under FSDP there is no whole-model 16-bit copy: a unit's parameters are gathered in the compute dtype
// (FSDP's mixed-precision param_dtype) and freed after use, which the gathered units above already count;
// autocast caches casts of leaf tensors only, and FSDP's parameters are views of its flat shards.
// The logits' pair counts only in the share the loss implementation holds whole.
void add_workspace(MemoryBreakdown& m, const StateShape& s, const workload::Workload& w, const TrainingConfig& config) {
  double in_flight = 0;
  if (config.checkpointing) {
    in_flight = 2 * largest_output_bytes_per_sample(w, config, activation_element_bytes(config.precision));
  } else {
    in_flight = backward_in_flight_bytes_per_sample(w, config);
  }
  m.workspace_bytes = s.k->library_workspace_bytes + config.batch_per_gpu * in_flight;
  if (s.low_precision && !s.adapted && !s.sharded && !s.sixteen_bit_model &&
      config.master_weights == MasterWeights::fp32) {
    m.workspace_bytes += 2 * s.params;
  }
}

// The caching allocator's reserve: the overhead on the live set, plus the largest transient pair's segments,
// cached and free at the peak (so nvidia-smi and max_memory_reserved count them, and an allocation that would
// not fit releases them first: they are releasable and change no verdict). The CUDA context, and the NCCL
// communicator data parallel (DDP or FSDP) opens on every rank, outside PyTorch's allocator.
void add_allocator_and_context(MemoryBreakdown& m, const ModelConstants& k, const workload::Workload& w,
                               const TrainingConfig& config) {
  const double allocated = m.activations_bytes + m.workspace_bytes;
  const double cached_transient = largest_transient_pair_bytes(w, config);
  m.context_bytes = (config.eager_module_loading ? k.cuda_context_eager_bytes : k.cuda_context_bytes) +
                    k.allocator_overhead_fraction * allocated + cached_transient;
  m.allocator_reserve_bytes = k.allocator_overhead_fraction * allocated + cached_transient;
  m.releasable_bytes =
      std::max(0.0, k.allocator_overhead_fraction - k.allocator_unreleasable_fraction) * allocated + cached_transient;
  if (config.world_size() > 1) {
    m.context_bytes += config.world_size() == 2 ? k.nccl_communicator_two_gpus_bytes : k.nccl_communicator_bytes;
  }
}

// nvidia-smi cannot show more than the card has: at the edge the allocator gives back cached segments
// rather than fail, so a step that fits peaks at the capacity. (What has to fit does not change.)
// Paged optimizer states that do not fit beside the rest live on the host: the cache gives way first.
void give_way_at_capacity(MemoryBreakdown& m, const catalog::Gpu& gpu) {
  const double over = m.total_bytes() - gpu.memory_bytes();
  if (over > 0 && over <= m.releasable_bytes + m.paged_bytes) {
    const double cache = std::min(over, m.releasable_bytes);
    m.context_bytes -= cache;
    m.releasable_bytes -= cache;
    m.allocator_reserve_bytes -= cache;
    m.optimizer_bytes -= over - cache;
    m.paged_bytes -= over - cache;
    m.paged_out_bytes = over - cache;
  }
}

}  // namespace

MemoryBreakdown estimate_memory(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
                                const Calibration* calibration) {
  const ModelConstants& k = calibration ? calibration->constants : default_constants();
  const StateShape shape = state_shape(w, config, k);
  MemoryBreakdown m;
  add_model_state(m, shape, w, config);
  shard_and_offload(m, shape, config);
  add_step_timing(m, shape, w, config);
  add_activations(m, w, config);
  add_workspace(m, shape, w, config);
  add_allocator_and_context(m, k, w, config);
  give_way_at_capacity(m, gpu);
  return m;
}

int max_batch(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
              const Calibration* calibration) {
  // Memory grows monotonically with the batch: double until it no longer fits, then bisect.
  auto fits = [&](int batch) {
    TrainingConfig c = config;
    c.batch_per_gpu = batch;
    return estimate_memory(w, c, gpu, calibration).fits(gpu.memory_bytes());
  };
  if (!fits(1)) return 0;
  int good = 1, bad = 2;
  constexpr int kLimit = 1 << 20;
  while (bad < kLimit && fits(bad)) {
    good = bad;
    bad *= 2;
  }
  if (bad >= kLimit && fits(kLimit)) return kLimit;
  while (bad - good > 1) {
    int mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

}  // namespace gpusage::estimate
