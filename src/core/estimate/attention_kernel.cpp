#include "core/estimate/attention_kernel.hpp"

#include <algorithm>

#include "core/common/i18n.hpp"

namespace gpusage::estimate {

namespace {

// PyTorch's flash backend (and the flash-attn package) requires sm80 or newer: torch/nn/attention's
// check_flash_attention_hardware_support, flash-attn's README ("Ampere, Ada, or Hopper GPUs"). The
// memory-efficient backend runs from sm50 on, so every card of the catalog (Pascal's sm60 and later) has it; the
// math backend (the s x s probabilities) is what --no-flash-attention plans.
constexpr double kFlashMinComputeCapability = 8.0;

// The memory-efficient kernel's speed relative to FlashAttention 2. Dao 2023 ("FlashAttention-2", arXiv
// 2307.08691, abstract and Figure 4): FlashAttention reaches 25-40% of the A100's peak, FlashAttention-2 50-73%,
// "around 2x" faster; the benchmark's xFormers CUTLASS kernel (PyTorch's memory-efficient backend) runs at about
// FlashAttention's speed. The ratio of the ranges' midpoints: 32.5 / 61.5 = 0.53. Counted, not fitted: no
// validation row runs long-sequence attention below sm80.
constexpr double kMemoryEfficientRelativeSpeed = 0.53;

bool has_fused_attention(const workload::Workload& w) {
  // Fused attention keeps no s x s scores between its kernels: no serial I/O over the score matrix (unfused
  // attention's softmax; step_time_detail.hpp, unfused_attention).
  return std::any_of(w.layers.begin(), w.layers.end(), [](const workload::Layer& layer) {
    return layer.op == workload::OpClass::attention && !(layer.score_elements > 0 && layer.serial_io_elements > 0);
  });
}

}  // namespace

AttentionKernel fused_attention_kernel(const catalog::Gpu& gpu) {
  return gpu.compute_capability_value() >= kFlashMinComputeCapability ? AttentionKernel::flash
                                                                      : AttentionKernel::memory_efficient;
}

double fused_attention_relative_speed(const catalog::Gpu& gpu) {
  return fused_attention_kernel(gpu) == AttentionKernel::flash ? 1.0 : kMemoryEfficientRelativeSpeed;
}

std::optional<std::string> attention_fallback_note(const catalog::Gpu& gpu, const workload::Workload& w) {
  if (fused_attention_kernel(gpu) == AttentionKernel::flash || !has_fused_attention(w)) return std::nullopt;
  return i18n::trf(
      "{} (compute capability {}) has no FlashAttention 2 (sm80 and newer): attention is planned as PyTorch's "
      "memory-efficient SDPA kernel, memory linear in the sequence as flash, at {:.0f}% of flash's speed",
      gpu.name, gpu.compute_capability, kMemoryEfficientRelativeSpeed * 100);
}

}  // namespace gpusage::estimate
