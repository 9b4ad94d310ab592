// The report in Chinese: the page's lang attribute, the CJK-capable font stacks, and SVG labels that wrap
// between Chinese characters by display width.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/i18n.hpp"
#include "report/html_page.hpp"
#include "report/svg_chart.hpp"

namespace gpusage::report {
namespace {

using ::testing::HasSubstr;

class ChineseReport : public ::testing::Test {
 protected:
  void TearDown() override { i18n::set_language(i18n::Language::en); }
};

TEST_F(ChineseReport, ThePageIsMarkedChineseWhenWrittenInChinese) {
  EXPECT_THAT(render_html(new_page("t", "", "gpusage report")), HasSubstr("<html lang=\"en\">"));
  i18n::set_language(i18n::Language::zh_CN);
  EXPECT_THAT(render_html(new_page("GPU 对比", "", "gpusage report --lang zh")), HasSubstr("<html lang=\"zh-CN\">"));
}

TEST_F(ChineseReport, PageAndSvgNameAChineseFontOnEachPlatform) {
  const std::string html = render_html(new_page("t", "", "gpusage report"));
  const BarChart chart{"GPU 对比", "", {"rtx5090"}, {{"显存", "GB", 0, {32.0}}}, ""};
  const std::string svg = render_svg(chart);
  for (const char* font : {"PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC"}) {
    EXPECT_THAT(html, HasSubstr(font));
    EXPECT_THAT(svg, HasSubstr(font));
  }
  EXPECT_THAT(html, HasSubstr("font: 15px/1.5 var(--fonts)"));
}

TEST_F(ChineseReport, SvgLabelsBreakBetweenChineseCharacters) {
  BarChart chart{"t", "", {"英伟达 RTX PRO 6000 工作站版", "L4"}, {{"显存", "GB", 0, {}}, {"功耗", "W", 0, {}}}, ""};
  // Many groups of two bars make 69 px groups: 8 columns a line, a Chinese character taking two.
  for (int i = 0; i < 10; ++i) chart.groups.push_back("G" + std::to_string(i));
  for (auto& series : chart.series) series.values.assign(chart.groups.size(), 1.0);
  const std::string svg = render_svg(chart);
  EXPECT_THAT(svg, HasSubstr(">英伟达</text>"));
  EXPECT_THAT(svg, HasSubstr(">RTX PRO</text>"));
  EXPECT_THAT(svg, HasSubstr(">6000 工</text>"));
  EXPECT_THAT(svg, HasSubstr(">作站版</text>"));
}

}  // namespace
}  // namespace gpusage::report
