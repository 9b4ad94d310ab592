// FP8 training's layers and scaling kernels (fp8_linears.cpp; docs/MODEL.md, "FP8 as it runs"). Internal to the
// estimate module: the step-time model prices a layer that runs in FP8 at the FP8 peak, every other layer at the
// 16-bit one, and adds what the scaling moves.
#pragma once

#include <cstddef>
#include <vector>

#include "core/estimate/planner.hpp"
#include "core/estimate/step_time_detail.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate::detail {

// Whether the layer's GEMMs run in FP8 under `config`: a linear layer of the blocks, not the output head.
bool runs_in_fp8(const TrainingConfig& config, const workload::Layer& layer);

// Bytes the FP8 scaling of one layer moves, per sample (activations) or per micro-batch (the weight), and its
// kernels each way. All zero for a layer that does not run in FP8.
struct Fp8ScalingTraffic {
  double forward_activation_bytes = 0;   // per sample: the input's amax, cast (and transpose)
  double backward_activation_bytes = 0;  // per sample: the output gradient's, and the saved input's transpose
  double weight_bytes = 0;               // per micro-batch: the weight's amax, cast and transpose
  double forward_kernels = 0;
  double backward_kernels = 0;
};

// Where an FP8 linear's input comes from. `from_norm`: a normalization's output, which Transformer Engine's
// LayerNormLinear (Megatron's qkv and fc1) writes in FP8 from the norm kernel itself; `shared`: the tensor an earlier
// linear of the block reads too (k and v after q, up after gate), which a fused module (TE's qkv, fc1) casts once.
struct Fp8InputSource {
  bool from_norm = false;
  bool shared = false;
};
Fp8InputSource fp8_input_source(const std::vector<workload::Layer>& layers, std::size_t index);

// `element`: bytes of a 16-bit activation; `weight_element`: of the weight the cast reads. `weight_grads`: false
// for a frozen base (LoRA): no weight-gradient GEMM, so no transposed copies of the input and output gradient.
Fp8ScalingTraffic fp8_scaling_traffic(const TrainingConfig& config, const workload::Layer& layer, double element,
                                      double weight_element, Fp8InputSource source = {}, bool weight_grads = true);

// The rates a 16-bit layer of an FP8 run is priced with: the config's at bf16 (`r` itself when not FP8).
StepRates sixteen_bit_rates(const StepRates& r, const workload::Workload& w, const TrainingConfig& config);

// The layer's FP8 scaling kernels, memory-bound, at the card's bandwidth; their forward again when the layer is
// recomputed.
void add_fp8_scaling(MicroBatch& mb, const StepRates& r, const std::vector<workload::Layer>& layers, std::size_t index,
                     const TrainingConfig& config);

}  // namespace gpusage::estimate::detail
