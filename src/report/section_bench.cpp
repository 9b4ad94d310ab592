// The page's measured-against-predicted section (bench results beside plan predictions).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/sections.hpp"
#include "report/vega.hpp"

namespace gpusage::report {

using namespace vega;  // NOLINT: the helpers are this module's vocabulary

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
  table.columns = {{"run", "", Align::left},   {"file", "", Align::left},  {"batch", "samples"},
                   {"measured", "samples/s"},  {"predicted", "samples/s"}, {"error", "%"},
                   {"status", "", Align::left}};
  for (const auto& c : comparisons) {
    runs.push_back(c.label);
    for (const auto& point : c.points) {
      std::optional<double> error;
      if (point.measured && point.predicted && *point.predicted > 0) {
        error = (*point.measured - *point.predicted) / *point.predicted * 100;
      }
      if (point.measured) {
        Json row = {{"run", c.label},
                    {"batch", point.batch},
                    {"series", "measured"},
                    {"throughput", *point.measured},
                    {"unit", c.unit}};
        row["error_pct"] = error ? Json(*error) : Json(nullptr);
        row["error_label"] = error ? Json(fmt::format("{:+.0f}%", *error)) : Json(nullptr);
        values.push_back(row);
      }
      if (point.predicted) {
        values.push_back({{"run", c.label},
                          {"batch", point.batch},
                          {"series", "predicted"},
                          {"throughput", *point.predicted},
                          {"unit", c.unit},
                          {"error_pct", nullptr},
                          {"error_label", nullptr}});
      }
      table.add_row({c.label, c.origin, format_number(point.batch), format_optional(point.measured, 1),
                     format_optional(point.predicted, 1), format_optional(error, 1), point.status});
    }
    if (!c.note.empty()) section.notes.push_back(fmt::format("{} ({}): {}", c.label, c.origin, c.note));
  }
  const Json y = field("throughput", "quantitative", "Training throughput (samples/s)");
  const Json x = {{"field", "batch"},
                  {"type", "ordinal"},
                  {"title", "Batch size per GPU (samples)"},
                  {"axis", {{"labelAngle", 0}}}};
  const Json offset = {{"field", "series"}, {"type", "nominal"}, {"sort", {"measured", "predicted"}}};
  Json s = spec("Measured throughput against gpusage plan's prediction",
                "Bars: measured and predicted samples/s per GPU; the label on each measured bar is its error.");
  s["data"] = {{"values", values}};
  s["facet"] = {
      {"row",
       {{"field", "run"},
        {"type", "nominal"},
        {"sort", runs},
        {"title", nullptr},
        {"header",
         {{"labelAngle", 0}, {"labelOrient", "top"}, {"labelAnchor", "start"}, {"labelFontWeight", "bold"}}}}}};
  s["spacing"] = 24;
  s["resolve"] = {{"scale", {{"y", "independent"}}}};
  s["spec"] = {
      {"width", 560},
      {"height", 220},
      {"encoding", {{"x", x}, {"xOffset", offset}, {"y", y}}},
      {"layer",
       Json::array({{{"mark", {{"type", "bar"}}},
                     {"encoding",
                      {{"color",
                        {{"field", "series"},
                         {"type", "nominal"},
                         {"title", "Throughput"},
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

}  // namespace gpusage::report
