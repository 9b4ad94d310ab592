// The page's training-estimate section: throughput and memory against batch, epoch and energy (plan predictions).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/common/i18n.hpp"
#include "report/sections.hpp"
#include "report/vega.hpp"

namespace gpusage::report {

using namespace vega;  // NOLINT: the helpers are this module's vocabulary

namespace {

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
          {"title", i18n::tr("Batch size per GPU (samples; log scale)")},
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
  Json s =
      spec(i18n::trf("Predicted {} training throughput against batch size ({})", w.display_name, precision),
           i18n::tr("gpusage plan's model, per GPU. A line ends where the batch no longer fits in the card's VRAM."));
  s["data"] = {{"values", values}};
  s["width"] = 720;
  s["height"] = 360;
  s["mark"] = {{"type", "line"}, {"point", true}};
  s["encoding"] = {
      {"x", batch_axis(batches)},
      {"y", field("throughput", "quantitative", i18n::trf("Predicted throughput ({} per GPU)", unit))},
      {"color", gpu_color(names)},
      {"tooltip", Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", i18n::tr("Batch size")),
                               field("throughput", "quantitative", i18n::trf("Throughput ({})", unit), ",.0f"),
                               field("throughput_low", "quantitative", "80% range from", ",.0f"),
                               field("throughput_high", "quantitative", "80% range to", ",.0f"),
                               field("step_ms", "quantitative", i18n::tr("Step time (ms)"), ",.1f"),
                               field("memory_gib", "quantitative", i18n::tr("Peak memory (GiB)"), ",.1f"),
                               field("bound", "nominal", i18n::tr("Bound by"))})}};
  return {"train-throughput", i18n::tr("Predicted throughput against batch size"), s};
}

Chart memory_chart(const workload::Workload& w, const std::vector<estimate::Prediction>& predictions,
                   const std::vector<std::string>& names, const std::vector<int>& batches) {
  Json values = Json::array();
  std::map<std::string, double> vram_gib;  // per GPU: the catalog's memory_gb, which is GiB (data/README)
  for (const auto& p : predictions) {
    values.push_back({{"gpu", p.gpu->name},
                      {"batch", p.config.batch_per_gpu},
                      {"memory_gib", p.memory.total_bytes() / kGiB},
                      {"fits", p.fits ? i18n::tr("fits") : i18n::tr("out of memory")}});
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
  Json y = field("memory_gib", "quantitative", i18n::tr("Predicted peak memory per GPU (GiB)"));
  // The axis scales to the cards' memory: a batch far past the largest card (an LLM at batch 1024 needs
  // terabytes) would flatten every line that matters against the axis. Above twice the largest VRAM the
  // lines are cut (clip), which still shows where each card runs out.
  double most_vram = 0, most_memory = 0;
  for (const auto& [name, gib] : vram_gib) most_vram = std::max(most_vram, gib);
  for (const auto& v : values) most_memory = std::max(most_memory, v["memory_gib"].get<double>());
  const bool cut = most_vram > 0 && most_memory > 2 * most_vram;
  if (cut) y["scale"] = {{"domain", {0, 2 * most_vram}}};
  Json s = spec(i18n::trf("Predicted {} training memory against batch size, with each card's VRAM", w.display_name),
                i18n::tr("Dashed lines: VRAM from the catalog. Where a memory line crosses a card's dashed line, "
                         "that card runs out. Lines coincide where a card does not change the memory the model "
                         "needs.") +
                    (cut ? i18n::trf(" The axis ends at twice the largest card's VRAM ({:g} GiB); the batches "
                                     "above it need up to {:.0f} GiB.",
                                     2 * most_vram, most_memory)
                         : std::string()));
  s["width"] = 720;
  s["height"] = 380;
  s["data"] = {{"values", values}};  // the memory lines and points; rules and labels bring their own
  Json line_mark = {{"type", "line"}}, point_mark = {{"type", "point"}, {"filled", true}, {"size", 50}};
  if (cut) line_mark["clip"] = point_mark["clip"] = true;
  s["layer"] = Json::array(
      {{{"mark", line_mark}, {"encoding", {{"x", x}, {"y", y}, {"color", gpu_color(names)}}}},
       {{"mark", point_mark},
        {"encoding",
         {{"x", x},
          {"y", y},
          {"color", gpu_color(names)},
          {"shape",
           {{"field", "fits"},
            {"type", "nominal"},
            {"title", i18n::tr("In VRAM")},
            {"scale", {{"domain", {i18n::tr("fits"), i18n::tr("out of memory")}}, {"range", {"circle", "cross"}}}}}},
          {"tooltip",
           Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", i18n::tr("Batch size")),
                        field("memory_gib", "quantitative", i18n::tr("Peak memory (GiB)"), ",.2f"),
                        field("fits", "nominal", i18n::tr("In VRAM"))})}}}},
       {{"data", {{"values", rules}}},
        {"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"strokeWidth", 1.5}}},
        {"encoding",
         {{"y", field("vram_gib", "quantitative", y["title"])},
          {"color", gpu_color(names)},
          {"tooltip",
           Json::array({field("gpu", "nominal", "GPU"), field("vram_gib", "quantitative", "VRAM (GiB)")})}}}},
       {{"data", {{"values", labels}}},
        {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"dy", -6}, {"fontSize", 10}, {"color", "#444"}}},
        {"encoding",
         {{"x", {{"datum", batches.empty() ? 1 : batches.front()}, {"type", "quantitative"}}},
          {"y", field("vram_gib", "quantitative", y["title"])},
          {"text", {{"field", "label"}, {"type", "nominal"}}}}}}});
  return {"train-memory", i18n::tr("Predicted memory against batch size"), s};
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
  const Json tooltip =
      Json::array({field("gpu", "nominal", "GPU"), field("batch", "quantitative", i18n::tr("Batch size")),
                   field("throughput", "quantitative", i18n::trf("Throughput ({})", unit), ",.0f"),
                   field("epoch_h", "quantitative", i18n::tr("Epoch time (h)"), ",.2f"),
                   field("energy_kwh", "quantitative", i18n::tr("Energy (kWh per epoch)"), ",.2f")});
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
  Json s = spec(i18n::trf("One epoch of {} per card, at its fastest batch that fits", w.display_name),
                i18n::trf("{} samples per epoch; energy at TDP for the whole epoch (an upper bound: TDP is a "
                          "specification, not a measurement).",
                          format_number(dataset)));
  s["data"] = {{"values", values}};
  s["hconcat"] = Json::array({panel("epoch_h", i18n::tr("Epoch time"), i18n::tr("Time per epoch (hours)")),
                              panel("energy_kwh", i18n::tr("Energy"), i18n::tr("Energy per epoch (kWh)"))});
  s["spacing"] = 60;
  return {"train-epoch", i18n::tr("Epoch time and energy per card"), s};
}

Table training_table(const workload::Workload& w, const std::vector<const estimate::Prediction*>& best) {
  Table table;
  const std::string unit = w.throughput_unit();
  using i18n::tr;
  table.columns = {{"GPU", "", Align::left},
                   {tr("VRAM"), "GiB"},
                   {tr("max batch"), tr("samples")},
                   {tr("fastest batch"), tr("samples")},
                   {tr("throughput"), unit},
                   {tr("80% range"), unit},
                   {tr("step"), "ms"},
                   {tr("memory"), "GiB"},
                   {tr("epoch"), "h"},
                   {tr("energy"), "kWh/epoch"},
                   {tr("per $1000"), unit},
                   {tr("bound"), "", Align::left}};
  for (const auto* p : best) {
    table.add_row({p->gpu->name, format_number(p->gpu->memory_gb), format_number(p->max_batch),
                   format_number(p->config.batch_per_gpu), format_number(p->throughput),
                   format_number(p->throughput_low) + "-" + format_number(p->throughput_high),
                   format_number(p->time.step_s * 1e3, 1), format_number(p->memory.total_bytes() / kGiB, 1),
                   p->epoch_time_s ? format_number(*p->epoch_time_s / 3600, 2) : tr("n/a"),
                   p->energy_wh_per_epoch ? format_number(*p->energy_wh_per_epoch / 1000, 2) : tr("n/a"),
                   p->gpu->msrp_usd ? format_number(p->throughput / *p->gpu->msrp_usd * 1000) : tr("n/a"),
                   estimate::to_string(p->time.bound)});
  }
  table.notes.push_back(
      i18n::tr("Each card at the fastest batch of the sweep that fits its VRAM; max batch: the largest that "
               "fits at all. 80% range: where 80% of published runs fell that the model was not fitted on "
               "(gpusage validate --cv gpu). Click a header to sort."));
  return table;
}

}  // namespace

Section training_section(const workload::Workload& workload, const std::vector<estimate::Prediction>& predictions,
                         const std::vector<std::string>& notes) {
  const std::vector<std::string> names = gpu_names(predictions);
  std::set<int> batch_set;
  for (const auto& p : predictions) batch_set.insert(p.config.batch_per_gpu);
  const std::vector<int> batches(batch_set.begin(), batch_set.end());
  const std::string precision = predictions.empty() ? "" : catalog::to_string(predictions.front().config.precision);
  const std::vector<const estimate::Prediction*> best = fastest_fitting(predictions, names);

  Section section;
  section.id = "training";
  section.title = i18n::trf("Will it fit, and how fast? {} training, predicted", workload.display_name);
  section.paragraphs.push_back(
      i18n::trf("{}: {:.1f} M parameters, {:.2f} GFLOPs forward per sample{}; {} training with {} on one GPU, "
                "predicted by gpusage plan (memory model and roofline step time, docs/MODEL.md).",
                workload.display_name, workload.params() / 1e6, workload.forward_flops() / 1e9,
                workload.domain == workload::Domain::vision ? i18n::trf(" at {} px", workload.resolution)
                                                            : i18n::trf(" at {} tokens", workload.seq_len),
                precision, predictions.empty() ? "" : estimate::to_string(predictions.front().config.optimizer)));
  section.items.push_back(throughput_chart(workload, predictions, names, batches, precision));
  section.items.push_back(memory_chart(workload, predictions, names, batches));
  if (!best.empty() && best.front()->epoch_time_s) {
    section.items.push_back(epoch_chart(workload, best, names));
  } else {
    section.notes.push_back(
        i18n::tr("No epoch time or energy: give --dataset-size (samples per epoch) for language models."));
  }
  section.items.push_back(
      PageTable{"train-table", i18n::tr("Each card at its fastest fitting batch"), training_table(workload, best)});
  for (const auto& name : names) {
    if (std::none_of(best.begin(), best.end(), [&](const auto* p) { return p->gpu->name == name; })) {
      section.notes.push_back(i18n::trf("{}: none of the batch sizes fits in its VRAM.", name));
    }
  }
  for (const auto& note : notes) section.notes.push_back(note);
  return section;
}

}  // namespace gpusage::report
