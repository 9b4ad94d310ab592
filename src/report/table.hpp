// One table model, several renderers (aligned text, Markdown, CSV). JSON is produced from the domain
// objects by each command, since its schema is a contract (../shared/DESIGN.md) rather than a layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/i18n.hpp"

namespace gpusage::report {

enum class Align { left, right };

struct Column {
  std::string header;
  std::string unit;  // shown as "header (unit)" in text and Markdown, and in the CSV header
  Align align = Align::right;
  // 0: always shown. Higher numbers are dropped first when the text table is too wide.
  int drop_priority = 0;
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the text and Markdown tables
  // Told to the reader when columns were dropped to fit: how to see them all in this command. Translated
  // where it is printed (a hint marked with i18n::N_ and found in the catalog reads in the user's language).
  std::string dropped_hint = i18n::N_("use --wide or --format csv");
  // Text only: print units on a second header line under their headers ("FP16" over "TFLOPS"), so that
  // many numeric columns fit a terminal. Markdown and CSV keep "header (unit)".
  bool units_on_own_line = false;

  void add_row(std::vector<std::string> row) { rows.push_back(std::move(row)); }
};

// Aligned text that fits `width` columns: drops columns by drop_priority and says which in a note.
std::string render_text(const Table& table, int width = 120);
std::string render_markdown(const Table& table);
std::string render_csv(const Table& table);

// Number formatting shared by every table: fixed decimals, thousands separators for values from
// `group_from` up (10,000 by default; a column mixing 8960 and 21,760 reads better with 1000).
std::string format_number(double value, int decimals = 0, double group_from = 10000);
// At least `digits` significant figures, and never fewer digits than the integer part has: 1,667; 41.3; 0.245;
// 0.00123 (a rate per watt or per dollar is never rounded to 0).
std::string format_significant(double value, int digits = 3, double group_from = 10000);
// "n/a" when empty
std::string format_optional(const std::optional<double>& value, int decimals = 0, double group_from = 10000);
std::string format_duration(double seconds);  // "1.2 ms", "3.4 s", "2 h 05 min"

}  // namespace gpusage::report
