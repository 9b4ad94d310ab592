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

// FlashAttention 1's generation against FlashAttention 2, on its matmuls. Dao 2023 ("FlashAttention-2", arXiv
// 2307.08691, abstract and Figure 4): FlashAttention reaches 25-40% of the A100's peak, FlashAttention-2 50-73%,
// "around 2x" faster; the benchmark's xFormers CUTLASS kernel (PyTorch's memory-efficient backend) runs at about
// FlashAttention's speed, and so did PyTorch's SDPA flash backend before 2.2 ("FlashAttention-2 ... around 2x speedups
// compared to previous versions", PyTorch 2.2 release notes). The ratio of the ranges' midpoints: 32.5 / 61.5 = 0.53.
// Counted, not fitted.
constexpr double kFlash1RelativeSpeed = 0.53;

// Hopper-native kernels (warpgroup MMA, TMA, the softmax overlapped with the matmuls) against FlashAttention 2 on the
// same H100: FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608, abstract) is "1.5-2.0x faster than
// FlashAttention-2" in FP16, reaching 740 TFLOPS (75% of the peak); PyTorch 2.5's cuDNN SDPA backend (release blog)
// "up to 75% speed-up over FlashAttentionV2". The range's midpoint, which is also PyTorch's figure. Counted, not
// fitted.
constexpr double kHopperNativeRelativeSpeed = 1.75;
constexpr double kHopperComputeCapability = 9.0;

// FlashAttention 1 and 2 issue Ampere's warp-level mma.sync instructions on Hopper too, and those reach only about 2/3
// of the sm90 tensor cores' peak, which only the warpgroup wgmma instructions reach (FlashAttention-3 blog, PyTorch,
// 2024-07, note 1, after Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", arXiv
// 2402.13499). So on sm90 FlashAttention 2's matmuls run at this share of the rate its efficiency gives on the card's
// peak: its forward comes to 34% of the H100's bf16 peak at head dimension 128, against 35% published ("350 TFLOPS in
// FlashAttention-2 FP16 forward pass", the same blog) and 47% without it. The Hopper-native kernel's 1.75x above is
// FlashAttention 2's on the same H100, so it applies on top. Blackwell (sm100, tcgen05) is left as it was: no published
// mma.sync rate. Counted, not fitted.
constexpr double kMmaSyncShareOfHopperPeak = 2.0 / 3;
constexpr double kBlackwellComputeCapability = 10.0;

bool has_fused_attention(const workload::Workload& w) {
  // Fused attention keeps no s x s scores between its kernels: no serial I/O over the score matrix (unfused
  // attention's softmax; step_time_detail.hpp, unfused_attention).
  return std::any_of(w.layers.begin(), w.layers.end(), [](const workload::Layer& layer) {
    return layer.op == workload::OpClass::attention && !(layer.score_elements > 0 && layer.serial_io_elements > 0);
  });
}

}  // namespace

const char* to_string(AttentionKernelGeneration generation) {
  switch (generation) {
    case AttentionKernelGeneration::flash2: return "flash2";
    case AttentionKernelGeneration::flash1: return "flash1";
    case AttentionKernelGeneration::cudnn: return "cudnn";
  }
  return "?";
}

std::optional<AttentionKernelGeneration> parse_attention_kernel_generation(const std::string& name) {
  for (const auto generation :
       {AttentionKernelGeneration::flash2, AttentionKernelGeneration::flash1, AttentionKernelGeneration::cudnn}) {
    if (name == to_string(generation)) return generation;
  }
  return std::nullopt;
}

AttentionKernel fused_attention_kernel(const catalog::Gpu& gpu) {
  return gpu.compute_capability_value() >= kFlashMinComputeCapability ? AttentionKernel::flash
                                                                      : AttentionKernel::memory_efficient;
}

FusedAttentionSpeed fused_attention_speed(const catalog::Gpu& gpu, AttentionKernelGeneration generation) {
  FusedAttentionSpeed speed;
  const double capability = gpu.compute_capability_value();
  if (capability >= kHopperComputeCapability && capability < kBlackwellComputeCapability) {
    speed.matmul = kMmaSyncShareOfHopperPeak;  // FlashAttention 2's own rate on Hopper, what the others are relative to
  }
  if (fused_attention_kernel(gpu) == AttentionKernel::memory_efficient ||
      generation == AttentionKernelGeneration::flash1) {
    // The older kernels' matmuls are what is slower (FlashAttention-2's section 3: fewer non-matmul FLOPs, work
    // split across warps and thread blocks): the softmax's per-score work is the same.
    speed.matmul *= kFlash1RelativeSpeed;
  } else if (generation == AttentionKernelGeneration::cudnn && capability >= kHopperComputeCapability) {
    // Warpgroup MMA with the softmax overlapped: the whole kernel, its special-function work included.
    speed.kernel = kHopperNativeRelativeSpeed;
  }
  return speed;
}

std::optional<std::string> attention_fallback_note(const catalog::Gpu& gpu, const workload::Workload& w) {
  if (fused_attention_kernel(gpu) == AttentionKernel::flash || !has_fused_attention(w)) return std::nullopt;
  return i18n::trf(
      "{} (compute capability {}) has no FlashAttention 2 (sm80 and newer): attention is planned as PyTorch's "
      "memory-efficient SDPA kernel, memory linear in the sequence as flash, at {:.0f}% of flash's speed",
      gpu.name, gpu.compute_capability, kFlash1RelativeSpeed * 100);
}

}  // namespace gpusage::estimate
