// Step-time model: a roofline per layer with calibrated efficiencies, forward plus backward, the
// optimizer step, kernel overheads and data-parallel communication. See docs/MODEL.md.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/estimate/adapters.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

namespace {

using workload::OpClass;

// Unfused attention's layout copies of its output each way (step_time below).
constexpr double kUnfusedAttentionCopies = 4;
// A 32 x 32-thread block holds half the 2,048 threads an SM keeps resident.
constexpr double kColumnBlockOccupancy = 0.5;

bool is_gemm_like(OpClass op) { return op == OpClass::conv || op == OpClass::matmul || op == OpClass::attention; }

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

// Per-direction bandwidth of a PCIe x16 link by generation, GB/s (PCI-SIG: 8/16/32 GT/s with
// 128b/130b encoding for gen 3/4/5 = 0.985 GB/s per lane per GT/8 ... = 15.75, 31.5, 63.0).
double pcie_gbs(const catalog::Gpu& gpu) {
  const int gen = gpu.pcie_gen.value_or(4);
  const int lanes = gpu.pcie_lanes.value_or(16);
  const double per_lane = gen <= 3 ? 0.985 : gen == 4 ? 1.969 : gen == 5 ? 3.938 : 7.877;
  return per_lane * lanes;
}

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

struct Roofline {
  double time_s = 0;
  bool compute_bound = false;
  double fixed_s = 0;
};

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
  const double batch = config.batch_per_gpu;
  const double element = activation_element_bytes(config.precision);
  const bool fp32_math = config.precision == catalog::Precision::fp32;
  // 16-bit autocast (not pure 16-bit training): the fp32 op list's outputs are 4 bytes wide.
  const double autocast = runs_under_autocast(config) ? 1.0 : 0.0;
  // A precision the card has no tensor cores for runs at its FP32 CUDA-core rate (bf16 on Volta/Turing).
  // GeForce cards list a 16-bit-accumulate rate twice the FP32-accumulate one; PyTorch's GEMMs and
  // cuDNN's convolutions accumulate in FP32 (cuBLAS CUBLAS_COMPUTE_32F under autocast), so the
  // FP32-accumulate rate (matmul_tflops) is the peak.
  const bool tensor_cores = !fp32_math && gpu.matmul_tflops(config.precision).has_value();
  const double datasheet_peak = gpu.matmul_tflops(config.precision).value_or(gpu.fp32_tflops) * 1e12;
  // GeForce boards clock above their rated boost (constants.hpp); the power limit still caps tensor math.
  const double clock = catalog::is_geforce(gpu.family) ? k.geforce_boost_clock_ratio : 1.0;
  const double matmul_peak =
      datasheet_peak * (tensor_cores ? power_limited_clock_fraction(k, gpu, clock) : clock);
  const double vector_peak = gpu.fp32_tflops * 1e12 * clock;
  const double bandwidth = memory_bound_bandwidth(k, gpu);
  const double weight_element = element;  // autocast reads the 16-bit weight copies
  const double fill_tiles = gpu.sm_count * k.tiles_per_sm_to_fill;
  // L2 reuse (constants.hpp, l2_reuse_fraction): the share of a tensor a kernel reads that is still in L2
  // from the kernel that just wrote it.
  const double l2_bytes = gpu.l2_cache_mb.value_or(0) * 1e6 * k.l2_reuse_fraction;
  auto l2_hit = [&](double tensor_bytes) {
    return l2_bytes > 0 && tensor_bytes > 0 ? std::exp(-tensor_bytes / l2_bytes) : 0.0;
  };

  // TF32 kernels fall short of their own peak only where the tensor cores do TF32 faster than the CUDA cores
  // do FP32 (constants.hpp, tf32_relative_efficiency); GeForce's TF32 tensor rate is its FP32 rate.
  const bool fast_tf32 = datasheet_peak > gpu.fp32_tflops * 1e12 * 1.01;
  const double tf32 =
      config.precision == catalog::Precision::tf32 && fast_tf32 ? k.tf32_relative_efficiency : 1.0;
  // Unfused attention (eager softmax(QK^T)V, score_elements known) runs its two matmuls as batched cuBLAS GEMMs,
  // priced as GEMMs with the tile cost of their reduction depths below; fused (flash) attention, and a traced
  // attention core whose scores are not known, run at attention_relative_efficiency of the GEMM rate.
  auto unfused_attention = [](const workload::Layer& layer) {
    return layer.op == OpClass::attention && layer.score_elements > 0 && layer.serial_io_elements > 0;
  };
  auto efficiency = [&](const workload::Layer& layer) {
    if (layer.op == OpClass::conv) return tensor_cores ? k.conv_tensor_efficiency * tf32 : k.conv_fp32_efficiency;
    double matmul = tensor_cores ? k.matmul_tensor_efficiency * tf32 : k.matmul_fp32_efficiency;
    return layer.op == OpClass::attention && !unfused_attention(layer) ? matmul * k.attention_relative_efficiency
                                                                        : matmul;
  };
  // NCHW activations under tensor cores: each convolution transposes its input and output (constants.hpp).
  const double layout_passes =
      tensor_cores && !config.channels_last && w.domain == workload::Domain::vision ? k.nchw_transpose_passes : 0;

  // GeForce tensor cores run FP32-accumulate math at half their rate; the loads that feed them and each tile's
  // prologue and epilogue keep the full rate's pace and hide under the doubled math, so a GEMM that reaches
  // `efficiency` of a full-rate peak reaches efficiency x 2 of the halved one, at most all of it (docs/MODEL.md,
  // session 18: large GEMMs measure 1.01-1.14x the halved datasheet rate on every GeForce card).
  const double tensor_headroom = tensor_cores ? half_rate_ratio(gpu) : 1.0;
  // The clock the datasheet's peaks are quoted at: the FP32 peak at 2 FLOPs per CUDA core per cycle, so no clock
  // figure is needed. Tensor FLOPs one SM does per cycle are the GEMM peak over the SMs at that clock.
  const double quoted_clock_hz =
      gpu.cuda_cores > 0 && gpu.fp32_tflops > 0 ? gpu.fp32_tflops * 1e12 / (2.0 * gpu.cuda_cores) : 0;
  const double flops_per_sm_cycle =
      gpu.sm_count > 0 && quoted_clock_hz > 0 ? datasheet_peak / (gpu.sm_count * quoted_clock_hz) : 0;
  // The fraction a GEMM's time grows by when each output tile adds gemm_tile_fixed_cycles to a K loop
  // of `depth` multiply-adds per output element (constants.hpp).
  auto tile_overhead = [&](double depth) {
    if (depth <= 0 || flops_per_sm_cycle <= 0) return 0.0;
    return k.gemm_tile_fixed_cycles * flops_per_sm_cycle / (2 * k.tile_elements * depth);
  };
  // Reduction depth of a conv / linear: forward, multiply-adds per output element; the input-gradient
  // GEMM, per input element. The weight gradient reduces over batch x positions and loses nothing.
  auto forward_depth = [](const workload::Layer& layer) {
    const double outputs = layer.output_elements();
    return outputs > 0 ? layer.forward_flops / 2 / outputs : 0.0;
  };
  auto input_grad_depth = [](const workload::Layer& layer) {
    return layer.input_elements > 0 ? layer.forward_flops / 2 / layer.input_elements : 0.0;
  };
  auto roofline = [&](const workload::Layer& layer, double flops, double bytes, double kernels,
                      double overhead = 0, double serial_compute_s = 0) {
    Roofline r;
    double rate = vector_peak;
    double memory_rate = bandwidth;
    if (is_gemm_like(layer.op)) {
      const double tiles = batch * layer.output_elements() / k.tile_elements;
      const double fill = std::clamp(tiles / fill_tiles, 1.0 / fill_tiles, 1.0);
      rate = matmul_peak * std::min(1.0, efficiency(layer) * tensor_headroom) * fill;
      if (is_depthwise(layer)) memory_rate *= k.depthwise_conv_relative_efficiency;
    }
    const double compute_s = flops / rate * (1 + overhead) + serial_compute_s;
    const double memory_s = bytes / memory_rate;
    r.compute_bound = compute_s >= memory_s;
    r.fixed_s = kernels * k.kernel_fixed_s;
    r.time_s = std::max(compute_s, memory_s) + r.fixed_s;
    return r;
  };

  // Fused attention's softmax (constants.hpp, sfu_results_per_sm_cycle): per score and pass one exponential on the
  // special-function units and attention_softmax_fp32_ops FP32 operations on the CUDA cores, at the quoted clock
  // (times GeForce's boost ratio, as the CUDA cores run), while the kernel's tensor cores wait.
  const double exponentials_per_s = gpu.sm_count * k.sfu_results_per_sm_cycle * quoted_clock_hz * clock;
  auto softmax_s = [&](const workload::Layer& layer) {
    if (layer.op != OpClass::attention || unfused_attention(layer) || layer.score_elements <= 0 ||
        exponentials_per_s <= 0) {
      return 0.0;
    }
    return batch * layer.score_elements * (1 / exponentials_per_s + k.attention_softmax_fp32_ops * 2 / vector_peak);
  };
  // Unfused attention's tile cost, forward and backward: QK^T reduces over head_dim, PV over the keys each query
  // sees; backward's four matmuls reduce one over head_dim (dO V^T) and three over the sequence.
  auto attention_tile_overhead = [&](const workload::Layer& layer, bool backward) {
    const double outputs = layer.output_elements();
    if (!unfused_attention(layer) || outputs <= 0) return 0.0;
    const double head_dim = layer.forward_flops / (4 * layer.score_elements);
    const double keys = layer.score_elements * head_dim / outputs;
    const double over_head_dim = backward ? 0.25 : 0.5;
    return over_head_dim * tile_overhead(head_dim) + (1 - over_head_dim) * tile_overhead(keys);
  };

  StepTime t;
  double forward_s = 0, backward_s = 0, recompute_s = 0, kernels = 0, fixed_s = 0;
  double parameter_tensors = 0;
  const bool trains_base = !(lora_rank(config) > 0);
  // Memory-bound kernels beside a layer's own: `bytes` and `kernel_count` in forward, `backward_bytes_ratio` x the
  // bytes (twice, for a kernel whose gradient reads what it read and wrote) in as many kernels in backward.
  auto add_memory_bound = [&](double bytes, double kernel_count, double backward_bytes_ratio = 2) {
    forward_s += bytes / bandwidth + kernel_count * k.kernel_fixed_s;
    backward_s += backward_bytes_ratio * bytes / bandwidth + kernel_count * k.kernel_fixed_s;
    t.memory_s += (1 + backward_bytes_ratio) * bytes / bandwidth;
    fixed_s += 2 * kernel_count * k.kernel_fixed_s;
    kernels += 2 * kernel_count;
  };
  // After QLoRA's k-bit preparation the decoder's hidden states are fp32 (TrainingConfig::kbit_upcast): its
  // memory-bound layers (activations, their products, rotary's elementwise code) and the LoRA adapters' path read
  // and write 4 bytes an element; norms and residual adds already carry the fp32 stream (autocast_extra_io_bytes),
  // and attention and the GEMMs run at the compute dtype (flash attention casts to it; adapter_cost prices the casts).
  const bool upcast = kbit_upcast_applies(config) && element < 4;
  for (const auto& layer : w.layers) {
    const bool upcast_layer = upcast && !is_gemm_like(layer.op) && layer.op != OpClass::attention &&
                              layer.autocast_extra_io_bytes <= 0;
    const double layer_element = upcast_layer ? 4.0 : element;
    const double io_bytes = batch * layer.forward_io_elements * layer_element + layer.params * weight_element;
    // The fp32 residual stream under autocast (Layer::autocast_extra_io_bytes).
    if (autocast > 0 && layer.autocast_extra_io_bytes > 0) {
      add_memory_bound(batch * layer.autocast_extra_io_bytes, layer.autocast_extra_kernels);
    }
    // Attention's layout copies. Unfused attention through torch.matmul on head-split views copies q, k and v
    // (reshape of a permuted tensor cannot be a view) and the merged output (transpose(1, 2).reshape): four
    // copies of the layer's output each way (a copy's gradient is a copy); fused attention (SDPA) keeps only the merge.
    if (layer.op == OpClass::attention && layer.score_elements > 0) {
      const double copies = unfused_attention(layer) ? kUnfusedAttentionCopies : 1;
      add_memory_bound(batch * layer.output_elements() * 2 * element * copies, copies, 1);
    }
    // Before PyTorch 2.8 a LayerNorm's weight and bias gradients were reduced over all rows by one block of 32 x 32
    // threads per 32 columns (layer_norm_kernel.cu's GammaBetaBackwardCUDAKernel_32x32, gridDim = columns / 32), so
    // the pass that reads the input and the output gradient again streams from columns / 32 SMs, each holding
    // half the threads an SM can (1,024 of 2,048: half of sm_memory_gbs), not from the whole GPU. 2.8 splits the
    // rows among blocks too (PyTorch PR 148605). A ViT-Ti's 192 columns use 6 SMs.
    if (config.column_block_layer_norm_backward && layer.layer_norm_columns > 0 && gpu.sm_count > 0) {
      const double bytes = 2 * batch * layer.output_elements() * (autocast > 0 ? 4.0 : element);
      const double blocks = std::min<double>(gpu.sm_count, std::ceil(layer.layer_norm_columns / 32));
      const double rate = std::min(bandwidth, blocks * k.sm_memory_gbs * 1e9 * kColumnBlockOccupancy);
      const double slower_s = bytes / rate - bytes / bandwidth;
      backward_s += slower_s;
      t.memory_s += slower_s;
    }
    if (layer.op == OpClass::conv && layout_passes > 0) {
      // Transposes are their own memory-bound kernels: forward converts input and output, backward the
      // two gradients and the saved input (twice the forward traffic), as the roofline counts backward.
      // Their cost goes by elements, not bytes: a strided gather moves one element per access whatever
      // its width, so 16-bit pays as much as TF32. Counted at 4 bytes per element (priced at the
      // activation's width instead, the held-out p90 was 29.7% against 22.7%: docs/MODEL.md).
      constexpr double kTransposeBytesPerElement = 4;
      const double in = batch * layer.input_elements * kTransposeBytesPerElement;
      const double out = batch * layer.output_elements() * kTransposeBytesPerElement;
      const double io = batch * layer.forward_io_elements * kTransposeBytesPerElement;
      // Each transpose reads what the kernel before it just wrote (the layer's input, the conv's output).
      const double resident = in * l2_hit(in) + out * l2_hit(out);
      const double transpose_s = 3 * layout_passes * (io - resident / 2) / bandwidth;
      forward_s += transpose_s / 3;
      backward_s += 2 * transpose_s / 3;
      t.memory_s += transpose_s;
    }
    if (layer.serial_io_elements > 0) {
      // Unfused attention's scale/mask/softmax/dropout kernels run between its matmuls, each alone on
      // the GPU: their time adds to the GEMMs' (backward reads and writes about twice as much). The
      // autocast cast back to 16 bit is the last of serial_kernels; pure 16-bit training has none.
      const double bytes = batch * (layer.serial_io_elements * element + layer.serial_fixed_bytes +
                                    autocast * layer.serial_autocast_extra_bytes);
      const double serial_kernels = layer.serial_kernels - (autocast > 0 ? 0 : 1);
      forward_s += bytes / bandwidth + serial_kernels * k.kernel_fixed_s;
      backward_s += 2 * bytes / bandwidth + serial_kernels * k.kernel_fixed_s;
      t.memory_s += 3 * bytes / bandwidth;
      fixed_s += 2 * serial_kernels * k.kernel_fixed_s;
      kernels += 2 * serial_kernels;
    }
    const bool tiled = layer.op == OpClass::conv || layer.op == OpClass::matmul;
    // A memory-bound kernel reads first what the kernel before it wrote: forward its input, backward the
    // output gradient. The part of it still in L2 does not cross the DRAM bus.
    double forward_l2_bytes = 0, backward_l2_bytes = 0;
    if (!is_gemm_like(layer.op)) {
      const double in = batch * layer.input_elements * layer_element;
      const double out = batch * layer.output_elements() * layer_element;
      forward_l2_bytes = in * l2_hit(in);
      backward_l2_bytes = out * l2_hit(out);
    }
    const Roofline f = roofline(layer, batch * layer.forward_flops, io_bytes - forward_l2_bytes, 1,
                                tiled ? tile_overhead(forward_depth(layer)) : attention_tile_overhead(layer, false),
                                softmax_s(layer));
    // Backward reads the output gradient and the saved input and writes the input gradient (and the
    // weight gradient): about twice the forward traffic. GEMM-like layers launch two kernels.
    double backward_flops = batch * layer.backward_flops;
    const bool weight_grads = trains_base || layer.params == 0;
    if (!weight_grads && is_gemm_like(layer.op)) backward_flops /= 2;  // no weight grads
    // The input-gradient GEMM's share of backward: forward's FLOPs when it runs (not for the stem conv,
    // whose input needs no gradient: backward_flops equals forward there).
    double input_grad_share = 0;
    if (tiled && backward_flops > 0) {
      const double input_grad = layer.backward_flops > 1.5 * layer.forward_flops || !weight_grads
                                    ? batch * layer.forward_flops : 0.0;
      input_grad_share = std::min(1.0, input_grad / backward_flops);
    }
    const Roofline b = roofline(layer, backward_flops, 2 * io_bytes - backward_l2_bytes, is_gemm_like(layer.op) ? 2 : 1,
                                tiled ? input_grad_share * tile_overhead(input_grad_depth(layer))
                                      : attention_tile_overhead(layer, true),
                                softmax_s(layer));
    forward_s += f.time_s;
    backward_s += b.time_s;
    fixed_s += f.fixed_s + b.fixed_s;
    kernels += is_gemm_like(layer.op) ? 3 : 2;
    (f.compute_bound ? t.compute_s : t.memory_s) += f.time_s - f.fixed_s;
    (b.compute_bound ? t.compute_s : t.memory_s) += b.time_s - b.fixed_s;
    // LoRA's adapters and QLoRA's dequantization: memory-bound kernels beside the base GEMM.
    const AdapterCost extra = adapter_cost(layer, config, k, batch, upcast ? 4.0 : element);
    const double extra_forward_s = extra.forward_bytes / bandwidth + extra.forward_kernels * k.kernel_fixed_s;
    forward_s += extra_forward_s;
    backward_s += extra.backward_bytes / bandwidth + extra.backward_kernels * k.kernel_fixed_s;
    t.memory_s += (extra.forward_bytes + extra.backward_bytes) / bandwidth;
    fixed_s += (extra.forward_kernels + extra.backward_kernels) * k.kernel_fixed_s;
    kernels += extra.forward_kernels + extra.backward_kernels;
    if (recomputed(config, layer)) {
      recompute_s += extra_forward_s;
      t.memory_s += extra.forward_bytes / bandwidth;
      fixed_s += extra.forward_kernels * k.kernel_fixed_s;
      kernels += extra.forward_kernels;
    }
    if (recomputed(config, layer)) {
      recompute_s += f.time_s;
      kernels += 1;
      (f.compute_bound ? t.compute_s : t.memory_s) += f.time_s - f.fixed_s;
      fixed_s += f.fixed_s;
    }
    // Eager elementwise code (--kernels eager): the extra memory-bound kernels beside the fused one counted above,
    // twice the traffic in backward, again when the block is recomputed.
    if (config.eager_kernels && layer.eager_extra_kernels > 0) {
      constexpr double kFp32Bytes = 4;
      const double bytes =
          batch * (layer.eager_extra_elements * (upcast ? kFp32Bytes : element) +
                   layer.eager_extra_fp32_elements * kFp32Bytes);
      const double kernels_each_way = layer.eager_extra_kernels;
      const double passes = recomputed(config, layer) ? 4 : 3;  // forward, backward (2x), recompute
      forward_s += bytes / bandwidth + kernels_each_way * k.kernel_fixed_s;
      backward_s += 2 * bytes / bandwidth + kernels_each_way * k.kernel_fixed_s;
      if (passes > 3) recompute_s += bytes / bandwidth + kernels_each_way * k.kernel_fixed_s;
      t.memory_s += passes * bytes / bandwidth;
      fixed_s += (passes - 1) * kernels_each_way * k.kernel_fixed_s;
      kernels += (passes - 1) * kernels_each_way;
    }
    if (layer.params > 0) parameter_tensors += 2;  // weight and (usually) bias or norm shift
  }
  const double params = static_cast<double>(w.params());
  const double trainable = trains_base ? params : adapter_shape(w, config).adapter_params;
  // Autocast casts each fp32 weight to 16-bit once per forward: read 4 B, write 2 B per parameter (pure
  // bf16 training has no fp32 copy to cast).
  if (element < 4 && trains_base && config.master_weights == MasterWeights::fp32) {
    const double cast_s = 6 * params / bandwidth + parameter_tensors / 2 * k.kernel_fixed_s;
    forward_s += cast_s;
    t.memory_s += 6 * params / bandwidth;
    fixed_s += parameter_tensors / 2 * k.kernel_fixed_s;
    kernels += parameter_tensors / 2;
  }

  // Optimizer: a memory-bound sweep over trainable parameters and their state, in multi-tensor kernels.
  // Mixed precision adds the grad scaler's unscale and inf check (read and write each gradient).
  // A sharded optimizer (ZeRO, FSDP) steps only its rank's 1/N of the parameters.
  const double shards = shard_ranks(config);
  double optimizer_bytes = optimizer_traffic_per_param(config) * trainable / shards;
  if (config.precision == catalog::Precision::fp16) optimizer_bytes += 8 * trainable / shards;
  // Kernels of the step: a fused step's few per chunk of tensors; foreach Adam(W)'s eight ops (the step count's
  // add and the seven above) each per chunk; the loop's eight per tensor.
  const double optimizer_chunks = std::ceil(parameter_tensors / k.optimizer_tensors_per_kernel);
  double optimizer_kernels = !unfused_adam_step(config)                        ? optimizer_chunks * 4
                             : config.optimizer_impl == OptimizerImpl::foreach ? optimizer_chunks * 8
                                                                               : parameter_tensors * 8;
  // Gradient clipping (clip_grad_norm_ with foreach kernels): one pass reads every gradient for the per-tensor
  // norms, a second reads and writes every gradient to scale it by max_norm / total (done whether or not the
  // norm exceeds it, so the host never waits on the value): 3 x the gradient bytes, on the rank's shard.
  if (config.clip_grad_norm) {
    optimizer_bytes += 3 * master_element_bytes(config) * trainable / shards;
    optimizer_kernels += optimizer_chunks * 2;
  }
  t.optimizer_s = optimizer_bytes / bandwidth + optimizer_kernels * k.kernel_fixed_s;
  const double sixteen_bit = element < 4 ? 2 : 4;  // a 16-bit model's weights and gradients
  // The memory model is needed only for what it puts on the host (offloaded activations, paged-out states);
  // the step time is evaluated for every row of every fold of validate's fit, so it is not run otherwise.
  const bool paged = config.optimizer == Optimizer::paged_adamw || config.optimizer == Optimizer::paged_adamw8bit;
  const MemoryBreakdown memory =
      config.offload.activations || paged ? estimate_memory(w, config, gpu, calibration) : MemoryBreakdown{};
  const double pcie = pcie_gbs(gpu) * 1e9 * k.link_efficiency;
  // CPU offload (docs/MODEL.md, "CPU offload"). The step runs on the host over the same bytes, at the host's
  // bandwidth (torch's CPU AdamW under FSDP's parameter offload, DeepSpeed's CPU-Adam otherwise); the GPU
  // streams the gradients out while backward runs and, unless the weights live on the host, takes the updated
  // 16-bit weights back after the step.
  double offload_s = 0;
  if (config.offload.steps_on_host()) {
    const double host_gbs = k.host_optimizer_gbs / (config.offload.params ? k.torch_cpu_optimizer_slowdown : 1.0);
    t.optimizer_s = optimizer_bytes / (host_gbs * 1e9);
    if (!config.offload.params) t.optimizer_s += 2 * trainable / shards / pcie;
    optimizer_bytes = 0;
    optimizer_kernels = 0;
    offload_s += master_element_bytes(config) * trainable / shards / pcie;
  }
  // Parameter offload copies each weight shard in for forward's gather and again for backward's.
  if (config.offload.params && shards_weights(config)) {
    offload_s += 2 * params * sixteen_bit / shards / pcie;
  }
  // Activation offload copies what the blocks save out in forward and back in backward.
  offload_s += 2 * memory.host_activation_bytes / pcie;
  // The copies run on their own streams beside the micro-batch's kernels; what they cannot hide is exposed.
  const double offload_exposed_s =
      std::max(0.0, offload_s - k.allreduce_overlap_fraction * (forward_s + backward_s + recompute_s));
  // Paged optimizer states the driver moved to the host come back over PCIe for the step and go out again
  // when the next forward needs the room: twice their bytes per optimizer step.
  if (paged) {
    t.optimizer_s += 2 * memory.paged_out_bytes / pcie;
  }

  // Data-parallel communication, once per optimizer step (DDP's no_sync skips it on accumulation steps).
  const int world = config.world_size();
  if (world > 1) {
    if (config.interconnect == Interconnect::nvlink && !gpu.nvlink_gbs) {
      throw InputError(fmt::format("--interconnect nvlink: {} has no NVLink (accepted for it: card or pcie)", gpu.name));
    }
    const bool nvlink = gpu.nvlink_gbs && config.interconnect != Interconnect::pcie;
    double link_gbs = nvlink ? *gpu.nvlink_gbs / 2 : pcie_gbs(gpu);  // per direction
    // GeForce cards have no peer-to-peer over PCIe (the driver disables it), so NCCL stages every
    // transfer through host memory (its SHM transport): each byte crosses PCIe twice.
    if (!nvlink && catalog::is_geforce(gpu.family)) link_gbs /= 2;
    const double intra_node_gbs = link_gbs;
    if (config.gpus_per_node == 1) link_gbs = 1e18;                          // no intra-node hop
    const double network_gbs = config.network_gbs > 0 ? config.network_gbs : k.default_network_gbs;
    // Per GPU, the node's NIC is shared by the GPUs of the node in a ring across nodes.
    if (config.nodes > 1) link_gbs = std::min(link_gbs, network_gbs);
    const double bus = link_gbs * 1e9 * k.link_efficiency;
    const double ring = 2.0 * (world - 1) / world;  // ring all-reduce: 2(n-1)/n of the bytes per rank
    double exposed = 0;
    if (config.parallel == Parallel::ddp) {
      const double gradient_bytes = master_element_bytes(config) * trainable;
      const double total_s = ring * gradient_bytes / bus;
      const double last_bucket_s = ring * std::min(gradient_bytes, k.ddp_bucket_bytes) / bus;
      exposed = std::max(last_bucket_s, total_s - k.allreduce_overlap_fraction * backward_s);
    } else if (!shards_weights(config)) {
      // ZeRO-1/2: the 16-bit gradients are reduce-scattered in buckets while backward runs, as DDP's all-reduce;
      // after the step each rank all-gathers the updated 16-bit weights of the others' shards, with nothing
      // left to hide behind. Together the bytes of one all-reduce.
      const double gradient_bytes = sixteen_bit * trainable;
      const double scatter_s = ring / 2 * gradient_bytes / bus;
      const double last_bucket_s = ring / 2 * std::min(gradient_bytes, k.ddp_bucket_bytes) / bus;
      exposed = std::max(last_bucket_s, scatter_s - k.allreduce_overlap_fraction * backward_s) +
                ring / 2 * sixteen_bit * trainable / bus;
    } else {
      // FSDP: all-gather the parameters for forward and again for backward, reduce-scatter gradients;
      // each moves (n-1)/n of the bytes, overlapped with compute by prefetching. The gathered units are freed
      // after each use, so every accumulated micro-batch gathers again; the gradients are reduce-scattered once
      // per optimizer step (accelerate and the Hugging Face Trainer accumulate under FSDP's no_sync). HSDP does
      // this among the node's GPUs over their own link, then all-reduces each gradient shard across nodes.
      const bool hybrid = config.parallel == Parallel::hsdp && config.nodes > 1;
      const double ranks = hybrid ? config.gpus_per_node : world;
      const double gather_bus = hybrid ? intra_node_gbs * 1e9 * k.link_efficiency : bus;
      const double micro_batches = std::max(1, config.accumulation_steps);
      double seconds =
          (ranks - 1.0) / ranks * (2 * params * micro_batches + trainable) * sixteen_bit / gather_bus;
      if (hybrid) {
        seconds += 2.0 * (config.nodes - 1) / config.nodes * trainable * sixteen_bit / ranks /
                   (network_gbs * 1e9 * k.link_efficiency);
      }
      exposed = std::max(0.0, seconds - k.allreduce_overlap_fraction * micro_batches * (forward_s + backward_s));
    }
    t.communication_s = exposed;
  }

  const int accumulation = std::max(1, config.accumulation_steps);
  const double micro_s = forward_s + backward_s + recompute_s + offload_exposed_s;
  t.offload_s = accumulation * offload_exposed_s;
  double gpu_s = accumulation * micro_s + t.optimizer_s;
  // The host issues every kernel; when it is slower than the GPU, the GPU waits (eager-mode overhead).
  const double host_s = (accumulation * kernels + optimizer_kernels) * k.host_dispatch_s;
  t.compute_s *= accumulation;
  t.memory_s = t.memory_s * accumulation + optimizer_bytes / bandwidth;
  t.overhead_s = fixed_s * accumulation + optimizer_kernels * k.kernel_fixed_s + std::max(0.0, host_s - gpu_s);
  t.recompute_s = recompute_s * accumulation;
  const double scale = calibration ? calibration->scale_for(gpu.id) : 1.0;
  t.step_s = (std::max(gpu_s, host_s) + t.communication_s) * scale;
  if (t.overhead_s >= t.compute_s && t.overhead_s >= t.memory_s) {
    t.bound = Bound::overhead;
  } else {
    t.bound = t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
  }
  return t;
}

}  // namespace gpusage::estimate
