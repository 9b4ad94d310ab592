#include "report/html_page.hpp"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <ctime>

#include "core/common/i18n.hpp"
#include "core/common/time.hpp"
#include "gpusage/build_info.hpp"
#include "report/fonts.hpp"
#include "report/svg_chart.hpp"

namespace gpusage::report {

// Compiled in from web/node_modules by src/report/CMakeLists.txt (gpusage_embed_text).
extern const char* const kvega_js;
extern const char* const kvegalite_js;
extern const char* const kvegaembed_js;

namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #d9dee6; --band: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 var(--fonts); color: var(--ink); background: #fff; }
header, main, footer { max-width: 1180px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 28px; border-bottom: 1px solid var(--line); padding-bottom: 12px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 8px; border-top: 1px solid var(--line); }
.subtitle { margin: 0 0 10px; font-size: 16px; color: var(--muted); }
.meta { margin: 2px 0; font-size: 13px; color: var(--muted); }
.meta code { background: var(--band); padding: 1px 4px; border-radius: 3px; }
nav { font-size: 14px; margin: 10px 0 0; }
nav a { margin-right: 14px; }
figure { margin: 18px 0; overflow-x: auto; min-width: 0; }
.table-scroll { overflow-x: auto; max-width: 100%; }
.table-scroll::-webkit-scrollbar { height: 10px; }
.table-scroll::-webkit-scrollbar-thumb { background: #b8c0cc; border-radius: 5px; }
.table-scroll::-webkit-scrollbar-track { background: var(--band); }
figcaption { font-weight: 600; margin-bottom: 6px; }
.vega-chart { min-height: 60px; }
table.sortable { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
table.sortable th, table.sortable td { padding: 4px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
table.sortable th { background: var(--band); cursor: pointer; user-select: none; vertical-align: bottom; }
table.sortable th .unit { display: block; font-weight: 400; color: var(--muted); font-size: 12px; }
table.sortable th[data-dir="asc"]::after { content: " \25B2"; font-size: 10px; }
table.sortable th[data-dir="desc"]::after { content: " \25BC"; font-size: 10px; }
table.sortable .num { text-align: right; }
table.sortable .text { text-align: left; }
table.sortable td.long { white-space: normal; min-width: 320px; }
table.sortable tbody tr:hover { background: #eef3fb; }
.note { font-size: 13px; color: var(--muted); margin: 4px 0; }
footer { margin-top: 40px; padding-bottom: 40px; font-size: 13px; color: var(--muted); }
footer ol { padding-left: 22px; }
a { color: #1f5fbf; }
)css";

// Sorting on a header click: numbers by value (thousands separators ignored), text alphabetically;
// blanks and "n/a" stay at the bottom either way.
constexpr const char* kSortScript = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  var headers = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(headers, function (th, column) {
    th.addEventListener('click', function () {
      var dir = th.dataset.dir === 'desc' ? 'asc' : 'desc';
      Array.prototype.forEach.call(headers, function (h) { delete h.dataset.dir; });
      th.dataset.dir = dir;
      var key = function (row) {
        var s = row.cells[column].textContent.trim();
        var n = /^[-+]?[0-9][0-9,]*(\.[0-9]+)?/.test(s) ? parseFloat(s.replace(/,/g, '')) : NaN;
        return { s: s, n: n, missing: s === '' || s === 'n/a' };
      };
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x.missing || y.missing) return x.missing - y.missing;
        var order = !isNaN(x.n) && !isNaN(y.n) ? x.n - y.n : x.s.localeCompare(y.s);
        return dir === 'asc' ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
)js";

// Draws every chart; records the outcome for people (a line in place of a failed chart) and for the
// browser test (window.gpusageReport, body[data-report]).
constexpr const char* kRenderScript = R"js(
(function () {
  var state = { charts: 0, rendered: 0, errors: [] };
  window.gpusageReport = state;
  var elements = document.querySelectorAll('div.vega-chart');
  state.charts = elements.length;
  var jobs = Array.prototype.map.call(elements, function (el) {
    var fail = function (e) {
      state.errors.push(el.id + ': ' + e);
      el.textContent = 'This chart could not be drawn: ' + e;
    };
    try {
      var spec = JSON.parse(document.getElementById(el.dataset.spec).textContent);
      return vegaEmbed(el, spec, { actions: false, renderer: 'svg' })
        .then(function () { state.rendered += 1; }, fail);
    } catch (e) {
      fail(e);
      return Promise.resolve();
    }
  });
  Promise.all(jobs).then(function () {
    document.body.dataset.report = state.errors.length === 0 ? 'done' : 'failed';
  });
})();
)js";

bool is_numeric_column(const Table& table, std::size_t column) {
  return column < table.columns.size() && table.columns[column].align == Align::right;
}

std::string render_table(const PageTable& t) {
  const Table& table = t.table;
  std::string out = fmt::format("<figure class=\"table\" id=\"table-{}\">\n", xml_escape(t.id));
  if (!t.caption.empty()) out += "<figcaption>" + xml_escape(t.caption) + "</figcaption>\n";
  // A table wider than the page scrolls inside its own box (with a scrollbar that is drawn, not an overlay):
  // its right-hand columns are never cut off at the page's edge.
  out += "<div class=\"table-scroll\" tabindex=\"0\"><table class=\"sortable\"><thead><tr>";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const Column& c = table.columns[i];
    out += fmt::format("<th scope=\"col\" class=\"{}\" title=\"{}\">{}", is_numeric_column(table, i) ? "num" : "text",
                       xml_escape(i18n::tr("Click to sort")), xml_escape(c.header));
    if (!c.unit.empty()) out += "<span class=\"unit\">" + xml_escape(c.unit) + "</span>";
    out += "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      // Sentences (alert messages) wrap; names and numbers stay on one line.
      const char* kind = is_numeric_column(table, i) ? "num" : row[i].size() > 60 ? "text long" : "text";
      out += fmt::format("<td class=\"{}\">{}</td>", kind, xml_escape(row[i]));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  for (const auto& note : table.notes) out += "<p class=\"note\">" + xml_escape(note) + "</p>\n";
  return out + "</figure>\n";
}

std::string render_chart(const Chart& chart) {
  const std::string id = xml_escape(chart.id);
  return fmt::format(
      "<figure class=\"chart\"><div class=\"vega-chart\" id=\"chart-{0}\" data-spec=\"spec-{0}\" role=\"img\" "
      "aria-label=\"{1}\"></div></figure>\n<script type=\"application/json\" id=\"spec-{0}\">{2}</script>\n",
      id, xml_escape(chart.title), script_json(chart.spec));
}

bool is_web_url(const std::string& url) { return url.starts_with("https://") || url.starts_with("http://"); }

}  // namespace

std::string script_json(const nlohmann::json& value) {
  // Invalid UTF-8 in a label is replaced rather than thrown on: a page with U+FFFD beats no page.
  const std::string dumped = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  for (char c : dumped) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string script_text(std::string_view code) {
  std::string out;
  out.reserve(code.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '<' && i + 8 <= code.size() && code[i + 1] == '/') {
      std::string word(code.substr(i + 2, 6));
      for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (word == "script") {
        out += "<\\/";
        ++i;
        continue;
      }
    }
    out += code[i];
  }
  return out;
}

std::size_t chart_count(const Page& page) {
  std::size_t n = 0;
  for (const auto& section : page.sections) {
    for (const auto& item : section.items) n += std::holds_alternative<Chart>(item) ? 1 : 0;
  }
  return n;
}

std::string render_html(const Page& page) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"" + xml_escape(page.lang) + "\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"" + xml_escape(page.generator) + "\">\n";
  out += "<title>" + xml_escape(page.title) + "</title>\n<style>:root { --fonts: " + std::string(kPageFonts) + "; }" +
         kStyle + "</style>\n";
  for (const char* library : {kvega_js, kvegalite_js, kvegaembed_js}) {
    out += "<script>" + script_text(library) + "</script>\n";
  }
  out += "</head>\n<body>\n<header>\n<h1>" + xml_escape(page.title) + "</h1>\n";
  if (!page.subtitle.empty()) out += "<p class=\"subtitle\">" + xml_escape(page.subtitle) + "</p>\n";
  out += i18n::trf("<p class=\"meta\">Generated {} by {}.</p>\n", xml_escape(page.generated_utc),
                   xml_escape(page.generator));
  if (!page.command_line.empty()) {
    out += i18n::trf("<p class=\"meta\">Command: <code>{}</code></p>\n", xml_escape(page.command_line));
  }
  for (const auto& line : page.provenance) out += "<p class=\"meta\">" + xml_escape(line) + "</p>\n";
  out += "<nav>";
  for (const auto& section : page.sections) {
    out += fmt::format("<a href=\"#{}\">{}</a>", xml_escape(section.id), xml_escape(section.title));
  }
  if (!page.sources.empty()) out += i18n::tr("<a href=\"#sources\">Sources</a>");
  out += "</nav>\n</header>\n<main>\n";
  for (const auto& section : page.sections) {
    out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", xml_escape(section.id), xml_escape(section.title));
    for (const auto& paragraph : section.paragraphs) out += "<p>" + xml_escape(paragraph) + "</p>\n";
    for (const auto& item : section.items) {
      out += std::holds_alternative<Chart>(item) ? render_chart(std::get<Chart>(item))
                                                 : render_table(std::get<PageTable>(item));
    }
    for (const auto& note : section.notes) out += "<p class=\"note\">" + xml_escape(note) + "</p>\n";
    out += "</section>\n";
  }
  out += "</main>\n<footer>\n";
  if (!page.sources.empty()) {
    out += i18n::tr("<h2 id=\"sources\">Sources</h2>\n") + "<ol>\n";
    for (const auto& source : page.sources) {
      const std::string title = xml_escape(source.title.empty() ? source.url : source.title);
      out += is_web_url(source.url) ? fmt::format("<li><a href=\"{}\">{}</a>", xml_escape(source.url), title)
                                    : fmt::format("<li>{} {}", title, xml_escape(source.url));
      if (!source.note.empty()) out += " — " + xml_escape(source.note);
      out += "</li>\n";
    }
    out += "</ol>\n";
  }
  out += i18n::trf(
      "<p>Charts drawn in your browser by Vega {}, Vega-Lite {} and vega-embed {} (BSD-3-Clause), "
      "inlined in this file: it opens offline and loads nothing from the network.</p>\n",
      GPUSAGE_VEGA_VERSION, GPUSAGE_VEGA_LITE_VERSION, GPUSAGE_VEGA_EMBED_VERSION);
  out += "</footer>\n<script>" + std::string(kSortScript) + "</script>\n<script>" + kRenderScript +
         "</script>\n</body>\n</html>\n";
  return out;
}

Page new_page(std::string title, std::string subtitle, std::string command_line) {
  Page page;
  page.title = std::move(title);
  page.subtitle = std::move(subtitle);
  page.command_line = std::move(command_line);
  page.lang = i18n::html_lang(i18n::language());
  page.generator =
      fmt::format("gpusage {} (commit {}, {} build)", build_info::version, build_info::commit, build_info::build_type);
  page.generated_utc = wallclock::iso_utc(wallclock::unix_now_s(), false);
  return page;
}

}  // namespace gpusage::report
