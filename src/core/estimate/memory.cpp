// Memory model: bytes on one GPU at the peak of a training step. See docs/MODEL.md.
#include <algorithm>
#include <map>

#include "core/estimate/adapters.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

namespace {

// Optimizer state per trainable parameter, fp32: momentum keeps one buffer, Adam/AdamW two
// (ZeRO, Rajbhandari et al. SC'20, section 3.1: 4+4+K bytes with K = 4 (momentum) or 8 (Adam)).
double optimizer_bytes_per_param(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd: return 0;
    case Optimizer::momentum: return 4;
    case Optimizer::adam:
    case Optimizer::adamw: return 8;
  }
  return 8;
}

// Bytes one layer keeps for backward, per sample.
double saved_bytes_per_sample(const workload::Layer& layer, const TrainingConfig& config) {
  const double autocast = runs_under_autocast(config) ? 1.0 : 0.0;
  return layer.saved_elements * activation_element_bytes(config.precision) + layer.saved_fixed_bytes +
         autocast * layer.autocast_extra_saved_bytes;
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
  for (auto layer = w.layers.rbegin(); layer != w.layers.rend(); ++layer) {
    in_flight = std::max(in_flight, 2 * layer->output_elements() * element - saved_after);
    saved_after += saved_bytes_per_sample(*layer, config);
  }
  return in_flight;
}

// Activations kept for backward, per sample. With checkpointing, each segment keeps only its input
// and one segment at a time is recomputed, so its full working set is added once (Chen et al. 2016,
// "Training Deep Nets with Sublinear Memory Cost").
double activation_bytes_per_sample(const workload::Workload& w, const TrainingConfig& config) {
  auto saved = [&config](const workload::Layer& layer) { return saved_bytes_per_sample(layer, config); };
  const double element = activation_element_bytes(config.precision);
  if (!config.checkpointing) {
    double total = 0;
    for (const auto& layer : w.layers) total += saved(layer);
    return total;
  }
  double outside = 0;
  std::map<int, double> segment_saved;
  std::map<int, double> segment_input;
  for (const auto& layer : w.layers) {
    if (layer.segment < 0) {
      outside += saved(layer);
      continue;
    }
    if (!segment_input.count(layer.segment)) segment_input[layer.segment] = layer.input_elements * element;
    segment_saved[layer.segment] += saved(layer);
  }
  double inputs = 0, largest = 0;
  for (const auto& [segment, bytes] : segment_input) inputs += bytes;
  for (const auto& [segment, bytes] : segment_saved) largest = std::max(largest, bytes);
  return outside + inputs + largest;
}

}  // namespace

AdapterShape adapter_shape(const workload::Workload& w, const TrainingConfig& config) {
  AdapterShape shape;
  for (const auto& layer : w.layers) {
    for (const auto& m : layer.lora_targets) shape.linear_params += static_cast<double>(m.in * m.out);
  }
  const int rank = lora_rank(config);
  if (rank > 0) {
    for (const auto& layer : w.layers) {
      for (const auto& m : layer.lora_targets) shape.adapter_params += static_cast<double>(rank) * (m.in + m.out);
    }
  }
  return shape;
}

MemoryBreakdown estimate_memory(const workload::Workload& w, const TrainingConfig& config, const catalog::Gpu& gpu,
                                const Calibration* calibration) {
  const ModelConstants& k = calibration ? calibration->constants : default_constants();
  const double params = static_cast<double>(w.params());
  const bool low_precision = activation_element_bytes(config.precision) < 4;
  const AdapterShape adapters = adapter_shape(w, config);
  const bool adapted = lora_rank(config) > 0;
  const double trainable = adapted ? adapters.adapter_params : params;

  MemoryBreakdown m;
  if (!adapted) {
    m.weights_bytes = 4 * params;  // fp32 master weights, also under autocast
  } else {
    // A frozen base is stored in the training dtype (16-bit under mixed precision, as PEFT loads it);
    // QLoRA stores the linear layers in NF4 and keeps the rest (embeddings, norms) in 16-bit.
    const double base_element = low_precision ? 2 : 4;
    double base = params * base_element;
    if (config.qlora) {
      base = adapters.linear_params * k.qlora_bits_per_param / 8 + (params - adapters.linear_params) * 2;
    }
    m.weights_bytes = base + 4 * adapters.adapter_params;
  }
  m.gradients_bytes = 4 * trainable;
  m.optimizer_bytes = optimizer_bytes_per_param(config.optimizer) * trainable;

  const bool sharded = config.parallel == Parallel::fsdp && config.world_size() > 1;
  if (sharded) {
    // FULL_SHARD (ZeRO-3): every rank holds 1/N of weights, gradients and optimizer state, and gathers
    // one unit's full parameters at a time (two with forward prefetch). Units are the workload's segments.
    const double n = config.world_size();
    std::map<int, double> unit_params;
    for (const auto& layer : w.layers) unit_params[layer.segment] += static_cast<double>(layer.params);
    double largest_unit = 0;
    for (const auto& [segment, p] : unit_params) {
      if (segment >= 0) largest_unit = std::max(largest_unit, p);
    }
    const double gathered_element = low_precision ? 2 : 4;
    m.weights_bytes = m.weights_bytes / n + 2 * largest_unit * gathered_element;
    m.gradients_bytes /= n;
    m.optimizer_bytes /= n;
  }

  m.activations_bytes = config.batch_per_gpu * activation_bytes_per_sample(w, config);

  // Transients: library workspaces; autocast's 16-bit copies of the fp32 weights (cached for the
  // forward pass and kept by autograd for backward); the gradients in flight during backward beyond the
  // saved activations still alive (above). With checkpointing a segment is recomputed and its gradients
  // computed while the other segments' inputs stay, so the largest gradient pair counts in full.
  // Under FSDP there is no whole-model 16-bit copy: a unit's parameters are gathered in the compute dtype
  // (FSDP's mixed-precision param_dtype) and freed after use, which the gathered units above already count;
  // autocast caches casts of leaf tensors only, and FSDP's parameters are views of its flat shards.
  double in_flight = 0;
  if (config.checkpointing) {
    double largest_output = 0;
    for (const auto& layer : w.layers) largest_output = std::max(largest_output, layer.output_elements());
    in_flight = 2 * largest_output * activation_element_bytes(config.precision);
  } else {
    in_flight = backward_in_flight_bytes_per_sample(w, config);
  }
  m.workspace_bytes = k.library_workspace_bytes + config.batch_per_gpu * in_flight;
  if (low_precision && !adapted && !sharded) m.workspace_bytes += 2 * params;

  const double allocated = m.activations_bytes + m.workspace_bytes;
  m.context_bytes = (config.eager_module_loading ? k.cuda_context_eager_bytes : k.cuda_context_bytes) +
                   k.allocator_overhead_fraction * allocated;
  m.releasable_bytes =
      std::max(0.0, k.allocator_overhead_fraction - k.allocator_unreleasable_fraction) * allocated;
  // Data parallel (DDP or FSDP) opens an NCCL communicator on every rank, outside PyTorch's allocator.
  if (config.world_size() > 1) {
    m.context_bytes += config.world_size() == 2 ? k.nccl_communicator_two_gpus_bytes : k.nccl_communicator_bytes;
  }
  // nvidia-smi cannot show more than the card has: at the edge the allocator gives back cached segments
  // rather than fail, so a step that fits peaks at the capacity. (What has to fit does not change.)
  const double over = m.total_bytes() - gpu.memory_bytes();
  if (over > 0 && over <= m.releasable_bytes) {
    m.context_bytes -= over;
    m.releasable_bytes -= over;
  }
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
