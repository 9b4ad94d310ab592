// Renders a plan sweep (core/estimate/sweep.hpp) as the plan table or the DESIGN.md JSON contract.
// Shared by `plan`, `guide` and `report`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/plan_options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::cli {

// The sweep (core/estimate/sweep.hpp) of the model and training setup the options describe.
estimate::Sweep run_plan(const RunOptions& options, const estimate::SweepRequest& request);
// The same for a --gpu list whose entries may carry a GPU count: "rtx5090,8xh100-sxm5-80gb" plans the
// RTX 5090 on --gpus GPUs and the H100 on 8 (data parallel, as --gpus 8 would), one sweep per count,
// merged in the order given. `request.gpus` is filled from the list.
estimate::Sweep run_plan(const RunOptions& options, const std::string& gpu_list, estimate::SweepRequest request);

nlohmann::json plan_json(const estimate::Sweep& results);
std::string plan_table(const estimate::Sweep& results, int width);
// One CSV row per prediction (card and batch), every column of the table (RFC 4180; `plan --format csv`).
std::string plan_csv(const estimate::Sweep& results);

}  // namespace gpusage::cli
