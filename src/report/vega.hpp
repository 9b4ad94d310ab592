// Vega-Lite helpers shared by the page sections (report/section_*.cpp): the page's look, fields with
// titles and units, one colour per GPU across the page. Internal to src/report.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/catalog/gpu.hpp"
#include "core/common/units.hpp"
#include "report/fonts.hpp"

namespace gpusage::report::vega {

using Json = nlohmann::json;

inline constexpr const char* kSchema = "https://vega.github.io/schema/vega-lite/v6.json";
using units::kGiB;
// More points than this per GPU and line make a page slow to draw; longer logs are thinned evenly.
inline constexpr std::size_t kMaxPointsPerGpu = 1500;

inline Json chart_config() {
  return {
      {"font", kPageFonts},
      {"view", {{"stroke", nullptr}}},
      {"axis", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"titleFontWeight", "normal"}, {"titleColor", "#333"}}},
      {"legend", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"labelLimit", 260}}},
      {"header", {{"labelFontSize", 12}, {"titleFontSize", 12}}},
      {"title", {{"anchor", "start"}, {"fontSize", 15}, {"subtitleFontSize", 12}, {"subtitleColor", "#5b6472"}}}};
}

// A spec with the page's look: title (and a subtitle line), the schema, the shared config.
inline Json spec(const std::string& title, const std::string& subtitle) {
  Json t = {{"text", title}};
  if (!subtitle.empty()) t["subtitle"] = subtitle;
  return {{"$schema", kSchema}, {"title", t}, {"config", chart_config()}};
}

inline std::string with_unit(const std::string& label, const std::string& unit) {
  return unit.empty() ? label : fmt::format("{} ({})", label, unit);
}

// d3-format for `decimals` places with thousands separators.
inline std::string number_format(int decimals) { return fmt::format(",.{}f", decimals); }

inline Json field(const std::string& name, const char* type, const std::string& title, const std::string& format = "") {
  Json f = {{"field", name}, {"type", type}, {"title", title}};
  if (!format.empty()) f["format"] = format;
  return f;
}

// One colour per GPU, the same in every chart of the page.
inline Json gpu_color(const std::vector<std::string>& names, const std::string& title = "GPU") {
  return {{"field", "gpu"},
          {"type", "nominal"},
          {"title", title},
          {"sort", names},
          {"scale", {{"domain", names}, {"scheme", names.size() > 10 ? "category20" : "tableau10"}}}};
}

inline Json gpu_axis(const std::vector<std::string>& names) {
  return {{"field", "gpu"}, {"type", "nominal"}, {"sort", names}, {"title", nullptr}};
}

inline std::vector<std::string> names_of(const std::vector<const catalog::Gpu*>& gpus) {
  std::vector<std::string> names;
  for (const catalog::Gpu* gpu : gpus) names.push_back(gpu->name);
  return names;
}

}  // namespace gpusage::report::vega
