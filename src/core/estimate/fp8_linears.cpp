// FP8 training as Transformer Engine, torchao float8 and llm.q run it (docs/MODEL.md, "FP8 as it runs"): only the
// linear layers of the blocks run their GEMMs in FP8. Attention (FlashAttention / cuDNN fused attention in 16 bits,
// FP8 attention being an opt-in), the output head (torchtitan's float8 filter leaves "output" out, Megatron's output
// layer is not a TE module, llm.q's lm_head matmul takes the bf16 weight) and every memory-bound op stay 16-bit and
// run at the 16-bit rates. Each FP8 linear adds the scaling kernels: memory-bound passes priced by the bytes they
// move at the card's bandwidth, as every other memory-bound kernel.
#include "core/estimate/fp8_linears.hpp"

#include <algorithm>
#include <string_view>

#include "core/estimate/adapters.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

const char* to_string(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::producer_amax: return "producer-amax";
  }
  return "?";
}

std::optional<Fp8Recipe> parse_fp8_recipe(const std::string& name) {
  for (const Fp8Recipe recipe : {Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::producer_amax}) {
    if (name == to_string(recipe)) return recipe;
  }
  return std::nullopt;
}

namespace detail {

namespace {

// An FP8 element is one byte.
constexpr double kFp8Bytes = 1;

bool is_output_head(const workload::Layer& layer) {
  constexpr std::string_view kHead = "lm_head";
  const std::string_view name = layer.name;
  return name.size() >= kHead.size() && name.substr(name.size() - kHead.size()) == kHead;
}

}  // namespace

bool runs_in_fp8(const TrainingConfig& config, const workload::Layer& layer) {
  return config.precision == catalog::Precision::fp8 && layer.op == workload::OpClass::matmul && !is_output_head(layer);
}

Fp8InputSource fp8_input_source(const std::vector<workload::Layer>& layers, std::size_t index) {
  // Walk back to the layer that made this input: siblings reading the same tensor are skipped (and make it shared),
  // and so is whatever does not output a tensor of the input's size (gate's activation between gate and up).
  constexpr std::size_t kLookBack = 8;
  Fp8InputSource source;
  const workload::Layer& layer = layers.at(index);
  for (std::size_t back = 1; back <= std::min(index, kLookBack); ++back) {
    const workload::Layer& before = layers[index - back];
    if (before.op == workload::OpClass::matmul && before.input_elements == layer.input_elements) {
      source.shared = true;
      continue;
    }
    if (before.output_elements() != layer.input_elements) continue;
    source.from_norm = before.op == workload::OpClass::normalization;
    return source;
  }
  return Fp8InputSource{};
}

Fp8ScalingTraffic fp8_scaling_traffic(const TrainingConfig& config, const workload::Layer& layer, double element,
                                      double weight_element, Fp8InputSource source, bool weight_grads) {
  Fp8ScalingTraffic t;
  if (!runs_in_fp8(config, layer)) return t;
  const double x = layer.input_elements;     // the GEMM's input, per sample
  const double y = layer.output_elements();  // its output, whose gradient backward casts
  const auto w = static_cast<double>(layer.params);
  // The transposed FP8 copies of the input and the output gradient feed the weight-gradient GEMM only; the weight's
  // transpose feeds the input-gradient GEMM, which a frozen base still runs.
  const double activation_transposes = weight_grads ? 1 : 0;
  if (config.fp8_recipe == Fp8Recipe::tensorwise) {
    // Current scaling: the scale must be known before the cast, so each tensor is read once by an amax reduction and
    // again by the cast; the FP8 tensors backward needs in the other layout (the saved input and the output gradient
    // for wgrad, the weight for dgrad) are transposed in passes of their own (read and write a byte).
    t.forward_activation_bytes = x * (2 * element + kFp8Bytes);
    t.backward_activation_bytes = y * (2 * element + kFp8Bytes) + activation_transposes * (y + x) * 2 * kFp8Bytes;
    t.weight_bytes = w * (2 * weight_element + kFp8Bytes + 2 * kFp8Bytes);
    t.forward_kernels = 4;  // amax and cast of the input and of the weight
    t.backward_kernels =
        2 + 2 * activation_transposes;  // amax, cast (and transpose) of the output gradient; the input's
    return t;
  }
  // Delayed scaling (and llm.q's abs-max from the producing kernel): one pass reads the 16-bit tensor and writes the
  // FP8 tensor and its transpose (wgrad's operand): forward the input, backward the output gradient, and the weight
  // once per micro-batch (dgrad's operand transposed). The amax histories are updated for all tensors in one fused
  // kernel per step, left out.
  const double cast = element + kFp8Bytes + activation_transposes * kFp8Bytes;
  t.weight_bytes = w * (weight_element + 2 * kFp8Bytes);
  t.backward_activation_bytes = y * cast;
  t.forward_kernels = 1;  // the weight's cast-transpose
  t.backward_kernels = 1;
  const bool transformer_engine = config.fp8_recipe == Fp8Recipe::delayed;
  if (transformer_engine && (source.from_norm || source.shared)) {
    // Megatron's LayerNormLinear (qkv, fc1): the norm kernel writes its output in FP8, and the fused module casts a
    // shared input once; backward transposes the saved FP8 input for wgrad (read and write a byte).
    if (source.from_norm && !source.shared && weight_grads) {
      t.backward_activation_bytes += x * 2 * kFp8Bytes;
      t.backward_kernels += 1;
    }
    return t;
  }
  t.forward_activation_bytes = x * cast;
  t.forward_kernels += 1;  // the input's cast-transpose
  return t;
}

StepRates sixteen_bit_rates(const StepRates& r, const workload::Workload& w, const TrainingConfig& config) {
  if (config.precision != catalog::Precision::fp8) return r;
  TrainingConfig sixteen = config;
  sixteen.precision = catalog::Precision::bf16;
  return make_step_rates(*r.k, w, sixteen, *r.gpu);
}

void add_fp8_scaling(MicroBatch& mb, const StepRates& r, const std::vector<workload::Layer>& layers, std::size_t index,
                     const TrainingConfig& config) {
  const workload::Layer& layer = layers.at(index);
  if (!runs_in_fp8(config, layer)) return;
  const Fp8ScalingTraffic t =
      fp8_scaling_traffic(config, layer, r.element, r.weight_element, fp8_input_source(layers, index), r.trains_base);
  if (t.forward_kernels + t.backward_kernels <= 0) return;
  const double kernel_fixed_s = r.k->kernel_fixed_s;
  // Transformer Engine keeps the FP8 weight and its transpose from the first micro-batch of a step for the others
  // (Megatron and NeMo pass is_first_microbatch), so with accumulation the weight is cast once per step; torchao casts
  // it in every forward.
  const double weight_casts_per_micro_batch =
      config.fp8_recipe != Fp8Recipe::tensorwise ? 1.0 / std::max(1, config.accumulation_steps) : 1.0;
  const double forward_bytes = r.batch * t.forward_activation_bytes + t.weight_bytes * weight_casts_per_micro_batch;
  const double backward_bytes = r.batch * t.backward_activation_bytes;
  const double forward_s = forward_bytes / r.bandwidth + t.forward_kernels * kernel_fixed_s;
  mb.forward_s += forward_s;
  mb.backward_s += backward_bytes / r.bandwidth + t.backward_kernels * kernel_fixed_s;
  double bytes = forward_bytes + backward_bytes;
  double kernels = t.forward_kernels + t.backward_kernels;
  if (recomputed(config, layer)) {
    mb.recompute_s += forward_s;
    bytes += forward_bytes;
    kernels += t.forward_kernels;
  }
  mb.memory_s += bytes / r.bandwidth;
  mb.fixed_s += kernels * kernel_fixed_s;
  mb.kernels += kernels;
}

}  // namespace detail

}  // namespace gpusage::estimate
