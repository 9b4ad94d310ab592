// The HTML page builder: escaping of text and embedded JSON, the inlined libraries, tables, sources.
#include "report/html_page.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/report/count.hpp"

namespace gpusage::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kInjection = "</script><script>alert(1)</script>";

Page sample_page() {
  Page page;
  page.title = "Cards <b>& co</b>";
  page.generator = "gpusage test";
  page.generated_utc = "2026-12-02T15:50:00Z";
  page.command_line = "gpusage report --out r.html";
  Section section;
  section.id = "gpus";
  section.title = "Side by side";
  section.paragraphs.push_back(std::string("A paragraph with ") + kInjection);
  nlohmann::json spec = {{"mark", "bar"}, {"data", {{"values", {{{"gpu", kInjection}, {"value", 1}}}}}}};
  section.items.push_back(Chart{"one", "First <chart>", spec});
  Table table;
  table.columns = {{"GPU", "", Align::left}, {"VRAM", "GB"}};
  table.add_row({"RTX <5090>", "32"});
  table.notes.push_back("note & more");
  section.items.push_back(PageTable{"t1", "The table", table});
  section.items.push_back(Chart{"two", "Second", {{"mark", "line"}}});
  page.sections.push_back(section);
  page.sources = {{"Whitepaper", "https://example.invalid/a?x=1&y=2", "RTX 5090"},
                  {"Not a link", "javascript:alert(1)", ""}};
  return page;
}

TEST(ScriptJson, HasNoLessThanSignAndParsesBackToTheSameValue) {
  const nlohmann::json value = {{"label", kInjection}, {"<key>", {1, 2.5, nullptr}}, {"text", "<!-- x -->"}};
  const std::string text = script_json(value);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text), value);
}

TEST(ScriptText, BreaksAClosingScriptTagInAnyCaseAndKeepsTheRest) {
  EXPECT_EQ(script_text("var a = '</script>'; var b = '</SCRIPT >'; var c = '</b>';"),
            "var a = '<\\/script>'; var b = '<\\/SCRIPT >'; var c = '</b>';");
}

TEST(RenderHtml, EscapesEveryPieceOfText) {
  const std::string html = render_html(sample_page());
  EXPECT_THAT(html, HasSubstr("<title>Cards &lt;b&gt;&amp; co&lt;/b&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("<p>A paragraph with &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>"));
  EXPECT_THAT(html, HasSubstr("aria-label=\"First &lt;chart&gt;\""));
  EXPECT_THAT(html, HasSubstr("<td class=\"text\">RTX &lt;5090&gt;</td>"));
  EXPECT_THAT(html, HasSubstr("note &amp; more"));
  EXPECT_THAT(html, Not(HasSubstr(kInjection)));
}

TEST(RenderHtml, EverySpecSitsInItsOwnJsonScriptBesideItsChart) {
  const std::string html = render_html(sample_page());
  EXPECT_THAT(html, HasSubstr("<div class=\"vega-chart\" id=\"chart-one\" data-spec=\"spec-one\""));
  EXPECT_THAT(html, HasSubstr("<div class=\"vega-chart\" id=\"chart-two\" data-spec=\"spec-two\""));
  const std::string open = "<script type=\"application/json\" id=\"spec-one\">";
  const std::size_t start = html.find(open);
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = html.find("</script>", start);
  const nlohmann::json spec = nlohmann::json::parse(html.substr(start + open.size(), end - start - open.size()));
  EXPECT_EQ(spec["data"]["values"][0]["gpu"], kInjection);
  EXPECT_EQ(chart_count(sample_page()), 2u);
}

TEST(RenderHtml, InlinesTheThreeLibrariesAndLoadsNothing) {
  const std::string html = render_html(sample_page());
  // Three libraries, two specs, the sorting and the rendering script: every <script> is closed, none has a src.
  EXPECT_EQ(count(html, "<script"), 7u);
  EXPECT_EQ(count(html, "</script>"), 7u);
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, HasSubstr("vegaEmbed"));
  EXPECT_THAT(html, HasSubstr("window.gpusageReport"));
  EXPECT_GT(html.size(), 500'000u);  // vega, vega-lite and vega-embed minified are about 840 KB together
  EXPECT_THAT(html, HasSubstr("Vega " GPUSAGE_TEST_VEGA_VERSION));
}

TEST(RenderHtml, TablesSortOnHeadersAndAlignNumbersRight) {
  const std::string html = render_html(sample_page());
  EXPECT_THAT(html, HasSubstr("<table class=\"sortable\">"));
  EXPECT_THAT(html, HasSubstr("<th scope=\"col\" class=\"num\" title=\"Click to sort\">VRAM<span class=\"unit\">GB</span></th>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">32</td>"));
  EXPECT_THAT(html, HasSubstr("table.sortable"));
}

TEST(RenderHtml, LinksOnlyWebSources) {
  const std::string html = render_html(sample_page());
  EXPECT_THAT(html, HasSubstr("<li><a href=\"https://example.invalid/a?x=1&amp;y=2\">Whitepaper</a> — RTX 5090</li>"));
  EXPECT_THAT(html, Not(HasSubstr("href=\"javascript")));
  EXPECT_THAT(html, HasSubstr("<li>Not a link javascript:alert(1)</li>"));
}

TEST(RenderHtml, StatesGeneratorTimeAndCommand) {
  const std::string html = render_html(sample_page());
  EXPECT_THAT(html, HasSubstr("Generated 2026-12-02T15:50:00Z by gpusage test."));
  EXPECT_THAT(html, HasSubstr("<code>gpusage report --out r.html</code>"));
}

}  // namespace
}  // namespace gpusage::report
