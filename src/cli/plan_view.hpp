// Renders a plan sweep (core/estimate/sweep.hpp) as the plan table or the DESIGN.md JSON contract.
// Shared by `plan`, `guide` and `report`; the sweep itself is core/setup/plan.hpp's run_plan.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::cli {

nlohmann::json plan_json(const estimate::Sweep& results);
std::string plan_table(const estimate::Sweep& results, int width);
// One CSV row per prediction (card and batch), every figure of the table a plain number in its own column
// (RFC 4180; `plan --format csv`, `guide --format csv`).
std::string plan_csv(const estimate::Sweep& results);

}  // namespace gpusage::cli
