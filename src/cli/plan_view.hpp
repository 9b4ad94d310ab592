// Runs predictions over GPUs x batches and renders them (table or the DESIGN.md JSON contract).
// Shared by `plan` and `guide`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/plan_options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/estimate/plan.hpp"

namespace gpusage::cli {

struct PlanRequest {
  std::vector<const catalog::Gpu*> gpus;
  std::vector<int> batches;  // empty: auto (each GPU's largest batch)
  std::optional<int> target_batch;
};

struct PlanResults {
  workload::Workload workload;
  std::vector<estimate::Prediction> predictions;  // GPU-major, then batch
  std::vector<std::string> notes;                 // modelled catalog figures, calibration
  // Keeps the completed GPU records alive: predictions point into it.
  std::vector<std::unique_ptr<catalog::Gpu>> gpus;
};

PlanResults run_plan(const RunOptions& options, const PlanRequest& request);

// "auto" or "32,64,128": empty vector for auto. Throws InputError naming the bad entry.
std::vector<int> parse_batches(const std::string& spec);

nlohmann::json plan_json(const PlanResults& results);
std::string plan_table(const PlanResults& results, int width);

}  // namespace gpusage::cli
