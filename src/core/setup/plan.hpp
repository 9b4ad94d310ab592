// The one prediction of a training setup. plan, guide, report (and their --cost tables), run's expectation and
// fit-batch's start all predict through run_plan, so the same setup on the same card prints the same numbers
// everywhere: the workload and training config the setup describes, its calibration, and estimate::run_sweep
// (the card's missing tensor rates completed, the largest batch once per card, the 80% interval).
#pragma once

#include <string>

#include "core/catalog/catalog.hpp"
#include "core/estimate/sweep.hpp"
#include "core/setup/training_setup.hpp"

namespace gpusage::setup {

// The sweep of the setup over `request`'s cards and batches.
estimate::Sweep run_plan(const TrainingSetup& setup, const estimate::SweepRequest& request,
                         const catalog::Catalog& catalog = catalog::Catalog::active());
// The same for a --gpu list whose entries may carry a GPU count: "rtx5090,8xh100-sxm5-80gb" plans the
// RTX 5090 on --gpus GPUs and the H100 on 8 (data parallel, as --gpus 8 would), one sweep per count,
// merged in the order given. `request.gpus` is filled from the list.
estimate::Sweep run_plan(const TrainingSetup& setup, const std::string& gpu_list, estimate::SweepRequest request,
                         const catalog::Catalog& catalog = catalog::Catalog::active());

}  // namespace gpusage::setup
