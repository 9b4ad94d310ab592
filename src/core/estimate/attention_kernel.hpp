// Which fused attention kernel PyTorch's scaled_dot_product_attention runs on a card, and what that costs.
// FlashAttention 2 (PyTorch's flash backend, Hugging Face's "sdpa" and "flash_attention_2") needs compute
// capability 8.0; below it (Volta, Turing, Pascal) SDPA runs its memory-efficient backend (xFormers' CUTLASS
// kernel), which keeps attention's memory linear in the sequence as flash does, at a lower speed.
#pragma once

#include <optional>
#include <string>

#include "core/catalog/gpu.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {

enum class AttentionKernel { flash, memory_efficient };

// The fused kernel on `gpu`: flash from compute capability 8.0 on, memory-efficient below.
AttentionKernel fused_attention_kernel(const catalog::Gpu& gpu);
// Its speed as a multiple of FlashAttention 2's (1 for flash): what the step time multiplies fused attention's
// matmul efficiency by (step_time_layers.cpp, StepRates::efficiency).
double fused_attention_relative_speed(const catalog::Gpu& gpu);
// The note plan prints when `w` has fused attention and `gpu` runs the memory-efficient kernel instead.
std::optional<std::string> attention_fallback_note(const catalog::Gpu& gpu, const workload::Workload& w);

}  // namespace gpusage::estimate
