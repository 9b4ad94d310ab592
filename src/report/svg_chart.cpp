#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/common/text.hpp"
#include "report/fonts.hpp"
#include "report/table.hpp"

namespace gpusage::report {

namespace {

// Okabe–Ito palette: distinguishable with the common colour-vision deficiencies, readable on white.
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                    "#CC79A7", "#56B4E9", "#999999", "#F0E442"};
constexpr std::size_t kColourCount = sizeof(kColours) / sizeof(kColours[0]);

// Layout in SVG user units (px). Text widths are estimated, since no font metrics are at hand: an
// average sans-serif glyph is about 0.6 em wide.
constexpr double kCharWidthEm = 0.6;
constexpr double kMarginLeft = 72, kMarginRight = 24, kMinWidth = 760;
constexpr double kBarWidth = 18, kBarGap = 3, kGroupGap = 30;
constexpr double kBarAreaHeight = 300;  // the height of a 100% bar
constexpr double kValueFont = 11, kGroupFont = 12, kLegendFont = 12, kTitleFont = 18, kSubtitleFont = 12;
constexpr std::size_t kMaxGroupLabelLines = 4, kMaxSubtitleLines = 3;

// A Chinese character takes two terminal columns and about one em: twice a Latin glyph's estimate.
double text_width(std::string_view s, double font_size) {
  return static_cast<double>(text::display_width(s)) * font_size * kCharWidthEm;
}

// Coordinates with one decimal: enough for the eye, and the same bytes on every run.
std::string num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string value_label(const BarSeries& series, const std::optional<double>& value) {
  if (!value) return "n/a";
  std::string s = format_number(*value, series.decimals, 1000);
  return series.unit.empty() ? s : s + " " + series.unit;
}

std::string series_label(const BarSeries& series) {
  return series.unit.empty() ? series.name : series.name + " (" + series.unit + ")";
}

// The pieces a label may break between: words at spaces, and each Chinese character on its own (Chinese
// breaks between characters, with no space). `spaced`: a space stood before the piece.
struct Piece {
  std::string text;
  bool spaced;
};
std::vector<Piece> pieces(const std::string& label) {
  std::vector<Piece> out;
  bool space = false, open = false;  // open: the last piece is a word that the next narrow character extends
  for (std::size_t i = 0; i < label.size();) {
    std::size_t length = 1;
    while (i + length < label.size() && (static_cast<unsigned char>(label[i + length]) & 0xC0) == 0x80) ++length;
    const std::string glyph = label.substr(i, length);
    i += length;
    if (glyph == " ") {
      space = true, open = false;
    } else if (text::display_width(glyph) == 2) {
      out.push_back({glyph, space});
      space = false, open = false;
    } else if (open) {
      out.back().text += glyph;
    } else {
      out.push_back({glyph, space});
      space = false, open = true;
    }
  }
  return out;
}

// Breaks a label into lines of at most `max_chars` columns (display width: a Chinese character counts two), at
// spaces and between Chinese characters (a longer word keeps its own line), and at most `max_lines` lines.
std::vector<std::string> wrap(const std::string& label, std::size_t max_chars, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (const Piece& piece : pieces(label)) {
    const std::string joined = line + (piece.spaced ? " " : "") + piece.text;
    if (!line.empty() && text::display_width(joined) > max_chars) {
      lines.push_back(line);
      line = piece.text;
    } else {
      line = line.empty() ? piece.text : joined;
    }
  }
  if (!line.empty()) lines.push_back(line);
  if (lines.size() > max_lines) {
    // A label taller than this crowds the chart; the bars' tooltips still carry the whole name.
    lines.resize(max_lines);
    lines.back() += "…";
  }
  return lines;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_svg(const BarChart& chart) {
  const std::size_t groups = chart.groups.size();
  const std::size_t series_count = chart.series.size();
  for (const auto& series : chart.series) {
    if (series.values.size() != groups) {
      throw std::invalid_argument(
          fmt::format("chart series '{}' has {} values for {} groups", series.name, series.values.size(), groups));
    }
  }

  // Horizontal layout: fixed-width bars; groups widen (never bars) when the chart would be narrower
  // than the minimum width that holds the title and legend.
  const double bars_width =
      series_count ? static_cast<double>(series_count) * (kBarWidth + kBarGap) - kBarGap : kBarWidth;
  double group_width = bars_width + kGroupGap;
  if (groups) group_width = std::max(group_width, (kMinWidth - kMarginLeft - kMarginRight) / groups);
  const double plot_width = group_width * static_cast<double>(std::max<std::size_t>(groups, 1));
  const double width = kMarginLeft + plot_width + kMarginRight;

  // Legend rows, wrapped to the chart's width.
  struct LegendItem {
    double x, row;
    std::string text;
  };
  std::vector<LegendItem> legend;
  {
    double x = kMarginLeft, row = 0;
    for (const auto& series : chart.series) {
      std::string text = series_label(series);
      double item_width = 14 + 6 + text_width(text, kLegendFont) + 22;
      if (x > kMarginLeft && x + item_width > width - kMarginRight) x = kMarginLeft, row += 1;
      legend.push_back({x, row, text});
      x += item_width;
    }
  }
  const double legend_rows = legend.empty() ? 0 : legend.back().row + 1;

  // Vertical layout: title, subtitle, legend, room for the tallest value label, the bars, group labels.
  double label_room = 0;
  for (const auto& series : chart.series) {
    for (const auto& value : series.values) {
      label_room = std::max(label_room, text_width(value_label(series, value), kValueFont));
    }
  }
  label_room += 10;
  const std::size_t label_chars =
      std::max<std::size_t>(6, static_cast<std::size_t>((group_width - 6) / (kGroupFont * kCharWidthEm)));
  std::vector<std::vector<std::string>> group_lines;
  std::size_t max_lines = 1;
  for (const auto& label : chart.groups) {
    group_lines.push_back(wrap(label, label_chars, kMaxGroupLabelLines));
    max_lines = std::max(max_lines, group_lines.back().size());
  }
  const auto subtitle_lines = wrap(
      chart.subtitle, static_cast<std::size_t>((width - kMarginLeft - kMarginRight) / (kSubtitleFont * kCharWidthEm)),
      kMaxSubtitleLines);
  const double title_y = 30;
  const double subtitle_y = title_y + 20;  // the first line's baseline
  const double legend_top = title_y + 20 + static_cast<double>(subtitle_lines.size()) * (kSubtitleFont + 4);
  const double hundred_y = legend_top + legend_rows * 20 + 8 + label_room;  // top of a 100% bar
  const double baseline_y = hundred_y + kBarAreaHeight;
  const double height = baseline_y + 12 + static_cast<double>(max_lines) * (kGroupFont + 3) + 14;

  std::string svg;
  auto out = [&svg](std::string_view s) {
    svg += s;
    svg += '\n';
  };
  out(R"(<?xml version="1.0" encoding="UTF-8"?>)");
  out(fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                  R"(font-family="{2}">)",
                  num(width), num(height), kSvgFonts));
  out(fmt::format(R"(<rect width="{}" height="{}" fill="#ffffff"/>)", num(width), num(height)));
  out(fmt::format(R"(<text class="title" x="{}" y="{}" font-size="{}" font-weight="bold">{}</text>)", num(kMarginLeft),
                  num(title_y), num(kTitleFont), xml_escape(chart.title)));
  for (std::size_t i = 0; i < subtitle_lines.size(); ++i) {
    out(fmt::format(R"(<text class="subtitle" x="{}" y="{}" font-size="{}" fill="#444444">{}</text>)", num(kMarginLeft),
                    num(subtitle_y + static_cast<double>(i) * (kSubtitleFont + 4)), num(kSubtitleFont),
                    xml_escape(subtitle_lines[i])));
  }
  for (std::size_t s = 0; s < legend.size(); ++s) {
    const double y = legend_top + legend[s].row * 20;
    out(fmt::format(R"(<rect class="legend" x="{}" y="{}" width="14" height="14" fill="{}"/>)", num(legend[s].x),
                    num(y), kColours[s % kColourCount]));
    out(fmt::format(R"(<text x="{}" y="{}" font-size="{}">{}</text>)", num(legend[s].x + 20), num(y + 11.5),
                    num(kLegendFont), xml_escape(legend[s].text)));
  }

  // Grid and y axis: 0–100% of each metric's largest value.
  for (int pct = 0; pct <= 100; pct += 25) {
    const double y = baseline_y - kBarAreaHeight * pct / 100.0;
    out(fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1"/>)", num(kMarginLeft), num(y),
                    num(kMarginLeft + plot_width), num(y), pct == 0 ? "#333333" : "#e0e0e0"));
    out(fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#444444">{}%</text>)",
                    num(kMarginLeft - 6), num(y + 4), pct));
  }
  const double axis_x = 20, axis_y = baseline_y - kBarAreaHeight / 2;
  out(fmt::format(R"(<text class="axis-label" x="{0}" y="{1}" font-size="12" text-anchor="middle" )"
                  R"~(transform="rotate(-90 {0} {1})" fill="#333333">{2}</text>)~",
                  num(axis_x), num(axis_y), xml_escape(chart.y_axis_label)));

  // Bars, each scaled to its series' largest value, with the actual value written above it.
  std::vector<double> series_max(series_count, 0);
  for (std::size_t s = 0; s < series_count; ++s) {
    for (const auto& value : chart.series[s].values) {
      if (value && std::isfinite(*value)) series_max[s] = std::max(series_max[s], *value);
    }
  }
  for (std::size_t g = 0; g < groups; ++g) {
    const double group_x = kMarginLeft + group_width * static_cast<double>(g);
    const double first_bar_x = group_x + (group_width - bars_width) / 2;
    for (std::size_t s = 0; s < series_count; ++s) {
      const BarSeries& series = chart.series[s];
      const auto& value = series.values[g];
      const double x = first_bar_x + static_cast<double>(s) * (kBarWidth + kBarGap);
      double top = baseline_y;
      if (value && std::isfinite(*value) && *value > 0 && series_max[s] > 0) {
        // At least 1 px, so that a small known value never looks like a missing one.
        const double h = std::max(1.0, kBarAreaHeight * *value / series_max[s]);
        top = baseline_y - h;
        out(fmt::format(R"(<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}">)"
                        R"(<title>{}: {} {}</title></rect>)",
                        num(x), num(top), num(kBarWidth), num(h), kColours[s % kColourCount],
                        xml_escape(chart.groups[g]), xml_escape(series.name), xml_escape(value_label(series, value))));
      }
      // Rotated to read upwards from just above the bar, so that long labels need no horizontal room.
      const double lx = x + kBarWidth / 2 + kValueFont * 0.35, ly = top - 4;
      out(fmt::format(R"~(<text class="value" x="{0}" y="{1}" font-size="{2}" transform="rotate(-90 {0} {1})" )~"
                      R"(fill="{3}">{4}</text>)",
                      num(lx), num(ly), num(kValueFont), value ? "#222222" : "#888888",
                      xml_escape(value_label(series, value))));
    }
    for (std::size_t line = 0; line < group_lines[g].size(); ++line) {
      out(fmt::format(R"(<text class="group" x="{}" y="{}" font-size="{}" text-anchor="middle">{}</text>)",
                      num(group_x + group_width / 2),
                      num(baseline_y + 18 + static_cast<double>(line) * (kGroupFont + 3)), num(kGroupFont),
                      xml_escape(group_lines[g][line])));
    }
  }
  out("</svg>");
  return svg;
}

}  // namespace gpusage::report
