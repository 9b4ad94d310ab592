// One micro-batch of the step-time model: the card's rates for the config (make_step_rates) and every layer's
// kernels, family by family: the layer's own forward and backward by the roofline, the memory-bound kernels
// beside it (autocast's fp32 stream, attention's layout copies and serial softmax, NCHW transposes, the
// column-block LayerNorm backward, LoRA's adapters and QLoRA's dequantization, eager elementwise code), and
// what checkpointing recomputes. See docs/MODEL.md.
#include <algorithm>
#include <cmath>

#include "core/estimate/adapters.hpp"
#include "core/estimate/attention_kernel.hpp"
#include "core/estimate/fp8_linears.hpp"
#include "core/estimate/step_time_detail.hpp"

namespace gpusage::estimate::detail {

namespace {

using workload::OpClass;

// Unfused attention's layout copies of its output each way (add_attention_layout_copies).
constexpr double kUnfusedAttentionCopies = 4;
// A 32 x 32-thread block holds half the 2,048 threads an SM keeps resident.
constexpr double kColumnBlockOccupancy = 0.5;

// A convolution doing fewer than 32 multiply-adds per output element is depthwise (k x k MACs per
// output: 9 or 25); a dense conv does C_in x k x k (at least 3 x 7 x 7 = 147 for an RGB stem).
bool is_depthwise(const workload::Layer& layer) {
  const double outputs = layer.output_elements();
  return layer.op == OpClass::conv && outputs > 0 && layer.forward_flops / 2 / outputs < 32;
}

// The fraction of its rated clock a card holds under sustained tensor math, by its TDP against its
// flagship's FLOPs per watt (constants.hpp, power_headroom).
// `clock`: the card's own clock as a multiple of its rated one, when the power allows (GeForce boost).
// Both sides count the tensor cores' full rate: the flagship's FLOPs per watt are at its FP16-accumulate rate
// where it lists one (catalog derivation), so the card's own is too. Its FP32-accumulate rate (half, on
// GeForce) would have every GeForce card below its flagship hold twice the clock its TDP allows.
double power_limited_clock_fraction(const ModelConstants& k, const catalog::Gpu& gpu, double clock) {
  if (!gpu.power_flagship_fp16_tflops_per_watt || !gpu.fp16_tflops || *gpu.fp16_tflops <= 0) return clock;
  const double sustained = k.power_headroom * *gpu.power_flagship_fp16_tflops_per_watt * gpu.tdp_w;
  const double full_rate = gpu.fp16_acc16_tflops.value_or(*gpu.fp16_tflops);
  return std::min(clock, sustained / full_rate);
}

// How many times faster the card's tensor cores run with 16-bit accumulation than with FP32 accumulation:
// 2 on GeForce cards, which list the two rates apart (catalog fp16_acc16_tflops), 1 elsewhere.
double half_rate_ratio(const catalog::Gpu& gpu) {
  if (!gpu.fp16_acc16_tflops || !gpu.fp16_tflops || *gpu.fp16_tflops <= 0) return 1.0;
  return std::max(1.0, *gpu.fp16_acc16_tflops / *gpu.fp16_tflops);
}

// Reduction depth of a conv / linear: forward, multiply-adds per output element; the input-gradient
// GEMM, per input element. The weight gradient reduces over batch x positions and loses nothing.
double forward_depth(const workload::Layer& layer) {
  const double outputs = layer.output_elements();
  return outputs > 0 ? layer.forward_flops / 2 / outputs : 0.0;
}

double input_grad_depth(const workload::Layer& layer) {
  return layer.input_elements > 0 ? layer.forward_flops / 2 / layer.input_elements : 0.0;
}

// The fp32 residual stream under autocast (Layer::autocast_extra_io_bytes).
void add_autocast_stream(MicroBatch& mb, const StepRates& r, const workload::Layer& layer) {
  if (r.autocast > 0 && layer.autocast_extra_io_bytes > 0) {
    mb.add_memory_bound(r, r.batch * layer.autocast_extra_io_bytes, layer.autocast_extra_kernels);
  }
}

// Attention's layout copies. Unfused attention through torch.matmul on head-split views copies q, k and v
// (reshape of a permuted tensor cannot be a view) and the merged output (transpose(1, 2).reshape): four
// copies of the layer's output each way (a copy's gradient is a copy); fused attention (SDPA) keeps only the merge.
void add_attention_layout_copies(MicroBatch& mb, const StepRates& r, const workload::Layer& layer) {
  if (layer.op == OpClass::attention && layer.score_elements > 0) {
    const double copies = unfused_attention(layer) ? kUnfusedAttentionCopies : 1;
    mb.add_memory_bound(r, r.batch * layer.output_elements() * 2 * r.element * copies, copies, 1);
  }
}

// Before PyTorch 2.8 a LayerNorm's weight and bias gradients were reduced over all rows by one block of 32 x 32
// threads per 32 columns (layer_norm_kernel.cu's GammaBetaBackwardCUDAKernel_32x32, gridDim = columns / 32), so
// the pass that reads the input and the output gradient again streams from columns / 32 SMs, each holding
// half the threads an SM can (1,024 of 2,048: half of sm_memory_gbs), not from the whole GPU. 2.8 splits the
// rows among blocks too (PyTorch PR 148605). A ViT-Ti's 192 columns use 6 SMs.
void add_column_block_layer_norm(MicroBatch& mb, const StepRates& r, const workload::Layer& layer,
                                 const TrainingConfig& config) {
  if (config.column_block_layer_norm_backward && layer.layer_norm_columns > 0 && r.gpu->sm_count > 0) {
    const double bytes = 2 * r.batch * layer.output_elements() * (r.autocast > 0 ? 4.0 : r.element);
    const double blocks = std::min<double>(r.gpu->sm_count, std::ceil(layer.layer_norm_columns / 32));
    const double rate = std::min(r.bandwidth, blocks * r.k->sm_memory_gbs * 1e9 * kColumnBlockOccupancy);
    const double slower_s = bytes / rate - bytes / r.bandwidth;
    mb.backward_s += slower_s;
    mb.memory_s += slower_s;
  }
}

void add_nchw_transposes(MicroBatch& mb, const StepRates& r, const workload::Layer& layer) {
  if (layer.op == OpClass::conv && r.layout_passes > 0) {
    // Transposes are their own memory-bound kernels: forward converts input and output, backward the
    // two gradients and the saved input (twice the forward traffic), as the roofline counts backward.
    // Their cost goes by elements, not bytes: a strided gather moves one element per access whatever
    // its width, so 16-bit pays as much as TF32. Counted at 4 bytes per element (priced at the
    // activation's width instead, the held-out p90 was 29.7% against 22.7%: docs/MODEL.md).
    constexpr double kTransposeBytesPerElement = 4;
    const double in = r.batch * layer.input_elements * kTransposeBytesPerElement;
    const double out = r.batch * layer.output_elements() * kTransposeBytesPerElement;
    const double io = r.batch * layer.forward_io_elements * kTransposeBytesPerElement;
    // Each transpose reads what the kernel before it just wrote (the layer's input, the conv's output).
    const double resident = in * r.l2_hit(in) + out * r.l2_hit(out);
    const double transpose_s = 3 * r.layout_passes * (io - resident / 2) / r.bandwidth;
    mb.forward_s += transpose_s / 3;
    mb.backward_s += 2 * transpose_s / 3;
    mb.memory_s += transpose_s;
  }
}

void add_unfused_attention_softmax(MicroBatch& mb, const StepRates& r, const workload::Layer& layer) {
  if (layer.serial_io_elements > 0) {
    // Unfused attention's scale/mask/softmax/dropout kernels run between its matmuls, each alone on
    // the GPU: their time adds to the GEMMs' (backward reads and writes about twice as much). The
    // autocast cast back to 16 bit is the last of serial_kernels; pure 16-bit training has none.
    const double bytes = r.batch * (layer.serial_io_elements * r.element + layer.serial_fixed_bytes +
                                    r.autocast * layer.serial_autocast_extra_bytes);
    const double serial_kernels = layer.serial_kernels - (r.autocast > 0 ? 0 : 1);
    const double kernel_fixed_s = r.k->kernel_fixed_s;
    mb.forward_s += bytes / r.bandwidth + serial_kernels * kernel_fixed_s;
    mb.backward_s += 2 * bytes / r.bandwidth + serial_kernels * kernel_fixed_s;
    mb.memory_s += 3 * bytes / r.bandwidth;
    mb.fixed_s += 2 * serial_kernels * kernel_fixed_s;
    mb.kernels += 2 * serial_kernels;
  }
}

// The layer's own kernels: one forward, and backward's (two for a GEMM-like layer: input and weight gradients).
struct LayerKernels {
  Roofline forward, backward;
};

LayerKernels layer_rooflines(const StepRates& r, const workload::Layer& layer, double layer_element) {
  const double io_bytes = r.batch * layer.forward_io_elements * layer_element + layer.params * r.weight_element;
  const bool tiled = layer.op == OpClass::conv || layer.op == OpClass::matmul;
  // A memory-bound kernel reads first what the kernel before it wrote: forward its input, backward the
  // output gradient. The part of it still in L2 does not cross the DRAM bus.
  double forward_l2_bytes = 0, backward_l2_bytes = 0;
  if (!is_gemm_like(layer.op)) {
    const double in = r.batch * layer.input_elements * layer_element;
    const double out = r.batch * layer.output_elements() * layer_element;
    forward_l2_bytes = in * r.l2_hit(in);
    backward_l2_bytes = out * r.l2_hit(out);
  }
  LayerKernels out;
  out.forward = r.roofline(layer, r.batch * layer.forward_flops, io_bytes - forward_l2_bytes, 1,
                           tiled ? r.tile_overhead(forward_depth(layer)) : r.attention_tile_overhead(layer, false),
                           r.softmax_s(layer));
  // Backward reads the output gradient and the saved input and writes the input gradient (and the
  // weight gradient): about twice the forward traffic. GEMM-like layers launch two kernels.
  double backward_flops = r.batch * layer.backward_flops;
  const bool weight_grads = r.trains_base || layer.params == 0;
  if (!weight_grads && is_gemm_like(layer.op)) backward_flops /= 2;  // no weight grads
  // The input-gradient GEMM's share of backward: forward's FLOPs when it runs (not for the stem conv,
  // whose input needs no gradient: backward_flops equals forward there).
  double input_grad_share = 0;
  if (tiled && backward_flops > 0) {
    const double input_grad =
        layer.backward_flops > 1.5 * layer.forward_flops || !weight_grads ? r.batch * layer.forward_flops : 0.0;
    input_grad_share = std::min(1.0, input_grad / backward_flops);
  }
  out.backward = r.roofline(
      layer, backward_flops, 2 * io_bytes - backward_l2_bytes, is_gemm_like(layer.op) ? 2 : 1,
      tiled ? input_grad_share * r.tile_overhead(input_grad_depth(layer)) : r.attention_tile_overhead(layer, true),
      r.softmax_s(layer));
  return out;
}

void add_layer_kernels(MicroBatch& mb, const LayerKernels& l, const workload::Layer& layer) {
  mb.forward_s += l.forward.time_s;
  mb.backward_s += l.backward.time_s;
  mb.fixed_s += l.forward.fixed_s + l.backward.fixed_s;
  mb.kernels += is_gemm_like(layer.op) ? 3 : 2;
  (l.forward.compute_bound ? mb.compute_s : mb.memory_s) += l.forward.time_s - l.forward.fixed_s;
  (l.backward.compute_bound ? mb.compute_s : mb.memory_s) += l.backward.time_s - l.backward.fixed_s;
}

// LoRA's adapters and QLoRA's dequantization: memory-bound kernels beside the base GEMM, their forward again
// when the block is recomputed.
void add_adapters(MicroBatch& mb, const StepRates& r, const workload::Layer& layer, const TrainingConfig& config) {
  const ModelConstants& k = *r.k;
  const AdapterCost extra = adapter_cost(layer, config, k, r.batch, r.upcast ? 4.0 : r.element);
  const double extra_forward_s = extra.forward_bytes / r.bandwidth + extra.forward_kernels * k.kernel_fixed_s;
  mb.forward_s += extra_forward_s;
  mb.backward_s += extra.backward_bytes / r.bandwidth + extra.backward_kernels * k.kernel_fixed_s;
  mb.memory_s += (extra.forward_bytes + extra.backward_bytes) / r.bandwidth;
  mb.fixed_s += (extra.forward_kernels + extra.backward_kernels) * k.kernel_fixed_s;
  mb.kernels += extra.forward_kernels + extra.backward_kernels;
  if (recomputed(config, layer)) {
    mb.recompute_s += extra_forward_s;
    mb.memory_s += extra.forward_bytes / r.bandwidth;
    mb.fixed_s += extra.forward_kernels * k.kernel_fixed_s;
    mb.kernels += extra.forward_kernels;
  }
}

// Checkpointing runs the layer's forward kernel again in backward.
void add_recomputed_forward(MicroBatch& mb, const Roofline& forward) {
  mb.recompute_s += forward.time_s;
  mb.kernels += 1;
  (forward.compute_bound ? mb.compute_s : mb.memory_s) += forward.time_s - forward.fixed_s;
  mb.fixed_s += forward.fixed_s;
}

// Eager elementwise code (--kernels eager): the extra memory-bound kernels beside the fused one counted above,
// twice the traffic in backward, again when the block is recomputed.
void add_eager_elementwise(MicroBatch& mb, const StepRates& r, const workload::Layer& layer,
                           const TrainingConfig& config) {
  if (config.eager_kernels && layer.eager_extra_kernels > 0) {
    constexpr double kFp32Bytes = 4;
    const double bytes = r.batch * (layer.eager_extra_elements * (r.upcast ? kFp32Bytes : r.element) +
                                    layer.eager_extra_fp32_elements * kFp32Bytes);
    const double kernels_each_way = layer.eager_extra_kernels;
    const double kernel_fixed_s = r.k->kernel_fixed_s;
    const double passes = recomputed(config, layer) ? 4 : 3;  // forward, backward (2x), recompute
    mb.forward_s += bytes / r.bandwidth + kernels_each_way * kernel_fixed_s;
    mb.backward_s += 2 * bytes / r.bandwidth + kernels_each_way * kernel_fixed_s;
    if (passes > 3) mb.recompute_s += bytes / r.bandwidth + kernels_each_way * kernel_fixed_s;
    mb.memory_s += passes * bytes / r.bandwidth;
    mb.fixed_s += (passes - 1) * kernels_each_way * kernel_fixed_s;
    mb.kernels += (passes - 1) * kernels_each_way;
  }
}

}  // namespace

double StepRates::l2_hit(double tensor_bytes) const {
  return l2_bytes > 0 && tensor_bytes > 0 ? std::exp(-tensor_bytes / l2_bytes) : 0.0;
}

double StepRates::efficiency(const workload::Layer& layer) const {
  if (layer.op == OpClass::conv) return tensor_cores ? k->conv_tensor_efficiency * tf32 : k->conv_fp32_efficiency;
  double matmul = tensor_cores ? k->matmul_tensor_efficiency * tf32 : k->matmul_fp32_efficiency;
  if (layer.op != OpClass::attention || unfused_attention(layer)) return matmul;
  return matmul * k->attention_relative_efficiency * attention_speed.matmul;  // FlashAttention 2's: 1
}

double StepRates::tile_overhead(double depth) const {
  if (depth <= 0 || flops_per_sm_cycle <= 0) return 0.0;
  return k->gemm_tile_fixed_cycles * flops_per_sm_cycle / (2 * k->tile_elements * depth);
}

// QK^T reduces over head_dim, PV over the keys each query sees; backward's four matmuls reduce one over head_dim
// (dO V^T) and three over the sequence.
double StepRates::attention_tile_overhead(const workload::Layer& layer, bool backward) const {
  const double outputs = layer.output_elements();
  if (!unfused_attention(layer) || outputs <= 0) return 0.0;
  const double head_dim = layer.forward_flops / (4 * layer.score_elements);
  const double keys = layer.score_elements * head_dim / outputs;
  const double over_head_dim = backward ? 0.25 : 0.5;
  return over_head_dim * tile_overhead(head_dim) + (1 - over_head_dim) * tile_overhead(keys);
}

// Fused attention's softmax (constants.hpp, sfu_results_per_sm_cycle): per score and pass one exponential on the
// special-function units and attention_softmax_fp32_ops FP32 operations on the CUDA cores, at the quoted clock
// (times GeForce's boost ratio, as the CUDA cores run), while the kernel's tensor cores wait.
double StepRates::softmax_s(const workload::Layer& layer) const {
  if (layer.op != OpClass::attention || unfused_attention(layer) || layer.score_elements <= 0 ||
      exponentials_per_s <= 0) {
    return 0.0;
  }
  return batch * layer.score_elements * (1 / exponentials_per_s + k->attention_softmax_fp32_ops * 2 / vector_peak);
}

Roofline StepRates::roofline(const workload::Layer& layer, double flops, double bytes, double kernels, double overhead,
                             double serial_compute_s) const {
  Roofline r;
  double rate = vector_peak;
  double memory_rate = bandwidth;
  if (is_gemm_like(layer.op)) {
    const double tiles = batch * layer.output_elements() / k->tile_elements;
    const double fill = std::clamp(tiles / fill_tiles, 1.0 / fill_tiles, 1.0);
    rate = matmul_peak * std::min(1.0, efficiency(layer) * tensor_headroom) * fill;
    if (is_depthwise(layer)) memory_rate *= k->depthwise_conv_relative_efficiency;
  }
  double compute_s = flops / rate * (1 + overhead) + serial_compute_s;
  if (layer.op == OpClass::attention && !unfused_attention(layer)) compute_s /= attention_speed.kernel;
  const double memory_s = bytes / memory_rate;
  r.compute_bound = compute_s >= memory_s;
  r.fixed_s = kernels * k->kernel_fixed_s;
  r.time_s = std::max(compute_s, memory_s) + r.fixed_s;
  return r;
}

StepRates make_step_rates(const ModelConstants& k, const workload::Workload& w, const TrainingConfig& config,
                          const catalog::Gpu& gpu) {
  StepRates r;
  r.k = &k;
  r.gpu = &gpu;
  r.batch = config.batch_per_gpu;
  r.element = activation_element_bytes(config.precision);
  const bool fp32_math = config.precision == catalog::Precision::fp32;
  // 16-bit autocast (not pure 16-bit training): the fp32 op list's outputs are 4 bytes wide.
  r.autocast = runs_under_autocast(config) ? 1.0 : 0.0;
  // A precision the card has no tensor cores for runs at its FP32 CUDA-core rate (bf16 on Volta/Turing).
  // GeForce cards list a 16-bit-accumulate rate twice the FP32-accumulate one; PyTorch's GEMMs and
  // cuDNN's convolutions accumulate in FP32 (cuBLAS CUBLAS_COMPUTE_32F under autocast), so the
  // FP32-accumulate rate (matmul_tflops) is the peak.
  r.tensor_cores = !fp32_math && gpu.matmul_tflops(config.precision).has_value();
  r.datasheet_peak = gpu.matmul_tflops(config.precision).value_or(gpu.fp32_tflops) * 1e12;
  // GeForce boards clock above their rated boost (constants.hpp); the power limit still caps tensor math.
  r.clock = catalog::is_geforce(gpu.family) ? k.geforce_boost_clock_ratio : 1.0;
  r.matmul_peak = r.datasheet_peak * (r.tensor_cores ? power_limited_clock_fraction(k, gpu, r.clock) : r.clock);
  r.vector_peak = gpu.fp32_tflops * 1e12 * r.clock;
  r.bandwidth = memory_bound_bandwidth(k, gpu);
  r.weight_element = r.element;  // autocast reads the 16-bit weight copies
  r.fill_tiles = gpu.sm_count * k.tiles_per_sm_to_fill;
  // L2 reuse (constants.hpp, l2_reuse_fraction): the share of a tensor a kernel reads that is still in L2
  // from the kernel that just wrote it.
  r.l2_bytes = gpu.l2_cache_mb.value_or(0) * 1e6 * k.l2_reuse_fraction;
  // TF32 kernels fall short of their own peak only where the tensor cores do TF32 faster than the CUDA cores
  // do FP32 (constants.hpp, tf32_relative_efficiency); GeForce's TF32 tensor rate is its FP32 rate.
  const bool fast_tf32 = r.datasheet_peak > gpu.fp32_tflops * 1e12 * 1.01;
  r.tf32 = config.precision == catalog::Precision::tf32 && fast_tf32 ? k.tf32_relative_efficiency : 1.0;
  // NCHW activations under tensor cores: each convolution transposes its input and output (constants.hpp).
  r.layout_passes =
      r.tensor_cores && !config.channels_last && w.domain == workload::Domain::vision ? k.nchw_transpose_passes : 0;
  // GeForce tensor cores run FP32-accumulate math at half their rate; the loads that feed them and each tile's
  // prologue and epilogue keep the full rate's pace and hide under the doubled math, so a GEMM that reaches
  // `efficiency` of a full-rate peak reaches efficiency x 2 of the halved one, at most all of it (docs/MODEL.md,
  // session 18: large GEMMs measure 1.01-1.14x the halved datasheet rate on every GeForce card).
  r.tensor_headroom = r.tensor_cores ? half_rate_ratio(gpu) : 1.0;
  // The clock the datasheet's peaks are quoted at: the FP32 peak at 2 FLOPs per CUDA core per cycle, so no clock
  // figure is needed. Tensor FLOPs one SM does per cycle are the GEMM peak over the SMs at that clock.
  r.quoted_clock_hz = gpu.cuda_cores > 0 && gpu.fp32_tflops > 0 ? gpu.fp32_tflops * 1e12 / (2.0 * gpu.cuda_cores) : 0;
  r.flops_per_sm_cycle =
      gpu.sm_count > 0 && r.quoted_clock_hz > 0 ? r.datasheet_peak / (gpu.sm_count * r.quoted_clock_hz) : 0;
  r.exponentials_per_s = gpu.sm_count * k.sfu_results_per_sm_cycle * r.quoted_clock_hz * r.clock;
  // After QLoRA's k-bit preparation the decoder's hidden states are fp32 (TrainingConfig::kbit_upcast): its
  // memory-bound layers (activations, their products, rotary's elementwise code) and the LoRA adapters' path read
  // and write 4 bytes an element; norms and residual adds already carry the fp32 stream (autocast_extra_io_bytes),
  // and attention and the GEMMs run at the compute dtype (flash attention casts to it; adapter_cost prices the casts).
  r.upcast = kbit_upcast_applies(config) && r.element < 4;
  r.trains_base = !(lora_rank(config) > 0);
  r.attention_speed = fused_attention_speed(gpu, config.attention_kernel);
  return r;
}

void MicroBatch::add_memory_bound(const StepRates& r, double bytes, double kernel_count, double backward_bytes_ratio) {
  const double kernel_fixed_s = r.k->kernel_fixed_s;
  forward_s += bytes / r.bandwidth + kernel_count * kernel_fixed_s;
  backward_s += backward_bytes_ratio * bytes / r.bandwidth + kernel_count * kernel_fixed_s;
  memory_s += (1 + backward_bytes_ratio) * bytes / r.bandwidth;
  fixed_s += 2 * kernel_count * kernel_fixed_s;
  kernels += 2 * kernel_count;
}

MicroBatch micro_batch_time(const StepRates& fp8_or_own, const workload::Workload& w, const TrainingConfig& config) {
  MicroBatch mb;
  // Under FP8 only the blocks' linear layers run at the FP8 rates; the rest run at the 16-bit ones (fp8_linears.cpp).
  const StepRates sixteen_bit = sixteen_bit_rates(fp8_or_own, w, config);
  for (std::size_t index = 0; index < w.layers.size(); ++index) {
    const workload::Layer& layer = w.layers[index];
    const StepRates& r = runs_in_fp8(config, layer) ? fp8_or_own : sixteen_bit;
    const bool upcast_layer =
        r.upcast && !is_gemm_like(layer.op) && layer.op != OpClass::attention && layer.autocast_extra_io_bytes <= 0;
    const double layer_element = upcast_layer ? 4.0 : r.element;
    add_autocast_stream(mb, r, layer);
    add_attention_layout_copies(mb, r, layer);
    add_column_block_layer_norm(mb, r, layer, config);
    add_nchw_transposes(mb, r, layer);
    add_unfused_attention_softmax(mb, r, layer);
    const LayerKernels own = layer_rooflines(r, layer, layer_element);
    add_layer_kernels(mb, own, layer);
    add_adapters(mb, r, layer, config);
    if (recomputed(config, layer)) add_recomputed_forward(mb, own.forward);
    add_eager_elementwise(mb, r, layer, config);
    add_fp8_scaling(mb, sixteen_bit, w.layers, index, config);
    if (layer.params > 0) mb.parameter_tensors += 2;  // weight and (usually) bias or norm shift
  }
  return mb;
}

}  // namespace gpusage::estimate::detail
