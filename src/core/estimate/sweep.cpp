#include "core/estimate/sweep.hpp"

#include <algorithm>

#include "core/estimate/gpu_rates.hpp"

namespace gpusage::estimate {

Sweep run_sweep(workload::Workload workload, const TrainingConfig& base, const Calibration& calibration,
                const SweepRequest& request, const catalog::Catalog& catalog) {
  Sweep sweep{std::move(workload), {}, calibration.notes, {}};
  const workload::Workload& w = sweep.workload;
  for (const catalog::Gpu* listed : request.gpus) {
    CompletedGpu completed = complete_tensor_rates(*listed, catalog);
    for (auto& note : completed.notes) sweep.notes.push_back(std::move(note));
    sweep.gpus.push_back(std::make_unique<catalog::Gpu>(std::move(completed.gpu)));
    const catalog::Gpu& gpu = *sweep.gpus.back();
    // Memory does not depend on the batch it is asked at, nor on accumulation: one search per GPU.
    const int largest = max_batch(w, base, gpu, &calibration);
    std::vector<TrainingConfig> configs;
    if (request.target_batch) {
      TrainingConfig c = base;
      if (largest < 1) {
        c.batch_per_gpu = 1;
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
    for (const auto& c : configs) sweep.predictions.push_back(predict(w, c, gpu, &calibration, largest));
  }
  return sweep;
}

}  // namespace gpusage::estimate
