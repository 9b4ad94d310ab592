// Internal to the estimate module: the pieces estimate_step_time (step_time.cpp) is made of. The card's rates
// for one training config (StepRates), one micro-batch's time summed kernel family by kernel family
// (MicroBatch, step_time_layers.cpp), and the costs paid once per optimizer step (step_time.cpp).
#pragma once

#include "core/catalog/gpu.hpp"
#include "core/estimate/attention_kernel.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate::detail {

inline bool is_gemm_like(workload::OpClass op) {
  return op == workload::OpClass::conv || op == workload::OpClass::matmul || op == workload::OpClass::attention;
}

// Unfused attention (eager softmax(QK^T)V, score_elements known) runs its two matmuls as batched cuBLAS GEMMs,
// priced as GEMMs with the tile cost of their reduction depths; fused (flash) attention, and a traced attention
// core whose scores are not known, run at attention_relative_efficiency of the GEMM rate.
inline bool unfused_attention(const workload::Layer& layer) {
  return layer.op == workload::OpClass::attention && layer.score_elements > 0 && layer.serial_io_elements > 0;
}

// One kernel's time by the roofline: the slower of its FLOPs at the compute rate and its bytes at the memory
// rate, plus its fixed launch cost.
struct Roofline {
  double time_s = 0;
  bool compute_bound = false;
  double fixed_s = 0;
};

// What every kernel family is priced with: the card's peaks and bandwidth for the config's precision, its
// clock under the power limit, L2 reuse and the tile cost of a GEMM's K loop (make_step_rates).
struct StepRates {
  const ModelConstants* k = nullptr;
  const catalog::Gpu* gpu = nullptr;
  double batch = 0;
  double element = 0;   // bytes of an activation element at the precision
  double autocast = 0;  // 1 under 16-bit autocast (the fp32 op list's outputs are 4 bytes wide), else 0
  bool tensor_cores = false;
  double datasheet_peak = 0;  // FLOP/s
  double clock = 1;           // the card's clock as a multiple of its rated one (GeForce boost)
  double matmul_peak = 0;     // FLOP/s, under the power limit
  double vector_peak = 0;     // FLOP/s on the CUDA cores
  double bandwidth = 0;       // bytes/s of a memory-bound kernel (memory_bound_bandwidth)
  double weight_element = 0;  // bytes of a weight as the kernels read it
  double fill_tiles = 0;      // output tiles that fill every SM
  double l2_bytes = 0;        // the part of L2 a kernel finds still holding its predecessor's output
  double tf32 = 1;            // TF32's efficiency relative to the 16-bit tensor cores'
  double layout_passes = 0;   // NCHW transposes around each convolution under tensor cores
  double tensor_headroom = 1;
  double quoted_clock_hz = 0;
  double flops_per_sm_cycle = 0;
  double exponentials_per_s = 0;  // the special-function units' rate, for fused attention's softmax
  bool upcast = false;            // QLoRA's k-bit preparation made the hidden states fp32
  bool trains_base = true;        // full training (not LoRA/QLoRA): the base has weight gradients
  FusedAttentionSpeed
      attention_speed;  // the fused attention kernel's against FlashAttention 2's (attention_kernel.cpp)

  // The share of a tensor of `tensor_bytes` that a kernel finds in L2 (constants.hpp, l2_reuse_fraction).
  double l2_hit(double tensor_bytes) const;
  // The fraction of the GEMM peak a conv, linear or attention layer reaches.
  double efficiency(const workload::Layer& layer) const;
  // The fraction a GEMM's time grows by when each output tile adds gemm_tile_fixed_cycles to a K loop of `depth`
  // multiply-adds per output element (constants.hpp).
  double tile_overhead(double depth) const;
  // Unfused attention's tile cost, forward or backward.
  double attention_tile_overhead(const workload::Layer& layer, bool backward) const;
  // Fused attention's softmax on the special-function and CUDA cores while its tensor cores wait.
  double softmax_s(const workload::Layer& layer) const;
  Roofline roofline(const workload::Layer& layer, double flops, double bytes, double kernels, double overhead = 0,
                    double serial_compute_s = 0) const;
};

StepRates make_step_rates(const ModelConstants& k, const workload::Workload& w, const TrainingConfig& config,
                          const catalog::Gpu& gpu);

// One micro-batch's forward, backward and recomputation, with the kernels it launches and their fixed cost,
// and its time split by what bounds it.
struct MicroBatch {
  double forward_s = 0, backward_s = 0, recompute_s = 0;
  double kernels = 0, fixed_s = 0;
  double parameter_tensors = 0;
  double compute_s = 0, memory_s = 0;

  // Memory-bound kernels beside a layer's own: `bytes` and `kernel_count` in forward, `backward_bytes_ratio` x
  // the bytes (twice, for a kernel whose gradient reads what it read and wrote) in as many kernels in backward.
  void add_memory_bound(const StepRates& r, double bytes, double kernel_count, double backward_bytes_ratio = 2);
};

// Every layer of `w`, kernel family by kernel family (step_time_layers.cpp).
MicroBatch micro_batch_time(const StepRates& r, const workload::Workload& w, const TrainingConfig& config);

}  // namespace gpusage::estimate::detail
