// The GPU comparison pieces of `gpusage gpus`, for other commands that show them (`guide`).
#pragma once

#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "report/svg_chart.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

// --gpu (ids, names, families) when not empty, else --family (one family, "all", or a comma list of them;
// anything else is an InputError: a GPU name there would silently select one card).
std::vector<const catalog::Gpu*> select_gpus(const catalog::Catalog& catalog, const std::string& family,
                                             const std::string& gpus);
// The buyer's comparison table (the columns `gpusage gpus` prints), and the same as aligned text.
report::Table gpus_comparison_table(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus);
// The buyer's comparison table as aligned text, `width` columns wide.
std::string gpus_comparison_text(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                 int width);
// The grouped-bar comparison chart with the default metrics (CUDA cores, FP16 tensor, VRAM, bandwidth, TDP).
report::BarChart gpus_comparison_chart(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                       const std::string& selection);

}  // namespace gpusage::cli
