#include "core/estimate/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/error.hpp"
#include "core/estimate/gpu_rates.hpp"

namespace gpusage::estimate {

namespace {

// The per-GPU batch that reaches `target` with the accumulation steps the user fixed.
int held_accumulation_batch(int target, const TrainingConfig& base) {
  const int per_step = base.accumulation_steps * base.world_size();
  if (target % per_step != 0) {
    throw InputError(fmt::format("--target-batch {} is not a multiple of --accumulate {} x {} GPU(s) = {}; give a "
                                 "multiple, or drop one of the two",
                                 target, base.accumulation_steps, base.world_size(), per_step));
  }
  return target / per_step;
}

// bfloat16 needs compute capability 8.0 (the catalog's support rule): PyTorch's autocast emulates it on older
// cards at a fraction of fp16's speed, which no one plans for, so a card without it is refused, not planned.
void check_precision(const catalog::Gpu& gpu, catalog::Precision precision) {
  if (precision != catalog::Precision::bf16 || !gpu.is_unsupported("bf16_tflops")) return;
  throw InputError(fmt::format("--precision bf16: the {} ({}, compute capability {}) has no bfloat16, which needs "
                               "compute capability 8.0 (Ampere) or later; use --precision fp16 (AMP with a loss "
                               "scaler) on it",
                               gpu.name, gpu.id, gpu.compute_capability));
}

}  // namespace

Sweep run_sweep(workload::Workload workload, const TrainingConfig& base, const Calibration& calibration,
                const SweepRequest& request, const catalog::Catalog& catalog,
                std::optional<workload::Workload> timed_workload) {
  Sweep sweep{std::move(workload), std::move(timed_workload), {}, calibration.notes, {}};
  const workload::Workload* timed = sweep.timed_workload ? &*sweep.timed_workload : nullptr;
  const workload::Workload& w = sweep.workload;
  for (const catalog::Gpu* listed : request.gpus) check_precision(*listed, base.precision);
  for (const catalog::Gpu* listed : request.gpus) {
    CompletedGpu completed = complete_tensor_rates(*listed, catalog);
    for (auto& note : completed.notes) sweep.notes.push_back(std::move(note));
    sweep.gpus.push_back(std::make_unique<catalog::Gpu>(std::move(completed.gpu)));
    const catalog::Gpu& gpu = *sweep.gpus.back();
    // Memory does not depend on the batch it is asked at, nor on accumulation: one search per GPU.
    const int largest = max_batch(w, base, gpu, &calibration);
    std::vector<TrainingConfig> configs;
    if (request.target_batch && !request.batches.empty()) {
      // A batch the user gave is held: accumulation makes up the rest of the target.
      if (request.batches.size() > 1) {
        throw InputError("--target-batch takes one --batch to hold (or none: plan picks it), not a list");
      }
      TrainingConfig c = base;
      c.batch_per_gpu = request.batches.front();
      const int per_step = c.batch_per_gpu * c.world_size();
      if (*request.target_batch % per_step != 0) {
        throw InputError(fmt::format("--target-batch {} is not a multiple of --batch {} x {} GPU(s) = {}",
                                     *request.target_batch, c.batch_per_gpu, c.world_size(), per_step));
      }
      c.accumulation_steps = *request.target_batch / per_step;
      if (base.accumulation_steps > 1 && c.accumulation_steps != base.accumulation_steps) {
        throw InputError(fmt::format("--batch {} x --accumulate {} x {} GPU(s) is {} samples, not --target-batch {}",
                                     c.batch_per_gpu, base.accumulation_steps, c.world_size(),
                                     per_step * base.accumulation_steps, *request.target_batch));
      }
      configs.push_back(c);
    } else if (request.target_batch) {
      TrainingConfig c = base;
      if (largest < 1) {
        c.batch_per_gpu = 1;
      } else if (base.accumulation_steps > 1) {
        c.batch_per_gpu = held_accumulation_batch(*request.target_batch, base);
      } else {
        c = plan_target_batch_within(w, c, gpu, *request.target_batch, largest);
      }
      configs.push_back(c);
    } else if (request.batches.empty()) {
      TrainingConfig c = base;
      c.batch_per_gpu = std::max(1, largest);
      configs.push_back(c);
    } else {
      for (int batch : request.batches) {
        TrainingConfig c = base;
        c.batch_per_gpu = batch;
        configs.push_back(c);
      }
    }
    for (const auto& c : configs) sweep.predictions.push_back(predict(w, c, gpu, &calibration, largest, timed));
  }
  return sweep;
}

}  // namespace gpusage::estimate
