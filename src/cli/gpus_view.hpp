// How `gpusage gpus` selects and presents GPUs (gpus_view.cpp): the selection rules, the buyer's comparison
// table and the grouped-bar chart, for `gpus` and the commands that show them too (`guide`, `report`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/catalog/fields.hpp"
#include "report/svg_chart.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

inline constexpr double kGroupFrom = 1000;  // "8,960" beside "21,760" in one column
inline constexpr const char* kDefaultChartMetrics = "cuda_cores,fp16_tflops,memory_gb,memory_bandwidth_gbs,tdp_w";
// How a table cell shows each kind of figure: a derived figure carries a marker, and an empty one says
// whether the hardware lacks the precision or NVIDIA publishes no number.
inline constexpr const char* kDerivedMarker = "†";  // dagger
inline constexpr const char* kUnsupported = "–";    // en dash
inline constexpr const char* kUnpublished = "?";

// --gpu (ids, names, families) when not empty, else --family (one family, "all", or a comma list of them;
// anything else is an InputError: a GPU name there would silently select one card).
std::vector<const catalog::Gpu*> select_gpus(const catalog::Catalog& catalog, const std::string& family,
                                             const std::string& gpus);
// Highest first; GPUs without the figure keep their order at the end.
void sort_gpus(std::vector<const catalog::Gpu*>& gpus, const catalog::Metric& metric);
// Distinct source URLs behind the GPUs' figures.
std::size_t count_sources(const std::vector<const catalog::Gpu*>& gpus);

// The buyer's comparison table (the columns `gpusage gpus` prints), optionally sorted by a metric.
report::Table comparison_table(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                               const std::optional<catalog::Metric>& sort);
report::Table gpus_comparison_table(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus);
// The buyer's comparison table as aligned text, `width` columns wide.
std::string gpus_comparison_text(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                 int width);

// --metrics "a,b,c": each a catalog metric. Throws InputError naming an unknown one.
std::vector<catalog::Metric> parse_metrics(const std::string& list);
// The grouped-bar comparison chart of `metrics`; gpus_comparison_chart uses the default metrics.
report::BarChart comparison_chart(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                  const std::vector<catalog::Metric>& metrics, const std::string& selection);
report::BarChart gpus_comparison_chart(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                                       const std::string& selection);

// The GPUs with unpublished tensor rates completed by the planner's rule (estimate/gpu_rates.hpp), in order,
// for the report's price-performance chart.
std::vector<catalog::Gpu> with_tensor_rates(const catalog::Catalog& catalog,
                                            const std::vector<const catalog::Gpu*>& gpus);

}  // namespace gpusage::cli
