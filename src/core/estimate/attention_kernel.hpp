// Which fused attention kernel PyTorch's scaled_dot_product_attention runs on a card, and what that costs.
// FlashAttention 2 (PyTorch's flash backend, Hugging Face's "sdpa" and "flash_attention_2") needs compute
// capability 8.0; below it (Volta, Turing, Pascal) SDPA runs its memory-efficient backend (xFormers' CUTLASS
// kernel), which keeps attention's memory linear in the sequence as flash does, at a lower speed.
#pragma once

#include <optional>
#include <string>

#include "core/catalog/gpu.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {

enum class AttentionKernel { flash, memory_efficient };

// The fused kernel on `gpu`: flash from compute capability 8.0 on, memory-efficient below.
AttentionKernel fused_attention_kernel(const catalog::Gpu& gpu);
// The fused kernel's speed as multiples of FlashAttention 2's on the same card, for the software's kernel
// `generation`: `matmul` multiplies its matmuls' efficiency (FlashAttention 1's generation, the memory-efficient
// kernel below sm80), `kernel` divides its whole compute time, the softmax included (Hopper-native kernels, which
// overlap the softmax with the matmuls). step_time_layers.cpp applies both.
struct FusedAttentionSpeed {
  double matmul = 1;
  double kernel = 1;
};
FusedAttentionSpeed fused_attention_speed(const catalog::Gpu& gpu,
                                          AttentionKernelGeneration generation = AttentionKernelGeneration::flash2);
// The note plan prints when `w` has fused attention and `gpu` runs the memory-efficient kernel instead.
std::optional<std::string> attention_fallback_note(const catalog::Gpu& gpu, const workload::Workload& w);

}  // namespace gpusage::estimate
