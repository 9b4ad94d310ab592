// The plan sweep: one workload and training setup over GPUs x batches, the way `plan`, `guide`, `report`
// and `bench` ask for it. Per GPU, the catalog's missing tensor rates are completed (gpu_rates.hpp) and the
// largest fitting batch is computed once; then each requested configuration is predicted.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {

struct SweepRequest {
  std::vector<const catalog::Gpu*> gpus;
  std::vector<int> batches;         // empty: auto (each GPU's largest batch)
  std::optional<int> target_batch;  // gradient accumulation to this many samples per optimizer step
};

struct Sweep {
  workload::Workload workload;
  std::vector<Prediction> predictions;  // GPU-major, then batch
  std::vector<std::string> notes;       // calibration, then each derived or modelled catalog figure
  // Keeps the completed GPU records alive: predictions point into it.
  std::vector<std::unique_ptr<catalog::Gpu>> gpus;
};

// `base` is the training setup at any batch (the sweep sets batch and accumulation). A GPU on which even
// batch 1 does not fit gets one prediction at batch 1 (reported as not fitting, with advice).
Sweep run_sweep(workload::Workload workload, const TrainingConfig& base, const Calibration& calibration,
                const SweepRequest& request, const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
