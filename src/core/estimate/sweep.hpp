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
  // A comparison's default (guide, report: no --batch given): `batches` is the vision ladder, and the sweep
  // takes batch_ladder's batches for the workload's kind and the cards' largest batches instead.
  bool ladder = false;
  // Precision per card (plan without --precision): bf16 where the card has it, else fp16 (auto_precision).
  bool precision_per_card = false;
};

// The precision a user most likely trains at on `gpu`: bf16 autocast where the card has bfloat16 (compute
// capability 8.0, Ampere, and later; no loss scaler needed), else fp16 autocast with a loss scaler.
catalog::Precision auto_precision(const catalog::Gpu& gpu);

// The batches a comparison sweeps on every card when the user gives none. Vision models keep `vision`
// (guide's 32..256, report's 8..1024); language models, whose largest batches are a few samples, take 1, 2,
// 4, ... up to the first power of two above the largest batch of any card (at most 8 columns: the top 8),
// so that one column shows where they run out. Then, on either ladder, a card whose largest batch `largest`
// (one per card, 0 when nothing fits) lies below every batch of the ladder gets the largest power of two
// that fits it added: no card on which a batch fits shows none.
std::vector<int> batch_ladder(workload::Domain domain, const std::vector<int>& vision, const std::vector<int>& largest);

struct Sweep {
  workload::Workload workload;
  // The workload at the tokens each sample really computes (--tokens-per-sample), when below the
  // sequence length: step time comes from it (predict's `timed`).
  std::optional<workload::Workload> timed_workload;
  std::vector<Prediction> predictions;  // GPU-major, then batch
  std::vector<std::string> notes;       // calibration, then each derived or modelled catalog figure
  // What the plan assumed because the setup did not say (setup::run_plan): precision, shape, recipe.
  std::vector<std::string> assumptions;
  // Keeps the completed GPU records alive: predictions point into it.
  std::vector<std::unique_ptr<catalog::Gpu>> gpus;
};

// `base` is the training setup at any batch (the sweep sets batch and accumulation). A GPU on which even
// batch 1 does not fit gets one prediction at batch 1 (reported as not fitting, with advice).
// A base with accumulation_steps above 1 (plan's --accumulate) keeps them: a target batch then sets only
// the per-GPU batch, or is refused when it cannot be split so.
Sweep run_sweep(workload::Workload workload, const TrainingConfig& base, const Calibration& calibration,
                const SweepRequest& request, const catalog::Catalog& catalog,
                std::optional<workload::Workload> timed_workload = std::nullopt);

}  // namespace gpusage::estimate
