// The table renderers: aligned text that fits a width, Markdown, CSV, and number formatting.
#include "report/table.hpp"

#include <gtest/gtest.h>

namespace gpusage::report {
namespace {

Table gpu_table() {
  Table table;
  table.columns = {{"GPU", "", Align::left, 0},
                   {"Name", "", Align::left, 3},
                   {"FP16", "TFLOPS", Align::right, 0},
                   {"TDP", "W", Align::right, 1}};
  table.add_row({"rtx5090", "GeForce RTX 5090", "209.5", "575"});
  table.add_row({"h100", "H100 SXM5", "989.4", "700"});
  return table;
}

TEST(TableText, AlignsLeftAndRightColumnsWithTwoSpaces) {
  EXPECT_EQ(render_text(gpu_table()),
            "GPU      Name              FP16 (TFLOPS)  TDP (W)\n"
            "-------  ----------------  -------------  -------\n"
            "rtx5090  GeForce RTX 5090          209.5      575\n"
            "h100     H100 SXM5                 989.4      700\n");
}

TEST(TableText, DropsHighestPriorityColumnsFirstAndSaysSo) {
  // 49 columns wide in full; at 40 the Name column (priority 3) goes, and nothing else needs to.
  EXPECT_EQ(render_text(gpu_table(), 40),
            "GPU      FP16 (TFLOPS)  TDP (W)\n"
            "-------  -------------  -------\n"
            "rtx5090          209.5      575\n"
            "h100             989.4      700\n"
            "(not shown to fit 40 columns: Name; use --wide or --format csv)\n");
}

TEST(TableText, DropsSeveralInPriorityOrderButNeverPriorityZero) {
  std::string text = render_text(gpu_table(), 10);
  EXPECT_EQ(text,
            "GPU      FP16 (TFLOPS)\n"
            "-------  -------------\n"
            "rtx5090          209.5\n"
            "h100             989.4\n"
            "(not shown to fit 10 columns: TDP, Name; use --wide or --format csv)\n");
}

TEST(TableText, UnitsOnTheirOwnLineMakeNarrowColumns) {
  Table table = gpu_table();
  table.units_on_own_line = true;
  table.notes.push_back("Tensor figures are dense.");
  EXPECT_EQ(render_text(table),
            "GPU      Name                FP16  TDP\n"
            "                           TFLOPS    W\n"
            "-------  ----------------  ------  ---\n"
            "rtx5090  GeForce RTX 5090   209.5  575\n"
            "h100     H100 SXM5          989.4  700\n"
            "Tensor figures are dense.\n");
}

TEST(TableText, CountsMultibyteCharactersAsOneColumn) {
  Table table;
  table.columns = {{"Step", "µs", Align::right, 0}, {"Note", "", Align::left, 0}};
  table.add_row({"12", "±3 µs"});
  EXPECT_EQ(render_text(table),
            "Step (µs)  Note\n"
            "---------  -----\n"
            "       12  ±3 µs\n");
}

// A Chinese table: headers and cells mixing CJK (two terminal columns each) with ASCII. 37 columns wide.
Table chinese_table() {
  Table table;
  table.columns = {{"GPU", "", Align::left, 0}, {"名称", "", Align::left, 3}, {"显存", "GB", Align::right, 0}};
  table.add_row({"rtx5090", "GeForce RTX 5090", "32"});
  table.add_row({"rtx5090d", "中国版 5090 D", "32"});
  return table;
}

TEST(TableText, ChineseCharactersTakeTwoColumnsInHeadersAndCells) {
  EXPECT_EQ(render_text(chinese_table(), 37),
            "GPU       名称              显存 (GB)\n"
            "--------  ----------------  ---------\n"
            "rtx5090   GeForce RTX 5090         32\n"
            "rtx5090d  中国版 5090 D            32\n");
}

TEST(TableText, FittingCountsDisplayColumnsNotBytesOrCodePoints) {
  // By bytes the table is 43 wide and would lose 名称 at 37; by code points 32 and would keep it at 36.
  EXPECT_EQ(render_text(chinese_table(), 37).find("(not shown"), std::string::npos);
  EXPECT_EQ(render_text(chinese_table(), 36),
            "GPU       显存 (GB)\n"
            "--------  ---------\n"
            "rtx5090          32\n"
            "rtx5090d         32\n"
            "(not shown to fit 36 columns: 名称; use --wide or --format csv)\n");
}

TEST(TableText, UnitsOnTheirOwnLineUnderChineseHeaders) {
  Table table = chinese_table();
  table.units_on_own_line = true;
  EXPECT_EQ(render_text(table),
            "GPU       名称              显存\n"
            "                              GB\n"
            "--------  ----------------  ----\n"
            "rtx5090   GeForce RTX 5090    32\n"
            "rtx5090d  中国版 5090 D       32\n");
}

TEST(TableMarkdown, HeadersWithUnitsAlignmentRowAndEscapedPipes) {
  Table table = gpu_table();
  table.rows[1][1] = "H100 | SXM5";
  table.notes.push_back("Sources: 2.");
  EXPECT_EQ(render_markdown(table),
            "| GPU | Name | FP16 (TFLOPS) | TDP (W) |\n"
            "| :--- | :--- | ---: | ---: |\n"
            "| rtx5090 | GeForce RTX 5090 | 209.5 | 575 |\n"
            "| h100 | H100 \\| SXM5 | 989.4 | 700 |\n"
            "\n"
            "Sources: 2.\n");
}

TEST(TableCsv, QuotesCommasQuotesAndNewlinesOnly) {
  Table table;
  table.columns = {{"name", "", Align::left, 0}, {"price", "USD", Align::right, 0}};
  table.add_row({"RTX 5090, Founders", "1999"});
  table.add_row({"the \"big\" one", ""});
  table.add_row({"two\nlines", "5"});
  table.notes.push_back("notes are not data");
  EXPECT_EQ(render_csv(table),
            "name,price (USD)\n"
            "\"RTX 5090, Founders\",1999\n"
            "\"the \"\"big\"\" one\",\n"
            "\"two\nlines\",5\n");
}

TEST(TableFormat, NumbersGroupThousandsFromTheThreshold) {
  EXPECT_EQ(format_number(8960), "8960");
  EXPECT_EQ(format_number(21760), "21,760");
  EXPECT_EQ(format_number(8960, 0, 1000), "8,960");
  EXPECT_EQ(format_number(1978.94, 1, 1000), "1,978.9");
  EXPECT_EQ(format_number(-1234567.5, 1), "-1,234,567.5");
  EXPECT_EQ(format_number(999, 0, 1000), "999");
  EXPECT_EQ(format_number(0.36434, 2), "0.36");
}

TEST(TableFormat, SignificantFiguresKeepThreeAndEveryIntegerDigit) {
  EXPECT_EQ(format_significant(2925.4), "2925");
  EXPECT_EQ(format_significant(21760.2), "21,760");
  EXPECT_EQ(format_significant(1.4137), "1.41");
  EXPECT_EQ(format_significant(41.26), "41.3");
  EXPECT_EQ(format_significant(0.2449), "0.245");
  EXPECT_EQ(format_significant(0.0012345), "0.00123");  // a rate per watt is never 0
  EXPECT_EQ(format_significant(0), "0");
  EXPECT_EQ(format_significant(1463.2, 3, 1000), "1,463");
}

TEST(TableFormat, OptionalsAndDurations) {
  EXPECT_EQ(format_optional(std::nullopt, 1), "n/a");
  EXPECT_EQ(format_optional(1792.0, 0, 1000), "1,792");
  EXPECT_EQ(format_duration(0.0012), "1.2 ms");
  EXPECT_EQ(format_duration(7500), "2 h 05 min");
}

}  // namespace
}  // namespace gpusage::report
