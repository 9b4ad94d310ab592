// text::display_width and the padding tables and bars are drawn with.
#include <gtest/gtest.h>

#include "core/common/text.hpp"

namespace gpusage::text {

TEST(DisplayWidth, AsciiTakesOneColumnEach) { EXPECT_EQ(display_width("RTX 5090"), 8u); }

TEST(DisplayWidth, ChineseCharactersAndFullwidthPunctuationTakeTwo) {
  EXPECT_EQ(display_width("显存"), 4u);
  EXPECT_EQ(display_width("显存带宽（GB/s）"), 8u + 4u + 4u);  // 4 ideographs, 2 fullwidth parentheses, "GB/s"
  EXPECT_EQ(display_width("批大小 256"), 10u);
}

TEST(DisplayWidth, SymbolsTheTablesUseTakeOne) {
  EXPECT_EQ(display_width("†"), 1u);
  EXPECT_EQ(display_width("–"), 1u);
  EXPECT_EQ(display_width("µs"), 2u);
  EXPECT_EQ(display_width("—"), 1u);
}

TEST(DisplayWidth, CombiningMarksAndZeroWidthCharactersTakeNone) {
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);     // e + combining acute accent
  EXPECT_EQ(display_width("a\xE2\x80\x8B" "b"), 2u);  // zero-width space
}

TEST(DisplayWidth, BrokenUtf8CountsOneColumnPerStrayByte) { EXPECT_EQ(display_width("a\xE6\x98"), 3u); }

TEST(DisplayWidth, PaddingFillsToDisplayColumns) {
  EXPECT_EQ(pad_right("显存", 6), "显存  ");
  EXPECT_EQ(pad_left("显存", 6), "  显存");
  EXPECT_EQ(pad_left("GB", 1), "GB");
}

}  // namespace gpusage::text
