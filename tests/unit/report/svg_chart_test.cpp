// The SVG bar chart: structure, scaling per metric, labels with units, escaping, determinism.
#include "report/svg_chart.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

#include "unit/report/count.hpp"

namespace gpusage::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two GPUs, two metrics of different units; one value unknown.
BarChart two_gpu_chart() {
  BarChart chart;
  chart.title = "GPU comparison: rtx50";
  chart.subtitle = "Scaled per metric.";
  chart.y_axis_label = "% of the largest value of each metric";
  chart.groups = {"GeForce RTX 5090", "GeForce RTX 5070"};
  chart.series = {{"CUDA cores", "", 0, {21760.0, 6144.0}}, {"FP16 tensor", "TFLOPS", 1, {209.5, std::nullopt}}};
  return chart;
}

// The heights of the bars, in drawing order.
std::vector<double> bar_heights(const std::string& svg) {
  std::vector<double> heights;
  std::regex bar(R"re(<rect class="bar" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it) {
    heights.push_back(std::stod((*it)[1]));
  }
  return heights;
}

TEST(SvgChart, IsOneStandaloneSvgDocument) {
  std::string svg = render_svg(two_gpu_chart());
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" ", 0), 0u);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "<title>"), count(svg, "</title>"));
}

TEST(SvgChart, OneBarPerKnownValueAndNaForTheUnknown) {
  std::string svg = render_svg(two_gpu_chart());
  EXPECT_EQ(count(svg, "<rect class=\"bar\""), 3u);
  EXPECT_EQ(count(svg, "<rect class=\"legend\""), 2u);
  EXPECT_EQ(count(svg, "<text class=\"value\""), 4u);
  EXPECT_THAT(svg, HasSubstr(">n/a</text>"));
}

TEST(SvgChart, EachMetricIsScaledToItsOwnLargestValue) {
  // The largest of each metric is a full-height (300) bar, whatever its unit; the others are in proportion.
  std::vector<double> heights = bar_heights(render_svg(two_gpu_chart()));
  ASSERT_EQ(heights.size(), 3u);
  EXPECT_DOUBLE_EQ(heights[0], 300);                                 // 21,760 cores
  EXPECT_DOUBLE_EQ(heights[1], 300);                                 // 209.5 TFLOPS
  EXPECT_NEAR(heights[2], 300.0 * 6144 / 21760, 0.05);               // 6,144 cores
}

TEST(SvgChart, ValueLabelsCarryActualValuesAndUnits) {
  std::string svg = render_svg(two_gpu_chart());
  EXPECT_THAT(svg, HasSubstr(">21,760</text>"));
  EXPECT_THAT(svg, HasSubstr(">6,144</text>"));
  EXPECT_THAT(svg, HasSubstr(">209.5 TFLOPS</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>GeForce RTX 5090: FP16 tensor 209.5 TFLOPS</title>"));
}

TEST(SvgChart, TitleLegendAxisAndGroupLabels) {
  std::string svg = render_svg(two_gpu_chart());
  EXPECT_THAT(svg, HasSubstr("font-weight=\"bold\">GPU comparison: rtx50</text>"));
  EXPECT_THAT(svg, HasSubstr(">Scaled per metric.</text>"));
  EXPECT_THAT(svg, HasSubstr(">CUDA cores</text>"));
  EXPECT_THAT(svg, HasSubstr(">FP16 tensor (TFLOPS)</text>"));
  EXPECT_THAT(svg, HasSubstr(">% of the largest value of each metric</text>"));
  EXPECT_THAT(svg, HasSubstr(">100%</text>"));
  EXPECT_EQ(count(svg, "<text class=\"group\""), 2u);  // both names fit one line at this width
  EXPECT_THAT(svg, HasSubstr(">GeForce RTX 5070</text>"));
}

TEST(SvgChart, LongGroupLabelsWrapAtSpaces) {
  BarChart chart = two_gpu_chart();
  chart.groups = {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "L4"};
  // Many groups make narrow groups, so the long name must wrap.
  for (int i = 0; i < 10; ++i) chart.groups.push_back("G" + std::to_string(i));
  for (auto& series : chart.series) series.values.resize(chart.groups.size(), 1.0);
  std::string svg = render_svg(chart);
  EXPECT_THAT(svg, Not(HasSubstr(">NVIDIA RTX PRO 6000 Blackwell Workstation Edition</text>")));
  // 69 px groups hold 8 characters a line: four lines at most, the last cut short with an ellipsis.
  EXPECT_THAT(svg, HasSubstr(">NVIDIA</text>"));
  EXPECT_THAT(svg, HasSubstr(">RTX PRO</text>"));
  EXPECT_THAT(svg, HasSubstr(">6000</text>"));
  EXPECT_THAT(svg, HasSubstr(">Blackwell…</text>"));
  EXPECT_EQ(count(svg, "<text class=\"group\""), 11u + 4u);
}

TEST(SvgChart, SmallKnownValuesStayVisible) {
  BarChart chart = two_gpu_chart();
  chart.series[0].values = {21760.0, 1.0};
  std::vector<double> heights = bar_heights(render_svg(chart));
  ASSERT_EQ(heights.size(), 3u);
  EXPECT_DOUBLE_EQ(heights[2], 1);
}

TEST(SvgChart, EscapesEveryPieceOfText) {
  BarChart chart = two_gpu_chart();
  chart.title = "A & B <compared>";
  chart.groups[0] = "\"Quoted\" & 'single'";
  chart.series[1].name = "FP16 <tensor>";
  std::string svg = render_svg(chart);
  EXPECT_THAT(svg, HasSubstr(">A &amp; B &lt;compared&gt;</text>"));
  EXPECT_THAT(svg, HasSubstr(">&quot;Quoted&quot; &amp; &apos;single&apos;</text>"));
  EXPECT_THAT(svg, HasSubstr(">FP16 &lt;tensor&gt; (TFLOPS)</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("<compared>")));
  EXPECT_THAT(svg, Not(HasSubstr("<tensor>")));
}

TEST(SvgChart, XmlEscape) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("plain µs"), "plain µs");
}

TEST(SvgChart, SameChartSameBytes) { EXPECT_EQ(render_svg(two_gpu_chart()), render_svg(two_gpu_chart())); }

TEST(SvgChart, WidthGrowsWithGroupsAndKeepsAMinimum) {
  std::regex width(R"re(<svg [^>]*width="([0-9.]+)")re");
  auto width_of = [&width](const BarChart& chart) {
    std::smatch m;
    std::string svg = render_svg(chart);
    return std::regex_search(svg, m, width) ? std::stod(m[1]) : -1.0;
  };
  EXPECT_DOUBLE_EQ(width_of(two_gpu_chart()), 760);
  BarChart many = two_gpu_chart();
  many.groups.resize(40, "G");
  for (auto& series : many.series) series.values.resize(40, 1.0);
  // 40 groups of two 18-wide bars, a 3 gap and a 30 group gap, plus 72 + 24 of margins.
  EXPECT_DOUBLE_EQ(width_of(many), 72 + 40 * (18 + 3 + 18 + 30) + 24);
}

TEST(SvgChart, MismatchedSeriesIsAProgrammingError) {
  BarChart chart = two_gpu_chart();
  chart.series[0].values.pop_back();
  EXPECT_THROW(render_svg(chart), std::invalid_argument);
}

}  // namespace
}  // namespace gpusage::report
