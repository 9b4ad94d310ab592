// Grouped bar charts as standalone SVG text, drawn by hand: no dependency, deterministic output (the same
// chart gives the same bytes), every piece of text XML-escaped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::report {

// One metric: one bar in every group.
struct BarSeries {
  std::string name;                           // "FP16 tensor"
  std::string unit;                           // "TFLOPS"; empty for counts
  int decimals = 0;                           // for the value printed above each bar
  std::vector<std::optional<double>> values;  // one per group; empty when unknown (drawn as "n/a")
};

struct BarChart {
  std::string title;
  std::string subtitle;             // one line under the title; may be empty
  std::vector<std::string> groups;  // group labels along the x axis (GPU names)
  std::vector<BarSeries> series;
  std::string y_axis_label;
};

// Metrics of different units share one chart: each series' bars are scaled to that series' largest value
// in the chart (100%), and each bar carries its actual value and unit. Throws std::invalid_argument when a
// series does not have one value per group.
std::string render_svg(const BarChart& chart);

// &, <, >, " and ' as entities, so that any text is safe in element content and attribute values.
std::string xml_escape(std::string_view text);

}  // namespace gpusage::report
