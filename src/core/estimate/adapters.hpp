// Internal helpers of the estimate module shared by the memory and time models.
#pragma once

#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

// Bytes per activation element: fp32 and tf32 store fp32; autocast (fp16/bf16) stores 16-bit
// activations. fp8 training (Transformer Engine) keeps activations outside GEMMs in bf16, so 2 as well.
inline double activation_element_bytes(catalog::Precision precision) {
  using P = catalog::Precision;
  return precision == P::fp32 || precision == P::tf32 ? 4.0 : 2.0;
}

// 16-bit autocast rather than a pure 16-bit model: the ops on autocast's fp32 list (softmax, norms) keep
// and write 4-byte tensors, which both models add on top of the 16-bit ones.
inline bool runs_under_autocast(const TrainingConfig& config) {
  return activation_element_bytes(config.precision) < 4 && !config.pure_16bit;
}

// The LoRA rank in force: --lora R, or QLoRA's default rank 16 (Dettmers et al. 2023 use r=64 for
// their largest runs; 16 is PEFT's common default for 7B models).
inline int lora_rank(const TrainingConfig& config) {
  if (config.lora_rank) return *config.lora_rank;
  return config.qlora ? 16 : 0;
}

struct AdapterShape {
  double linear_params = 0;   // parameters of the adaptable matrices (what QLoRA quantizes)
  double adapter_params = 0;  // LoRA parameters: r * (in + out) per adapted matrix
};
AdapterShape adapter_shape(const workload::Workload& w, const TrainingConfig& config);

}  // namespace gpusage::estimate
