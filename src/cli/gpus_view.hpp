// The GPU comparison pieces of `gpusage gpus`, for other commands that show them (`guide`).
#pragma once

#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "report/svg_chart.hpp"

namespace gpusage::cli {

// The buyer's comparison table as aligned text, `width` columns wide.
std::string gpus_comparison_text(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                 int width);
// The grouped-bar comparison chart with the default metrics (CUDA cores, FP16 tensor, VRAM, bandwidth, TDP).
report::BarChart gpus_comparison_chart(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                       const std::string& selection);

}  // namespace gpusage::cli
