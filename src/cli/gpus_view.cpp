// How `gpusage gpus` selects and presents GPUs: the selection rules, the buyer's comparison table and the
// grouped-bar chart. `gpus`, `guide` and `report` show them.
#include "cli/gpus_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/estimate/gpu_rates.hpp"

namespace gpusage::cli {

using catalog::Catalog;
using catalog::Gpu;
using catalog::Metric;
using i18n::tr;
using i18n::trf;

// --family takes one family, "all", or a comma list of them; anything else is a mistake worth naming
// (a GPU name there would silently select one card).
std::vector<const Gpu*> select_gpus(const Catalog& catalog, const std::string& family, const std::string& gpus) {
  if (!gpus.empty()) return catalog.select(gpus);
  for (const std::string& part : text::split(family, ',')) {
    if (text::to_lower(part) != "all" && !catalog::parse_family(part) && !catalog::is_market_group(part)) {
      throw InputError(trf("--family: '{}' is not one of {}, china, all", part, catalog::family_names()));
    }
  }
  return catalog.select(family);
}

// Highest first; GPUs without the figure keep their order at the end.
void sort_gpus(std::vector<const Gpu*>& gpus, const Metric& metric) {
  std::stable_sort(gpus.begin(), gpus.end(), [&metric](const Gpu* a, const Gpu* b) {
    auto va = metric.value(*a), vb = metric.value(*b);
    if (va && vb) return *va > *vb;
    return va.has_value() && !vb.has_value();
  });
}

std::size_t count_sources(const std::vector<const Gpu*>& gpus) {
  std::set<std::string> urls;
  for (const Gpu* gpu : gpus) {
    for (const auto& source : gpu->sources) urls.insert(source.url);
  }
  return urls.size();
}

namespace {

// ---- the comparison table (text and Markdown) ------------------------------------------------------

std::string figure_cell(const std::optional<double>& value, catalog::FigureStatus status, int places) {
  switch (status) {
    case catalog::FigureStatus::unsupported: return kUnsupported;
    case catalog::FigureStatus::unpublished: return kUnpublished;
    case catalog::FigureStatus::derived: return report::format_number(*value, places, kGroupFrom) + kDerivedMarker;
    case catalog::FigureStatus::sourced: break;
  }
  return report::format_number(*value, places, kGroupFrom);
}

struct ListColumn {
  report::Column column;
  std::function<std::string(const Gpu&)> cell;
};

ListColumn metric_column(const std::string& metric_name, std::string header, std::string unit, int drop_priority,
                         double scale = 1, std::optional<int> decimals = std::nullopt) {
  Metric metric = catalog::find_metric(metric_name, "column");
  int places = decimals.value_or(metric.decimals);
  return {{std::move(header), std::move(unit), report::Align::right, drop_priority},
          [metric, scale, places](const Gpu& gpu) {
            auto value = metric.value(gpu);
            return figure_cell(value ? std::optional<double>(*value * scale) : std::nullopt, metric.status(gpu),
                               places);
          }};
}

// What a buyer compares first. Drop priorities: higher numbers leave first when the terminal is narrow.
std::vector<ListColumn> buyer_columns() {
  std::vector<ListColumn> columns;
  columns.push_back({{"GPU", "", report::Align::left, 0}, [](const Gpu& g) { return g.id; }});
  columns.push_back({{tr("Name"), "", report::Align::left, 9}, [](const Gpu& g) { return g.name; }});
  columns.push_back({{tr("Arch"), "", report::Align::left, 7}, [](const Gpu& g) { return g.architecture; }});
  columns.push_back(metric_column("cuda_cores", "CUDA", tr("cores"), 5));
  columns.push_back(metric_column("fp32_tflops", "FP32", "TFLOPS", 0));
  columns.push_back(metric_column("fp16_tflops", "FP16", "TFLOPS", 0));
  columns.push_back(metric_column("fp8_tflops", "FP8", "TFLOPS", 3));
  columns.push_back(metric_column("fp4_tflops", "FP4", "TFLOPS", 4));
  columns.push_back(metric_column("memory_gb", tr("VRAM"), "GB", 0));
  columns.push_back(metric_column("memory_bandwidth_gbs", tr("Mem BW"), "GB/s", 0));
  columns.push_back(metric_column("tdp_w", tr("TDP"), "W", 1));
  columns.push_back(metric_column("msrp_usd", tr("Price"), "USD", 0));
  // Per $1,000 rather than per dollar: 0.105 TFLOPS/$ is harder to compare by eye than 104.8.
  columns.push_back(metric_column("fp16_tflops_per_usd", "FP16/$1k", "TFLOPS", 2, 1000, 1));
  columns.push_back(metric_column("fp16_tflops_per_watt", "FP16/W", "TFLOPS", 6, 1, 2));
  return columns;
}

}  // namespace

report::Table comparison_table(const Catalog& catalog, const std::vector<const Gpu*>& gpus,
                               const std::optional<Metric>& sort) {
  std::vector<ListColumn> columns = buyer_columns();
  // The figure the rows are sorted by is always shown, even when it is not a usual column.
  static const std::set<std::string> shown_metrics{
      "cuda_cores",           "fp32_tflops", "fp16_tflops", "fp8_tflops",          "fp4_tflops",          "memory_gb",
      "memory_bandwidth_gbs", "tdp_w",       "msrp_usd",    "fp16_tflops_per_usd", "fp16_tflops_per_watt"};
  if (sort && !shown_metrics.count(sort->name)) {
    std::string header = tr(sort->label.c_str());
    columns.push_back(metric_column(sort->name, header, sort->unit, 0));
  }
  report::Table table;
  table.units_on_own_line = true;
  for (const auto& c : columns) table.columns.push_back(c.column);
  for (const Gpu* gpu : gpus) {
    std::vector<std::string> row;
    for (const auto& c : columns) row.push_back(c.cell(*gpu));
    table.add_row(std::move(row));
  }
  if (gpus.empty()) table.notes.push_back(tr("(no GPUs selected)"));
  if (sort) table.notes.push_back(trf("Sorted by {}, highest first; unknown values last.", sort->name));
  table.notes.push_back(
      tr("FP16, FP8, FP4: dense tensor-core TFLOPS with FP32 accumulate. Price: launch MSRP. "
         "FP16/$1k: FP16 TFLOPS per $1,000."));
  table.notes.push_back(trf(
      "{}: derived from NVIDIA's published AI TOPS (or, where NVIDIA lists none, the FP32 rate) by the "
      "architecture's whitepaper ratio (`gpusage gpus show ID` lists it); {}: the hardware lacks the precision; {}: "
      "not published.",
      kDerivedMarker, kUnsupported, kUnpublished));
  table.notes.push_back(trf("Figures: {} cited sources in {}; `gpusage gpus show ID` gives each field's source.",
                            count_sources(gpus), catalog.origin()));
  return table;
}

// ---- CSV and JSON: every field, raw values ----------------------------------------------------------

// Exactly as stored: "104.8", "21760". Derived ratios get 6 significant digits, enough for any sheet.

report::BarChart comparison_chart(const Catalog& catalog, const std::vector<const Gpu*>& gpus,
                                  const std::vector<Metric>& metrics, const std::string& selection) {
  report::BarChart chart;
  chart.title = trf("GPU comparison: {}", selection);
  chart.subtitle =
      trf("Each metric's bars are scaled to its largest value in this chart; labels give the actual values. "
          "Data: {}.",
          catalog.origin());
  // xgettext:no-c-format (a fmt string, not printf's: "% o" is no conversion here)
  chart.y_axis_label = tr("% of the largest value of each metric");
  for (const Gpu* gpu : gpus) chart.groups.push_back(gpu->name);
  std::vector<std::string> derived;  // "FP16 tensor of GeForce RTX 5060"
  for (const Metric& metric : metrics) {
    report::BarSeries series{tr(metric.label.c_str()), metric.unit, metric.decimals, {}};
    for (const Gpu* gpu : gpus) {
      series.values.push_back(metric.value(*gpu));
      if (metric.status(*gpu) == catalog::FigureStatus::derived) {
        derived.push_back(trf("{} of {}", tr(metric.label.c_str()), gpu->name));
      }
    }
    chart.series.push_back(std::move(series));
  }
  if (!derived.empty()) {
    chart.subtitle +=
        trf(" Derived from NVIDIA's AI TOPS by the whitepaper ratio: {}.",
            derived.size() <= 4 ? text::join(derived) : trf("{} bars (`gpusage gpus show ID`)", derived.size()));
  }
  return chart;
}

std::vector<Metric> parse_metrics(const std::string& list) {
  std::vector<Metric> metrics;
  for (const std::string& name : text::split(list, ',')) {
    if (name.empty()) throw InputError(trf("--metrics: empty name in '{}'", list));
    metrics.push_back(catalog::find_metric(name, "--metrics"));
  }
  return metrics;
}

std::string gpus_comparison_text(const Catalog& catalog, const std::vector<const Gpu*>& gpus, int width) {
  return report::render_text(gpus_comparison_table(catalog, gpus), width);
}

report::Table gpus_comparison_table(const Catalog& catalog, const std::vector<const Gpu*>& gpus) {
  return comparison_table(catalog, gpus, std::nullopt);
}

report::BarChart gpus_comparison_chart(const Catalog& catalog, const std::vector<const Gpu*>& gpus,
                                       const std::string& selection) {
  return comparison_chart(catalog, gpus, parse_metrics(kDefaultChartMetrics), selection);
}

std::vector<Gpu> with_tensor_rates(const Catalog& catalog, const std::vector<const Gpu*>& gpus) {
  std::vector<Gpu> completed;
  for (const Gpu* gpu : gpus) completed.push_back(estimate::complete_tensor_rates(*gpu, catalog).gpu);
  return completed;
}

}  // namespace gpusage::cli
