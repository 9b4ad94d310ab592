#include "report/report_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/catalog/fields.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "gpusage/build_info.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"

namespace gpusage::report {

namespace {

using Json = nlohmann::json;

constexpr const char* kSchema = "https://vega.github.io/schema/vega-lite/v6.json";
using units::kGiB;
// More points than this per GPU and line make a page slow to draw; longer logs are thinned evenly.
constexpr std::size_t kMaxPointsPerGpu = 1500;

Json chart_config() {
  return {{"font", "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"},
          {"view", {{"stroke", nullptr}}},
          {"axis", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"titleFontWeight", "normal"}, {"titleColor", "#333"}}},
          {"legend", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"labelLimit", 260}}},
          {"header", {{"labelFontSize", 12}, {"titleFontSize", 12}}},
          {"title", {{"anchor", "start"}, {"fontSize", 15}, {"subtitleFontSize", 12}, {"subtitleColor", "#5b6472"}}}};
}

// A spec with the page's look: title (and a subtitle line), the schema, the shared config.
Json spec(const std::string& title, const std::string& subtitle) {
  Json t = {{"text", title}};
  if (!subtitle.empty()) t["subtitle"] = subtitle;
  return {{"$schema", kSchema}, {"title", t}, {"config", chart_config()}};
}

std::string with_unit(const std::string& label, const std::string& unit) {
  return unit.empty() ? label : fmt::format("{} ({})", label, unit);
}

// d3-format for `decimals` places with thousands separators.
std::string number_format(int decimals) { return fmt::format(",.{}f", decimals); }

Json field(const std::string& name, const char* type, const std::string& title, const std::string& format = "") {
  Json f = {{"field", name}, {"type", type}, {"title", title}};
  if (!format.empty()) f["format"] = format;
  return f;
}

// One colour per GPU, the same in every chart of the page.
Json gpu_color(const std::vector<std::string>& names, const std::string& title = "GPU") {
  return {{"field", "gpu"},
          {"type", "nominal"},
          {"title", title},
          {"sort", names},
          {"scale", {{"domain", names}, {"scheme", names.size() > 10 ? "category20" : "tableau10"}}}};
}

Json gpu_axis(const std::vector<std::string>& names) {
  return {{"field", "gpu"}, {"type", "nominal"}, {"sort", names}, {"title", nullptr}};
}

std::vector<std::string> names_of(const std::vector<const catalog::Gpu*>& gpus) {
  std::vector<std::string> names;
  for (const catalog::Gpu* gpu : gpus) names.push_back(gpu->name);
  return names;
}

// ---- GPU comparison -----------------------------------------------------------------------------------

// One horizontal bar per GPU for one catalog metric, its value printed at the end of the bar.
Json metric_panel(const catalog::Metric& metric, const std::vector<std::string>& names) {
  const std::string axis = with_unit(metric.label, metric.unit.empty() ? "count" : metric.unit);
  const std::string format = number_format(metric.decimals);
  const Json x = {{"field", "value"}, {"type", "quantitative"}, {"title", axis}};
  return {{"title", metric.label},
          {"width", 150},
          {"height", {{"step", 18}}},
          {"transform", Json::array({{{"filter", {{"field", "metric"}, {"equal", metric.name}}}}})},
          {"encoding", {{"y", gpu_axis(names)}, {"x", x}}},
          {"layer",
           Json::array({{{"mark", {{"type", "bar"}, {"cornerRadiusEnd", 2}}},
                         {"encoding",
                          {{"color", gpu_color(names)},
                           {"tooltip", Json::array({field("gpu", "nominal", "GPU"),
                                                    field("value", "quantitative", axis, format)})}}}},
                        {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 3}, {"fontSize", 10}}},
                         {"encoding", {{"text", {{"field", "value"}, {"type", "quantitative"}, {"format", format}}}}}}})}};
}

Chart specs_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<std::string>& names,
                  const std::string& selection) {
  static const char* const kMetrics[] = {"cuda_cores", "memory_gb", "memory_bandwidth_gbs", "tdp_w", "msrp_usd",
                                         "fp32_tflops"};
  Json values = Json::array();
  Json panels = Json::array();
  for (const char* name : kMetrics) {
    const catalog::Metric metric = catalog::find_metric(name, "report");
    for (const catalog::Gpu* gpu : gpus) {
      if (auto value = metric.value(*gpu)) values.push_back({{"gpu", gpu->name}, {"metric", metric.name}, {"value", *value}});
    }
    panels.push_back(metric_panel(metric, names));
  }
  Json s = spec(fmt::format("Specifications side by side: {}", selection),
                "From the catalog; a missing bar means the figure is not published. Price: launch MSRP.");
  s["data"] = {{"values", values}};
  s["concat"] = panels;
  s["columns"] = 3;
  s["config"]["legend"]["orient"] = "bottom";
  s["config"]["legend"]["columns"] = 4;  // the bars' labels name the GPUs; the width goes to the panels
  s["spacing"] = {{"row", 30}, {"column", 50}};
  return {"gpu-specs", "Specifications side by side", s};
}

// How the charts name a figure's kind (catalog::FigureStatus; modelled: estimate/gpu_rates.hpp).
constexpr const char* kDerivedFigure = "derived (AI TOPS x whitepaper ratio)";
constexpr const char* kModelledFigure = "modelled (sibling's rate per SM per MHz)";

Chart tensor_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<std::string>& names) {
  static const char* const kPrecisions[] = {"tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops"};
  Json values = Json::array();
  std::vector<std::string> labels;
  for (const char* name : kPrecisions) {
    const catalog::Metric metric = catalog::find_metric(name, "report");
    labels.push_back(metric.label);
    for (const catalog::Gpu* gpu : gpus) {
      if (auto value = metric.value(*gpu)) {
        const bool derived = metric.status(*gpu) == catalog::FigureStatus::derived;
        values.push_back({{"gpu", gpu->name}, {"precision", metric.label}, {"tflops", *value},
                          {"figure", derived ? kDerivedFigure : "published"}});
      }
    }
  }
  Json s = spec("Tensor-core throughput by precision",
                "Dense TFLOPS (no sparsity), FP32 accumulate where the card offers both; no bar: not supported or "
                "not published. Pale bars: derived from NVIDIA's AI TOPS by the architecture's ratio.");
  s["data"] = {{"values", values}};
  s["width"] = std::max<std::size_t>(420, 110 * gpus.size());
  s["height"] = 300;
  s["mark"] = {{"type", "bar"}};
  s["encoding"] = {
      {"x", {{"field", "gpu"}, {"type", "nominal"}, {"sort", names}, {"title", "GPU"}, {"axis", {{"labelAngle", -30}}},
             {"scale", {{"domain", names}}}}},  // every card has its slot, bars or not
      {"xOffset", {{"field", "precision"}, {"type", "nominal"}, {"sort", labels}}},
      {"y", field("tflops", "quantitative", "Dense tensor throughput (TFLOPS)")},
      {"color", {{"field", "precision"}, {"type", "nominal"}, {"title", "Precision"}, {"sort", labels},
                 {"scale", {{"domain", labels}, {"scheme", "viridis"}}}}},
      {"opacity", {{"field", "figure"}, {"type", "nominal"}, {"title", "Figure"},
                   {"scale", {{"domain", Json::array({"published", kDerivedFigure})}, {"range", {1.0, 0.45}}}}}},
      {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("precision", "nominal", "Precision"),
                               field("tflops", "quantitative", "TFLOPS", ",.1f"), field("figure", "nominal", "Figure")})}};
  return {"gpu-tensor", "Tensor-core throughput by precision", s};
}

// A card whose spec sheet has no FP16 tensor figure has one derived from its AI TOPS (a square) or, failing
// that, the planner's modelled one (its sibling's rate per SM per clock, estimate/gpu_rates.hpp, a diamond).
Chart value_chart(const std::vector<const catalog::Gpu*>& gpus, const std::vector<std::string>& names,
                  const catalog::Catalog& catalog) {
  Json values = Json::array();
  for (const catalog::Gpu* listed : gpus) {
    const bool published = listed->fp16_tflops.has_value();
    const bool derived = listed->derivation("fp16_tflops") != nullptr;
    const catalog::Gpu gpu = published ? *listed : estimate::complete_tensor_rates(*listed, catalog).gpu;
    const auto per_usd = catalog::derive(gpu).fp16_tflops_per_usd;
    if (!per_usd) continue;
    values.push_back({{"gpu", gpu.name},
                      {"vram_gb", gpu.memory_gb},
                      {"tflops_per_kusd", *per_usd * 1000},
                      {"fp16_tflops", gpu.fp16_tflops.value_or(0)},
                      {"msrp_usd", gpu.msrp_usd.value_or(0)},
                      {"figure", derived ? kDerivedFigure : published ? "published" : kModelledFigure}});
  }
  Json s = spec("Price-performance: FP16 tensor TFLOPS per $1,000 against VRAM",
                "Up and to the right: more compute per dollar and more memory. Squares: FP16 derived from NVIDIA's "
                "AI TOPS; diamonds: the planner's modelled one. Cards without a launch price are left out.");
  s["data"] = {{"values", values}};
  s["width"] = 640;
  s["height"] = 360;
  const Json x = {{"field", "vram_gb"}, {"type", "quantitative"}, {"title", "VRAM (GB)"}};
  const Json y = {{"field", "tflops_per_kusd"}, {"type", "quantitative"}, {"scale", {{"zero", false}, {"padding", 20}}},
                  {"title", "FP16 tensor TFLOPS per $1,000 of launch price (TFLOPS/k$)"}};
  s["encoding"] = {{"x", x}, {"y", y}};
  const Json figures = Json::array({"published", kDerivedFigure, kModelledFigure});
  s["layer"] = Json::array(
      {{{"mark", {{"type", "point"}, {"size", 150}, {"filled", true}}},
        {"encoding",
         {{"color", gpu_color(names)},
          {"shape", {{"field", "figure"}, {"type", "nominal"}, {"title", "FP16 rate"},
                     {"scale", {{"domain", figures}, {"range", {"circle", "square", "diamond"}}}}}},
          {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("vram_gb", "quantitative", "VRAM (GB)", ",.0f"),
                                   field("fp16_tflops", "quantitative", "FP16 tensor (TFLOPS)", ",.1f"),
                                   field("msrp_usd", "quantitative", "Launch price (USD)", "$,.0f"),
                                   field("tflops_per_kusd", "quantitative", "TFLOPS per $1,000", ",.1f"),
                                   field("figure", "nominal", "FP16 rate")})}}}},
       {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 9}, {"fontSize", 11}}},
        {"encoding", {{"text", {{"field", "gpu"}, {"type", "nominal"}}}}}}});
  return {"gpu-value", "Price-performance", s};
}

// ---- training estimate --------------------------------------------------------------------------------

// The GPUs of a plan, in its order.
std::vector<std::string> gpu_names(const std::vector<estimate::Prediction>& predictions) {
  std::vector<std::string> names;
  for (const auto& p : predictions) {
    if (std::find(names.begin(), names.end(), p.gpu->name) == names.end()) names.push_back(p.gpu->name);
  }
  return names;
}

Json batch_axis(const std::vector<int>& batches) {
  Json values = Json::array();
  for (int b : batches) values.push_back(b);
  Json scale = {{"type", "log"}, {"base", 2}};
  // The whole sweep, also when only one batch fits anywhere (the axis would collapse onto that point).
  if (batches.size() > 1) scale["domain"] = {batches.front(), batches.back()};
  return {{"field", "batch"},
          {"type", "quantitative"},
          {"title", "Batch size per GPU (samples; log scale)"},
          {"scale", scale},
          {"axis", {{"values", values}, {"format", "d"}}}};
}

// The fastest configuration that fits, per GPU, in the page's GPU order.
std::vector<const estimate::Prediction*> fastest_fitting(const std::vector<estimate::Prediction>& predictions,
                                                         const std::vector<std::string>& names) {
  std::map<std::string, const estimate::Prediction*> best;
  for (const auto& p : predictions) {
    if (!p.fits) continue;
    auto& b = best[p.gpu->name];
    if (!b || p.throughput > b->throughput) b = &p;
  }
  std::vector<const estimate::Prediction*> out;
  for (const auto& name : names) {
    if (best.count(name)) out.push_back(best[name]);
  }
  return out;
}

Chart throughput_chart(const workload::Workload& w, const std::vector<estimate::Prediction>& predictions,
                       const std::vector<std::string>& names, const std::vector<int>& batches,
                       const std::string& precision) {
  const std::string unit = w.throughput_unit();
  Json values = Json::array();
  for (const auto& p : predictions) {
    if (!p.fits) continue;  // a card that runs out has no speed at that batch
    values.push_back({{"gpu", p.gpu->name},
                      {"batch", p.config.batch_per_gpu},
                      {"throughput", p.throughput},
                      {"throughput_low", p.throughput_low},
                      {"throughput_high", p.throughput_high},
                      {"step_ms", p.time.step_s * 1e3},
                      {"memory_gib", p.memory.total_bytes() / kGiB},
                      {"bound", estimate::to_string(p.time.bound)}});
  }
  Json s = spec(fmt::format("Predicted {} training throughput against batch size ({})", w.display_name, precision),
                "gpusage plan's model, per GPU. A line ends where the batch no longer fits in the card's VRAM.");
  s["data"] = {{"values", values}};
  s["width"] = 720;
  s["height"] = 360;
  s["mark"] = {{"type", "line"}, {"point", true}};
  s["encoding"] = {
      {"x", batch_axis(batches)},
      {"y", field("throughput", "quantitative", fmt::format("Predicted throughput ({} per GPU)", unit))},
      {"color", gpu_color(names)},
      {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", "Batch size"),
                               field("throughput", "quantitative", fmt::format("Throughput ({})", unit), ",.0f"),
                               field("throughput_low", "quantitative", "80% range from", ",.0f"),
                               field("throughput_high", "quantitative", "80% range to", ",.0f"),
                               field("step_ms", "quantitative", "Step time (ms)", ",.1f"),
                               field("memory_gib", "quantitative", "Peak memory (GiB)", ",.1f"),
                               field("bound", "nominal", "Bound by")})}};
  return {"train-throughput", "Predicted throughput against batch size", s};
}

Chart memory_chart(const workload::Workload& w, const std::vector<estimate::Prediction>& predictions,
                   const std::vector<std::string>& names, const std::vector<int>& batches) {
  Json values = Json::array();
  std::map<std::string, double> vram_gib;  // per GPU: the catalog's memory_gb, which is GiB (data/README)
  for (const auto& p : predictions) {
    values.push_back({{"gpu", p.gpu->name},
                      {"batch", p.config.batch_per_gpu},
                      {"memory_gib", p.memory.total_bytes() / kGiB},
                      {"fits", p.fits ? "fits" : "out of memory"}});
    vram_gib[p.gpu->name] = p.gpu->memory_gb;
  }
  Json rules = Json::array();
  std::map<double, std::vector<std::string>> by_capacity;
  for (const auto& name : names) {
    if (!vram_gib.count(name)) continue;
    rules.push_back({{"gpu", name}, {"vram_gib", vram_gib[name]}});
    by_capacity[vram_gib[name]].push_back(name);
  }
  Json labels = Json::array();
  for (const auto& [capacity, cards] : by_capacity) {
    std::string list;
    for (const auto& card : cards) list += (list.empty() ? "" : ", ") + card;
    labels.push_back({{"vram_gib", capacity}, {"label", fmt::format("{:g} GiB: {}", capacity, list)}});
  }
  const Json x = batch_axis(batches);
  const Json y = field("memory_gib", "quantitative", "Predicted peak memory per GPU (GiB)");
  Json s = spec(fmt::format("Predicted {} training memory against batch size, with each card's VRAM", w.display_name),
                "Dashed lines: VRAM from the catalog. Where a memory line crosses a card's dashed line, that card "
                "runs out. Lines coincide where a card does not change the memory the model needs.");
  s["width"] = 720;
  s["height"] = 380;
  s["data"] = {{"values", values}};  // the memory lines and points; rules and labels bring their own
  s["layer"] = Json::array(
      {{{"mark", {{"type", "line"}}},
        {"encoding", {{"x", x}, {"y", y}, {"color", gpu_color(names)}}}},
       {{"mark", {{"type", "point"}, {"filled", true}, {"size", 50}}},
        {"encoding",
         {{"x", x},
          {"y", y},
          {"color", gpu_color(names)},
          {"shape", {{"field", "fits"}, {"type", "nominal"}, {"title", "In VRAM"},
                     {"scale", {{"domain", {"fits", "out of memory"}}, {"range", {"circle", "cross"}}}}}},
          {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", "Batch size"),
                                   field("memory_gib", "quantitative", "Peak memory (GiB)", ",.2f"),
                                   field("fits", "nominal", "In VRAM")})}}}},
       {{"data", {{"values", rules}}},
        {"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"strokeWidth", 1.5}}},
        {"encoding",
         {{"y", field("vram_gib", "quantitative", y["title"])},
          {"color", gpu_color(names)},
          {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("vram_gib", "quantitative", "VRAM (GiB)")})}}}},
       {{"data", {{"values", labels}}},
        {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"dy", -6}, {"fontSize", 10}, {"color", "#444"}}},
        {"encoding",
         {{"x", {{"datum", batches.empty() ? 1 : batches.front()}, {"type", "quantitative"}}},
          {"y", field("vram_gib", "quantitative", y["title"])},
          {"text", {{"field", "label"}, {"type", "nominal"}}}}}}});
  return {"train-memory", "Predicted memory against batch size", s};
}

Chart epoch_chart(const workload::Workload& w, const std::vector<const estimate::Prediction*>& best,
                  const std::vector<std::string>& names) {
  Json values = Json::array();
  double dataset = 0;
  for (const auto* p : best) {
    if (!p->epoch_time_s || !p->energy_wh_per_epoch) continue;
    dataset = p->config.dataset_size > 0 ? p->config.dataset_size : estimate::default_dataset_size(w);
    values.push_back({{"gpu", p->gpu->name},
                      {"batch", p->config.batch_per_gpu},
                      {"throughput", p->throughput},
                      {"epoch_h", *p->epoch_time_s / 3600},
                      {"energy_kwh", *p->energy_wh_per_epoch / 1000}});
  }
  const std::string unit = w.throughput_unit();
  const Json tooltip = Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", "Batch size"),
                                    field("throughput", "quantitative", fmt::format("Throughput ({})", unit), ",.0f"),
                                    field("epoch_h", "quantitative", "Epoch time (h)", ",.2f"),
                                    field("energy_kwh", "quantitative", "Energy (kWh per epoch)", ",.2f")});
  auto panel = [&](const char* value, const std::string& title, const std::string& axis) {
    return Json{{"title", title},
                {"width", 260},
                {"height", {{"step", 18}}},
                {"mark", {{"type", "bar"}, {"cornerRadiusEnd", 2}}},
                {"encoding",
                 {{"y", gpu_axis(names)},
                  {"x", field(value, "quantitative", axis)},
                  {"color", gpu_color(names)},
                  {"tooltip", tooltip}}}};
  };
  Json s = spec(fmt::format("One epoch of {} per card, at its fastest batch that fits", w.display_name),
                fmt::format("{} samples per epoch; energy at TDP for the whole epoch (an upper bound: TDP is a "
                            "specification, not a measurement).",
                            format_number(dataset)));
  s["data"] = {{"values", values}};
  s["hconcat"] = Json::array({panel("epoch_h", "Epoch time", "Time per epoch (hours)"),
                              panel("energy_kwh", "Energy", "Energy per epoch (kWh)")});
  s["spacing"] = 60;
  return {"train-epoch", "Epoch time and energy per card", s};
}

Table training_table(const workload::Workload& w, const std::vector<const estimate::Prediction*>& best) {
  Table table;
  const std::string unit = w.throughput_unit();
  table.columns = {{"GPU", "", Align::left},       {"VRAM", "GiB"},        {"max batch", "samples"},
                   {"fastest batch", "samples"},   {"throughput", unit},   {"80% range", unit},
                   {"step", "ms"},
                   {"memory", "GiB"},              {"epoch", "h"},         {"energy", "kWh/epoch"},
                   {"per $1000", unit},            {"bound", "", Align::left}};
  for (const auto* p : best) {
    table.add_row({p->gpu->name, format_number(p->gpu->memory_gb), format_number(p->max_batch),
                   format_number(p->config.batch_per_gpu), format_number(p->throughput),
                   format_number(p->throughput_low) + "-" + format_number(p->throughput_high),
                   format_number(p->time.step_s * 1e3, 1), format_number(p->memory.total_bytes() / kGiB, 1),
                   p->epoch_time_s ? format_number(*p->epoch_time_s / 3600, 2) : "n/a",
                   p->energy_wh_per_epoch ? format_number(*p->energy_wh_per_epoch / 1000, 2) : "n/a",
                   p->gpu->msrp_usd ? format_number(p->throughput / *p->gpu->msrp_usd * 1000) : "n/a",
                   estimate::to_string(p->time.bound)});
  }
  table.notes.push_back("Each card at the fastest batch of the sweep that fits its VRAM; max batch: the largest that "
                        "fits at all. 80% range: where 80% of published runs fell that the model was not fitted on "
                        "(gpusage validate --cv gpu). Click a header to sort.");
  return table;
}

// ---- monitor ------------------------------------------------------------------------------------------

std::string gpu_label(const device::GpuSample& gpu) {
  return gpu.name.empty() ? fmt::format("GPU {}", gpu.index) : fmt::format("GPU {}: {}", gpu.index, gpu.name);
}

}  // namespace

Page new_page(std::string title, std::string subtitle, std::string command_line) {
  Page page;
  page.title = std::move(title);
  page.subtitle = std::move(subtitle);
  page.command_line = std::move(command_line);
  page.generator = fmt::format("gpusage {} (commit {}, {} build)", build_info::version, build_info::commit,
                               build_info::build_type);
  page.generated_utc = wallclock::iso_utc(wallclock::unix_now_s(), false);
  return page;
}

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

Section gpu_comparison_section(const std::vector<const catalog::Gpu*>& gpus, const std::string& selection,
                               const catalog::Catalog& catalog, Table table) {
  const std::string& catalog_origin = catalog.origin();
  const std::vector<std::string> names = names_of(gpus);
  Section section;
  section.id = "gpus";
  section.title = "Which GPU? The cards side by side";
  section.paragraphs.push_back(fmt::format(
      "{} from the gpusage catalog ({}). Every figure carries a source, listed at the foot of the page.", selection,
      catalog_origin));
  section.items.push_back(specs_chart(gpus, names, selection));
  section.items.push_back(tensor_chart(gpus, names));
  section.items.push_back(PageTable{"gpu-table", "The comparison table (as `gpusage gpus` prints it)", std::move(table)});
  section.items.push_back(value_chart(gpus, names, catalog));
  std::string unpriced;
  for (const catalog::Gpu* gpu : gpus) {
    if (!gpu->msrp_usd) unpriced += (unpriced.empty() ? "" : ", ") + gpu->name;
  }
  if (!unpriced.empty()) section.notes.push_back("Not in the price-performance chart (no launch price): " + unpriced + ".");
  return section;
}

Section training_section(const workload::Workload& workload, const std::vector<estimate::Prediction>& predictions,
                         const std::vector<std::string>& notes) {
  const std::vector<std::string> names = gpu_names(predictions);
  std::set<int> batch_set;
  for (const auto& p : predictions) batch_set.insert(p.config.batch_per_gpu);
  const std::vector<int> batches(batch_set.begin(), batch_set.end());
  const std::string precision =
      predictions.empty() ? "" : catalog::to_string(predictions.front().config.precision);
  const std::vector<const estimate::Prediction*> best = fastest_fitting(predictions, names);

  Section section;
  section.id = "training";
  section.title = fmt::format("Will it fit, and how fast? {} training, predicted", workload.display_name);
  section.paragraphs.push_back(fmt::format(
      "{}: {:.1f} M parameters, {:.2f} GFLOPs forward per sample{}; {} training with {} on one GPU, "
      "predicted by gpusage plan (memory model and roofline step time, docs/MODEL.md).",
      workload.display_name, workload.params() / 1e6, workload.forward_flops() / 1e9,
      workload.domain == workload::Domain::vision ? fmt::format(" at {} px", workload.resolution)
                                                  : fmt::format(" at {} tokens", workload.seq_len),
      precision, predictions.empty() ? "" : estimate::to_string(predictions.front().config.optimizer)));
  section.items.push_back(throughput_chart(workload, predictions, names, batches, precision));
  section.items.push_back(memory_chart(workload, predictions, names, batches));
  if (!best.empty() && best.front()->epoch_time_s) {
    section.items.push_back(epoch_chart(workload, best, names));
  } else {
    section.notes.push_back("No epoch time or energy: give --dataset-size (samples per epoch) for language models.");
  }
  section.items.push_back(PageTable{"train-table", "Each card at its fastest fitting batch", training_table(workload, best)});
  for (const auto& name : names) {
    if (std::none_of(best.begin(), best.end(), [&](const auto* p) { return p->gpu->name == name; })) {
      section.notes.push_back(fmt::format("{}: none of the batch sizes fits in its VRAM.", name));
    }
  }
  for (const auto& note : notes) section.notes.push_back(note);
  return section;
}

Section bench_section(const std::vector<BenchComparison>& comparisons) {
  Section section;
  section.id = "bench";
  section.title = "Measured against predicted";
  section.paragraphs.push_back(
      "Training throughput measured by gpusage bench, next to what gpusage plan predicts for the same GPU, model, "
      "precision and batch size. Error = (measured - predicted) / predicted.");
  Json values = Json::array();
  std::vector<std::string> runs;
  Table table;
  table.columns = {{"run", "", Align::left},  {"file", "", Align::left}, {"batch", "samples"}, {"measured", "samples/s"},
                   {"predicted", "samples/s"}, {"error", "%"},          {"status", "", Align::left}};
  for (const auto& c : comparisons) {
    runs.push_back(c.label);
    for (const auto& point : c.points) {
      std::optional<double> error;
      if (point.measured && point.predicted && *point.predicted > 0) {
        error = (*point.measured - *point.predicted) / *point.predicted * 100;
      }
      if (point.measured) {
        Json row = {{"run", c.label}, {"batch", point.batch}, {"series", "measured"}, {"throughput", *point.measured},
                    {"unit", c.unit}};
        row["error_pct"] = error ? Json(*error) : Json(nullptr);
        row["error_label"] = error ? Json(fmt::format("{:+.0f}%", *error)) : Json(nullptr);
        values.push_back(row);
      }
      if (point.predicted) {
        values.push_back({{"run", c.label}, {"batch", point.batch}, {"series", "predicted"},
                          {"throughput", *point.predicted}, {"unit", c.unit}, {"error_pct", nullptr},
                          {"error_label", nullptr}});
      }
      table.add_row({c.label, c.origin, format_number(point.batch), format_optional(point.measured, 1),
                     format_optional(point.predicted, 1), format_optional(error, 1), point.status});
    }
    if (!c.note.empty()) section.notes.push_back(fmt::format("{} ({}): {}", c.label, c.origin, c.note));
  }
  const Json y = field("throughput", "quantitative", "Training throughput (samples/s)");
  const Json x = {{"field", "batch"}, {"type", "ordinal"}, {"title", "Batch size per GPU (samples)"}, {"axis", {{"labelAngle", 0}}}};
  const Json offset = {{"field", "series"}, {"type", "nominal"}, {"sort", {"measured", "predicted"}}};
  Json s = spec("Measured throughput against gpusage plan's prediction",
                "Bars: measured and predicted samples/s per GPU; the label on each measured bar is its error.");
  s["data"] = {{"values", values}};
  s["facet"] = {{"row", {{"field", "run"}, {"type", "nominal"}, {"sort", runs}, {"title", nullptr},
                         {"header", {{"labelAngle", 0}, {"labelOrient", "top"}, {"labelAnchor", "start"},
                                     {"labelFontWeight", "bold"}}}}}};
  s["spacing"] = 24;
  s["resolve"] = {{"scale", {{"y", "independent"}}}};
  s["spec"] = {
      {"width", 560},
      {"height", 220},
      {"encoding", {{"x", x}, {"xOffset", offset}, {"y", y}}},
      {"layer",
       Json::array({{{"mark", {{"type", "bar"}}},
                     {"encoding",
                      {{"color", {{"field", "series"}, {"type", "nominal"}, {"title", "Throughput"},
                                  {"scale", {{"domain", {"measured", "predicted"}}, {"range", {"#4c78a8", "#f58518"}}}}}},
                       {"tooltip", Json::array({field("run", "nominal", "Run"), field("batch", "ordinal", "Batch size"),
                                                field("series", "nominal", "Series"),
                                                field("throughput", "quantitative", "Samples/s", ",.1f"),
                                                field("unit", "nominal", "Unit"),
                                                field("error_pct", "quantitative", "Error (%)", "+.1f")})}}}},
                    {{"mark", {{"type", "text"}, {"dy", -6}, {"fontSize", 11}}},
                     {"transform", Json::array({{{"filter", "datum.error_label != null"}}})},
                     {"encoding", {{"text", {{"field", "error_label"}, {"type", "nominal"}}}}}}})}};
  section.items.push_back(Chart{"bench-vs-plan", "Measured against predicted", s});
  table.notes.push_back("n/a: the run failed (see status) or plan has no prediction for it.");
  section.items.push_back(PageTable{"bench-table", "Every measured batch size", std::move(table)});
  return section;
}

Section monitor_section(const MonitorLog& log, const std::vector<AlertMark>& alerts, const std::string& alerts_note) {
  // Per GPU, the samples to plot (every k-th when the log is long).
  std::map<unsigned, std::size_t> count;
  for (const auto& sample : log.samples) {
    for (const auto& gpu : sample.gpus) ++count[gpu.index];
  }
  std::size_t most = 0;
  for (const auto& [index, n] : count) most = std::max(most, n);
  const std::size_t stride = most > kMaxPointsPerGpu ? (most + kMaxPointsPerGpu - 1) / kMaxPointsPerGpu : 1;

  struct Series {
    const char* key;
    const char* title;
    const char* axis;
  };
  static const Series kSeries[] = {{"utilization", "GPU utilization", "Utilization (%)"},
                                   {"memory", "Memory used", "Memory used (GiB)"},
                                   {"power", "Power draw", "Power (W)"},
                                   {"temperature", "Temperature", "Temperature (°C)"}};
  Json values = Json::array();
  std::vector<std::string> names;
  std::map<unsigned, std::string> label_of;
  std::map<unsigned, std::size_t> seen;
  for (const auto& sample : log.samples) {
    const std::string time = wallclock::iso_utc(sample.unix_time_s);
    for (const auto& gpu : sample.gpus) {
      const std::string label = gpu_label(gpu);
      if (!label_of.count(gpu.index)) {
        label_of[gpu.index] = label;
        names.push_back(label);
      }
      if (seen[gpu.index]++ % stride != 0) continue;
      auto add = [&](const char* metric, std::optional<double> value) {
        if (value) values.push_back({{"time", time}, {"gpu", label}, {"metric", metric}, {"value", *value}});
      };
      add("utilization", gpu.utilization_gpu_percent ? std::optional<double>(*gpu.utilization_gpu_percent) : std::nullopt);
      add("memory", gpu.memory_used_bytes ? std::optional<double>(*gpu.memory_used_bytes / kGiB) : std::nullopt);
      add("power", gpu.power_w);
      add("temperature", gpu.temperature_c ? std::optional<double>(*gpu.temperature_c) : std::nullopt);
    }
  }
  Json marks = Json::array();
  std::vector<std::string> kinds;
  Table table;
  table.columns = {{"raised", "UTC", Align::left}, {"GPU", "", Align::left}, {"alert", "", Align::left},
                   {"severity", "", Align::left}, {"message", "", Align::left}};
  for (const auto& a : alerts) {
    const std::string gpu = label_of.count(a.gpu) ? label_of[a.gpu] : fmt::format("GPU {}", a.gpu);
    marks.push_back({{"time", wallclock::iso_utc(a.unix_time_s)}, {"gpu", gpu}, {"kind", a.kind}, {"severity", a.severity},
                     {"message", a.message}});
    if (std::find(kinds.begin(), kinds.end(), a.kind) == kinds.end()) kinds.push_back(a.kind);
    table.add_row({wallclock::iso_utc(a.unix_time_s), gpu, a.kind, a.severity, a.message});
  }
  const Json time_axis = {{"field", "time"},
                          {"type", "temporal"},
                          {"title", "Time (UTC)"},
                          {"scale", {{"type", "utc"}}},
                          {"axis", {{"labelAngle", 0}}}};
  Json panels = Json::array();
  for (const Series& series : kSeries) {
    Json line = {{"transform", Json::array({{{"filter", {{"field", "metric"}, {"equal", series.key}}}}})},
                 {"mark", {{"type", "line"}, {"interpolate", "step-after"}}},
                 {"encoding",
                  {{"x", time_axis},
                   {"y", field("value", "quantitative", series.axis)},
                   {"color", gpu_color(names)},
                   {"tooltip", Json::array({{{"field", "time"}, {"type", "temporal"}, {"title", "Time (UTC)"},
                                             {"format", "%Y-%m-%d %H:%M:%S.%L"}, {"formatType", "utc"}},
                                            field("gpu", "nominal", "GPU"),
                                            field("value", "quantitative", series.axis, ",.1f")})}}}};
    Json layer = Json::array({line});
    if (!marks.empty()) {
      layer.push_back({{"data", {{"values", marks}}},
                       {"mark", {{"type", "rule"}, {"color", "#d62728"}, {"strokeWidth", 2}}},
                       {"encoding",
                        {{"x", time_axis},
                         {"strokeDash", {{"field", "kind"}, {"type", "nominal"}, {"title", "Alert raised"},
                                         {"sort", kinds}}},
                         {"tooltip", Json::array({{{"field", "time"}, {"type", "temporal"}, {"title", "Raised (UTC)"},
                                                   {"format", "%Y-%m-%d %H:%M:%S.%L"}, {"formatType", "utc"}},
                                                  field("gpu", "nominal", "GPU"), field("kind", "nominal", "Alert"),
                                                  field("severity", "nominal", "Severity"),
                                                  field("message", "nominal", "Message")})}}}});
    }
    panels.push_back({{"title", series.title}, {"width", 900}, {"height", 140}, {"layer", layer}});
  }
  const double span_s = log.samples.back().unix_time_s - log.samples.front().unix_time_s;
  Json s = spec(fmt::format("GPU activity over time: {}", log.origin),
                fmt::format("{} samples over {}; red lines: alerts, at the moment each was raised.",
                            log.samples.size(), format_duration(span_s)));
  s["data"] = {{"values", values}};  // every panel's lines; the alert rules bring their own
  s["vconcat"] = panels;
  s["spacing"] = 18;
  s["resolve"] = {{"scale", {{"x", "shared"}}}};

  Section section;
  section.id = "monitor";
  section.title = "What the GPUs did: the monitor log";
  section.paragraphs.push_back(
      fmt::format("{} ({}, {} samples, {} GPUs): utilization, memory, power and temperature as gpusage monitor "
                  "recorded them.",
                  log.origin, log.json_lines ? "JSON Lines" : "CSV", log.samples.size(), names.size()));
  section.items.push_back(Chart{"monitor-timeline", "GPU activity over time", s});
  if (!alerts.empty()) section.items.push_back(PageTable{"monitor-alerts", "Alerts", std::move(table)});
  section.notes.push_back(alerts_note);
  if (alerts.empty()) section.notes.push_back("No alert was raised in this log.");
  if (stride > 1) {
    section.notes.push_back(fmt::format("Long log: every {}th sample is plotted ({} per GPU at most).", stride,
                                        kMaxPointsPerGpu));
  }
  return section;
}

}  // namespace gpusage::report
