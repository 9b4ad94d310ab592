#include "core/common/text.hpp"

#include <gtest/gtest.h>

namespace gpusage::text {

TEST(Text, SquashKeepsLowercaseAlphanumericsOnly) { EXPECT_EQ(squash("GeForce RTX 5070 Ti"), "geforcertx5070ti"); }

TEST(Text, SplitTrimsEachPart) {
  EXPECT_EQ(split(" a, b ,c", ','), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
}

TEST(Text, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("rtx5090", "rtx5090"), 0u);
}

TEST(Text, ClosestPrefersSubstringsThenSmallEdits) {
  std::vector<std::string> ids{"rtx5090", "rtx5080", "rtx4090", "h100-sxm5-80gb"};
  auto close = closest("rtx5009", ids);
  ASSERT_FALSE(close.empty());
  EXPECT_EQ(close.front(), "rtx5090");
  EXPECT_EQ(closest("h100", ids), (std::vector<std::string>{"h100-sxm5-80gb"}));
  EXPECT_TRUE(closest("zzzzzzzz", ids).empty());
}

TEST(Text, ClosestTakesTheNearestOfTheChoicesTheWordHolds) {
  // "adamw9" holds both adam and adamw; the nearer, adamw, is the one meant, wherever it stands in the list.
  const std::vector<std::string> optimizers{"sgd", "momentum", "adam", "adamw", "adamw8bit"};
  EXPECT_EQ(closest("adamw9", optimizers, 1), (std::vector<std::string>{"adamw"}));
  EXPECT_EQ(closest("adamw9", optimizers, 3), (std::vector<std::string>{"adamw", "adam"}));  // adamw8bit: 4 edits
}

TEST(Text, TrimRemovesSurroundingWhitespaceOnly) {
  EXPECT_EQ(trim("  RTX 5090\t\n"), "RTX 5090");
  EXPECT_EQ(trim(" \t "), "");
}

TEST(Text, ToLowerLeavesDigitsAndPunctuation) { EXPECT_EQ(to_lower("H100-SXM5-80GB"), "h100-sxm5-80gb"); }

TEST(Text, JoinUsesTheSeparatorBetweenPartsOnly) {
  EXPECT_EQ(join({"rtx5090", "rtx5080"}), "rtx5090, rtx5080");
  EXPECT_EQ(join({"a", "b", "c"}, " or "), "a or b or c");
  EXPECT_EQ(join({}), "");
}

TEST(Text, ClosestStopsAtTheLimitInScoreOrder) {
  std::vector<std::string> ids{"rtx5070", "rtx5090", "rtx5080", "rtx4090"};
  EXPECT_EQ(closest("rtx5090", ids, 2), (std::vector<std::string>{"rtx5090", "rtx5070"}));
}

TEST(Text, CsvFieldQuotesOnlyWhenNeededAndDoublesQuotes) {
  EXPECT_EQ(csv_field("GeForce RTX 5090"), "GeForce RTX 5090");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("16\" card"), "\"16\"\" card\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(Text, CsvFieldsSplitsOnUnquotedCommasAndUndoesQuoting) {
  EXPECT_EQ(csv_fields("resnet50,rtx5090,,1.5\r"), (std::vector<std::string>{"resnet50", "rtx5090", "", "1.5"}));
  EXPECT_EQ(csv_fields("\"a,b\",\"say \"\"hi\"\"\""), (std::vector<std::string>{"a,b", "say \"hi\""}));
  EXPECT_EQ(csv_fields(""), (std::vector<std::string>{""}));
}

TEST(Text, CsvFieldsReadsBackWhatCsvFieldWrites) {
  const std::vector<std::string> values{"plain", "with, comma", "\"quoted\"", ""};
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i) line += (i ? "," : "") + csv_field(values[i]);
  EXPECT_EQ(csv_fields(line), values);
}

}  // namespace gpusage::text
