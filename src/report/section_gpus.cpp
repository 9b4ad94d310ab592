// The page's GPU comparison section: specs side by side, tensor rates, price-performance (catalog figures).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/catalog/fields.hpp"
#include "core/common/i18n.hpp"
#include "report/sections.hpp"
#include "report/vega.hpp"

namespace gpusage::report {

using namespace vega;  // NOLINT: the helpers are this module's vocabulary

namespace {

// One horizontal bar per GPU for one catalog metric, its value printed at the end of the bar.
Json metric_panel(const catalog::Metric& metric, const std::vector<std::string>& names) {
  const std::string axis =
      with_unit(i18n::tr(metric.label.c_str()), metric.unit.empty() ? i18n::tr("count") : metric.unit);
  const std::string format = number_format(metric.decimals);
  const Json x = {{"field", "value"}, {"type", "quantitative"}, {"title", axis}};
  return {
      {"title", i18n::tr(metric.label.c_str())},
      {"width", 150},
      {"height", {{"step", 18}}},
      {"transform", Json::array({{{"filter", {{"field", "metric"}, {"equal", metric.name}}}}})},
      {"encoding", {{"y", gpu_axis(names)}, {"x", x}}},
      {"layer",
       Json::array({{{"mark", {{"type", "bar"}, {"cornerRadiusEnd", 2}}},
                     {"encoding",
                      {{"color", gpu_color(names)},
                       {"tooltip",
                        Json::array({field("gpu", "nominal", "GPU"), field("value", "quantitative", axis, format)})}}}},
                    {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 3}, {"fontSize", 10}}},
                     {"encoding", {{"text", {{"field", "value"}, {"type", "quantitative"}, {"format", format}}}}}}})}};
}

Chart specs_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<std::string>& names,
                  const std::string& selection) {
  static const char* const kMetrics[] = {"cuda_cores", "memory_gb", "memory_bandwidth_gbs",
                                         "tdp_w",      "msrp_usd",  "fp32_tflops"};
  Json values = Json::array();
  Json panels = Json::array();
  for (const char* name : kMetrics) {
    const catalog::Metric metric = catalog::find_metric(name, "report");
    for (const catalog::Gpu* gpu : gpus) {
      if (auto value = metric.value(*gpu))
        values.push_back({{"gpu", gpu->name}, {"metric", metric.name}, {"value", *value}});
    }
    panels.push_back(metric_panel(metric, names));
  }
  Json s = spec(i18n::trf("Specifications side by side: {}", selection),
                i18n::tr("From the catalog; a missing bar means the figure is not published. Price: launch MSRP."));
  s["data"] = {{"values", values}};
  s["concat"] = panels;
  s["columns"] = 3;
  s["config"]["legend"]["orient"] = "bottom";
  s["config"]["legend"]["columns"] = 4;  // the bars' labels name the GPUs; the width goes to the panels
  s["spacing"] = {{"row", 30}, {"column", 50}};
  return {"gpu-specs", i18n::tr("Specifications side by side"), s};
}

// How the charts name a figure's kind (catalog::FigureStatus; modelled: estimate/gpu_rates.hpp).
constexpr const char* kDerivedFigure = i18n::N_("derived (AI TOPS x whitepaper ratio)");
constexpr const char* kModelledFigure = i18n::N_("modelled (sibling's rate per SM per MHz)");
constexpr const char* kPublishedFigure = i18n::N_("published");

Chart tensor_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<std::string>& names) {
  static const char* const kPrecisions[] = {"tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops"};
  Json values = Json::array();
  std::vector<std::string> labels;
  for (const char* name : kPrecisions) {
    const catalog::Metric metric = catalog::find_metric(name, "report");
    labels.push_back(i18n::tr(metric.label.c_str()));
    for (const catalog::Gpu* gpu : gpus) {
      if (auto value = metric.value(*gpu)) {
        const bool derived = metric.status(*gpu) == catalog::FigureStatus::derived;
        values.push_back({{"gpu", gpu->name},
                          {"precision", i18n::tr(metric.label.c_str())},
                          {"tflops", *value},
                          {"figure", i18n::tr(derived ? kDerivedFigure : kPublishedFigure)}});
      }
    }
  }
  Json s =
      spec(i18n::tr("Tensor-core throughput by precision"),
           i18n::tr("Dense TFLOPS (no sparsity), FP32 accumulate where the card offers both; no bar: not supported "
                    "or not published. Pale bars: derived from NVIDIA's AI TOPS by the architecture's ratio."));
  s["data"] = {{"values", values}};
  s["width"] = std::max<std::size_t>(420, 110 * gpus.size());
  s["height"] = 300;
  s["mark"] = {{"type", "bar"}};
  s["encoding"] = {
      {"x",
       {{"field", "gpu"},
        {"type", "nominal"},
        {"sort", names},
        {"title", "GPU"},
        {"axis", {{"labelAngle", -30}}},
        {"scale", {{"domain", names}}}}},  // every card has its slot, bars or not
      {"xOffset", {{"field", "precision"}, {"type", "nominal"}, {"sort", labels}}},
      {"y", field("tflops", "quantitative", i18n::tr("Dense tensor throughput (TFLOPS)"))},
      {"color",
       {{"field", "precision"},
        {"type", "nominal"},
        {"title", i18n::tr("Precision")},
        {"sort", labels},
        {"scale", {{"domain", labels}, {"scheme", "viridis"}}}}},
      {"opacity",
       {{"field", "figure"},
        {"type", "nominal"},
        {"title", i18n::tr("Figure")},
        {"scale",
         {{"domain", Json::array({i18n::tr(kPublishedFigure), i18n::tr(kDerivedFigure)})}, {"range", {1.0, 0.45}}}}}},
      {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("precision", "nominal", i18n::tr("Precision")),
                               field("tflops", "quantitative", "TFLOPS", ",.1f"),
                               field("figure", "nominal", i18n::tr("Figure"))})}};
  return {"gpu-tensor", i18n::tr("Tensor-core throughput by precision"), s};
}

// A card whose spec sheet has no FP16 tensor figure has one derived from its AI TOPS (a square) or, failing
// that, the planner's modelled one (its sibling's rate per SM per clock, estimate/gpu_rates.hpp, a diamond).
Chart value_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<catalog::Gpu>& with_rates,
                  const std::vector<std::string>& names) {
  Json values = Json::array();
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const catalog::Gpu* listed = gpus[i];
    const bool published = listed->fp16_tflops.has_value();
    const bool derived = listed->derivation("fp16_tflops") != nullptr;
    const catalog::Gpu& gpu = published || i >= with_rates.size() ? *listed : with_rates[i];
    const auto per_usd = catalog::derive(gpu).fp16_tflops_per_usd;
    if (!per_usd) continue;
    values.push_back({{"gpu", gpu.name},
                      {"vram_gb", gpu.memory_gb},
                      {"tflops_per_kusd", *per_usd * 1000},
                      {"fp16_tflops", gpu.fp16_tflops.value_or(0)},
                      {"msrp_usd", gpu.msrp_usd.value_or(0)},
                      {"figure", i18n::tr(derived     ? kDerivedFigure
                                          : published ? kPublishedFigure
                                                      : kModelledFigure)}});
  }
  Json s =
      spec(i18n::tr("Price-performance: FP16 tensor TFLOPS per $1,000 against VRAM"),
           i18n::tr("Up and to the right: more compute per dollar and more memory. Squares: FP16 derived from "
                    "NVIDIA's AI TOPS; diamonds: the planner's modelled one. Cards without a launch price are left "
                    "out."));
  s["data"] = {{"values", values}};
  s["width"] = 640;
  s["height"] = 360;
  const Json x = {{"field", "vram_gb"}, {"type", "quantitative"}, {"title", i18n::tr("VRAM (GB)")}};
  const Json y = {{"field", "tflops_per_kusd"},
                  {"type", "quantitative"},
                  {"scale", {{"zero", false}, {"padding", 20}}},
                  {"title", i18n::tr("FP16 tensor TFLOPS per $1,000 of launch price (TFLOPS/k$)")}};
  s["encoding"] = {{"x", x}, {"y", y}};
  const Json figures = Json::array({i18n::tr(kPublishedFigure), i18n::tr(kDerivedFigure), i18n::tr(kModelledFigure)});
  s["layer"] = Json::array(
      {{{"mark", {{"type", "point"}, {"size", 150}, {"filled", true}}},
        {"encoding",
         {{"color", gpu_color(names)},
          {"shape",
           {{"field", "figure"},
            {"type", "nominal"},
            {"title", i18n::tr("FP16 rate")},
            {"scale", {{"domain", figures}, {"range", {"circle", "square", "diamond"}}}}}},
          {"tooltip",
           Json::array({field("gpu", "nominal", "GPU"), field("vram_gb", "quantitative", i18n::tr("VRAM (GB)"), ",.0f"),
                        field("fp16_tflops", "quantitative", i18n::tr("FP16 tensor (TFLOPS)"), ",.1f"),
                        field("msrp_usd", "quantitative", i18n::tr("Launch price (USD)"), "$,.0f"),
                        field("tflops_per_kusd", "quantitative", i18n::tr("TFLOPS per $1,000"), ",.1f"),
                        field("figure", "nominal", i18n::tr("FP16 rate"))})}}}},
       {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 9}, {"fontSize", 11}}},
        {"encoding", {{"text", {{"field", "gpu"}, {"type", "nominal"}}}}}}});
  return {"gpu-value", i18n::tr("Price-performance"), s};
}

}  // namespace

std::vector<PageSource> catalog_sources(const std::vector<const catalog::Gpu*>& gpus) {
  std::vector<PageSource> sources;
  std::map<std::string, std::size_t> index;  // url -> position in `sources`
  for (const catalog::Gpu* gpu : gpus) {
    for (const auto& source : gpu->sources) {
      auto [it, added] = index.try_emplace(source.url, sources.size());
      if (added) sources.push_back({source.title, source.url, ""});
      std::string& note = sources[it->second].note;
      if (note.find(gpu->name) == std::string::npos) note += (note.empty() ? "" : ", ") + gpu->name;
    }
  }
  return sources;
}

Section gpu_comparison_section(const std::vector<const catalog::Gpu*>& gpus,
                               const std::vector<catalog::Gpu>& with_rates, const std::string& selection,
                               const std::string& catalog_origin, Table table) {
  const std::vector<std::string> names = names_of(gpus);
  Section section;
  section.id = "gpus";
  section.title = i18n::tr("Which GPU? The cards side by side");
  section.paragraphs.push_back(
      i18n::trf("{} from the gpusage catalog ({}). Every figure carries a source, listed at the foot of the page.",
                selection, catalog_origin));
  section.items.push_back(specs_chart(gpus, names, selection));
  section.items.push_back(tensor_chart(gpus, names));
  section.items.push_back(
      PageTable{"gpu-table", i18n::tr("The comparison table (as `gpusage gpus` prints it)"), std::move(table)});
  section.items.push_back(value_chart(gpus, with_rates, names));
  std::string unpriced;
  for (const catalog::Gpu* gpu : gpus) {
    if (!gpu->msrp_usd) unpriced += (unpriced.empty() ? "" : ", ") + gpu->name;
  }
  if (!unpriced.empty())
    section.notes.push_back(i18n::tr("Not in the price-performance chart (no launch price): ") + unpriced + ".");
  return section;
}

}  // namespace gpusage::report
