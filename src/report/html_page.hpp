// A self-contained HTML page of charts and sortable tables. Charts are Vega-Lite specifications (JSON
// with the data inline) that the Vega libraries compiled into gpusage draw in the browser: the libraries
// come from web/ (npm, pinned by web/package-lock.json) and are inlined at build time, so the page opens
// offline and fetches nothing. The C++ side emits data and specs; it never draws pixels.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "report/table.hpp"

namespace gpusage::report {

struct Chart {
  std::string id;       // unique in the page; letters, digits and '-' (the element id is "chart-" + id)
  std::string title;    // for the table of contents and `report --format json`; the spec has its own title
  nlohmann::json spec;  // Vega-Lite v6, data inline
};

// A table whose columns sort on a click on their header (numbers as numbers; "n/a" and blanks last).
struct PageTable {
  std::string id;
  std::string caption;
  Table table;
};

struct Section {
  std::string id;
  std::string title;
  std::vector<std::string> paragraphs;  // plain text, escaped on output
  std::vector<std::variant<Chart, PageTable>> items;
  std::vector<std::string> notes;  // small print under the section
};

// Where the figures come from; listed at the foot of the page.
struct PageSource {
  std::string title;
  std::string url;   // linked only when it is http(s)
  std::string note;  // what it backs ("GeForce RTX 5090, GeForce RTX 5080")
};

struct Page {
  std::string title;
  std::string subtitle;
  std::string generator;                // "gpusage 0.1.0 (commit 7f20705…)"
  std::string generated_utc;            // "2026-12-02T15:50:00Z"
  std::string command_line;             // how to make this page again
  std::vector<std::string> provenance;  // further lines for the header: catalog file, inputs
  std::vector<Section> sections;
  std::vector<PageSource> sources;
  std::string lang = "en";  // <html lang>: i18n::html_lang of the language the page is written in ("zh-CN")
};

// The whole page: styles, the three Vega libraries, every spec and table, and the script that renders
// them. When rendering ends the body carries data-report="done" (or "failed") and window.gpusageReport
// holds {charts, rendered, errors}: what the end-to-end browser test reads.
std::string render_html(const Page& page);

std::size_t chart_count(const Page& page);

// Text goes into the page through xml_escape (svg_chart.hpp): the same five entities serve HTML.
// JSON that is safe inside <script>: every '<' becomes \u003c (it can only occur inside JSON strings), so
// no "</script>" or "<!--" can end or confuse the element.
std::string script_json(const nlohmann::json& value);
// Library text inside <script>: a literal "</script" (any case) becomes "<\/script", the same in JavaScript.
std::string script_text(std::string_view code);

// A page under construction: title and provenance filled in (gpusage version and commit, time now).
Page new_page(std::string title, std::string subtitle, std::string command_line);

}  // namespace gpusage::report
