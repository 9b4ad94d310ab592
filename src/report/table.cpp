#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::report {

namespace {

std::string header_text(const Column& column) {
  return column.unit.empty() ? column.header : column.header + " (" + column.unit + ")";
}

using text::display_width;  // terminal columns: a CJK character takes two

std::string pad(const std::string& s, std::size_t width, Align align) {
  return align == Align::left ? text::pad_right(s, width) : text::pad_left(s, width);
}

}  // namespace

std::string render_text(const Table& table, int width) {
  const std::size_t n = table.columns.size();
  const bool two_lines = table.units_on_own_line;
  auto first_header = [&](std::size_t c) {
    return two_lines ? table.columns[c].header : header_text(table.columns[c]);
  };
  std::vector<std::size_t> widths(n);
  for (std::size_t c = 0; c < n; ++c) {
    widths[c] = display_width(first_header(c));
    if (two_lines) widths[c] = std::max(widths[c], display_width(table.columns[c].unit));
    for (const auto& row : table.rows) {
      if (c < row.size()) widths[c] = std::max(widths[c], display_width(row[c]));
    }
  }
  std::vector<bool> shown(n, true);
  auto total = [&] {
    std::size_t sum = 0, count = 0;
    for (std::size_t c = 0; c < n; ++c) {
      if (shown[c]) sum += widths[c], ++count;
    }
    return sum + (count ? 2 * (count - 1) : 0);
  };
  std::vector<std::string> dropped;
  while (total() > static_cast<std::size_t>(width)) {
    // Drop the shown column with the highest priority number; the last of equals first.
    int best = -1;
    for (std::size_t c = 0; c < n; ++c) {
      if (shown[c] && table.columns[c].drop_priority > 0 &&
          (best < 0 || table.columns[c].drop_priority >= table.columns[best].drop_priority)) {
        best = static_cast<int>(c);
      }
    }
    if (best < 0) break;
    shown[best] = false;
    dropped.insert(dropped.begin(), table.columns[best].header);
  }
  std::string out;
  auto line = [&](auto cell_of) {
    std::string text;
    bool first = true;
    for (std::size_t c = 0; c < n; ++c) {
      if (!shown[c]) continue;
      if (!first) text += "  ";
      first = false;
      text += pad(cell_of(c), widths[c], table.columns[c].align);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line([&](std::size_t c) { return first_header(c); });
  if (two_lines) line([&](std::size_t c) { return table.columns[c].unit; });
  line([&](std::size_t c) { return std::string(widths[c], '-'); });
  for (const auto& row : table.rows) {
    line([&](std::size_t c) { return c < row.size() ? row[c] : std::string(); });
  }
  for (const auto& note : table.notes) out += note + "\n";
  if (!dropped.empty()) {
    std::string list;
    for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
    out += i18n::trf("(not shown to fit {} columns: {}; {})", width, list, i18n::tr(table.dropped_hint.c_str())) + "\n";
  }
  return out;
}

std::string render_markdown(const Table& table) {
  std::string out = "|";
  for (const auto& column : table.columns) out += " " + header_text(column) + " |";
  out += "\n|";
  for (const auto& column : table.columns) out += column.align == Align::right ? " ---: |" : " :--- |";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      std::string cell = c < row.size() ? row[c] : "";
      std::string escaped;
      for (char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
      out += " " + escaped + " |";
    }
    out += "\n";
  }
  if (!table.notes.empty()) {
    out += "\n";
    for (const auto& note : table.notes) out += note + "\n";
  }
  return out;
}

std::string render_csv(const Table& table) {
  std::string out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const Column& column = table.columns[c];
    out += (c ? "," : "") +
           text::csv_field(column.unit.empty() ? column.header : column.header + " (" + column.unit + ")");
  }
  out += "\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      out += (c ? "," : "") + text::csv_field(c < row.size() ? row[c] : "");
    }
    out += "\n";
  }
  return out;
}

std::string format_number(double value, int decimals, double group_from) {
  if (!std::isfinite(value)) return "n/a";
  std::string s = fmt::format("{:.{}f}", value, decimals);
  // Thousands separators on the integer part.
  if (std::fabs(value) < group_from) return s;
  std::size_t dot = s.find('.');
  std::size_t int_end = dot == std::string::npos ? s.size() : dot;
  std::size_t int_begin = s[0] == '-' ? 1 : 0;
  std::string out = s.substr(0, int_begin);
  for (std::size_t i = int_begin; i < int_end; ++i) {
    out += s[i];
    std::size_t remaining = int_end - i - 1;
    if (remaining > 0 && remaining % 3 == 0) out += ',';
  }
  return out + s.substr(int_end);
}

std::string format_significant(double value, int digits, double group_from) {
  if (!std::isfinite(value) || value == 0) return format_number(value, 0, group_from);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return format_number(value, std::max(0, digits - 1 - magnitude), group_from);
}

std::string format_optional(const std::optional<double>& value, int decimals, double group_from) {
  return value ? format_number(*value, decimals, group_from) : "n/a";
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds < 1e-3) return fmt::format("{:.0f} µs", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.1f} ms", seconds * 1e3);
  if (seconds < 120) return fmt::format("{:.2f} s", seconds);
  if (seconds < 3600) return fmt::format("{:.1f} min", seconds / 60);
  long minutes = std::lround(seconds / 60);
  return fmt::format("{} h {:02d} min", minutes / 60, static_cast<int>(minutes % 60));
}

}  // namespace gpusage::report
