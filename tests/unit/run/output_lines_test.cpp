#include "run/output_lines.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

using Lines = std::vector<std::string>;

TEST(LineAssembler, SplitsOnNewlineAndCarriageReturnAcrossChunks) {
  LineAssembler a;
  EXPECT_EQ(a.feed("step 1 lo"), Lines{});
  EXPECT_EQ(a.feed("ss 2.5\n 10%|#  | 1/10\r 20%|## | 2/10\r"),
            (Lines{"step 1 loss 2.5", " 10%|#  | 1/10", " 20%|## | 2/10"}));
  EXPECT_EQ(a.feed("done"), Lines{});
  EXPECT_EQ(a.finish(), Lines{"done"});
}

TEST(LineAssembler, DropsEmptyLinesFromCrLf) {
  LineAssembler a;
  EXPECT_EQ(a.feed("a\r\nb\r\n"), (Lines{"a", "b"}));
}

TEST(LineAssembler, RemovesColourCursorAndTitleEscapes) {
  LineAssembler a;
  // SGR colour, tqdm's cursor-up for nested bars, an OSC window title ended by BEL and one ended by ESC '\'.
  EXPECT_EQ(a.feed("\x1b[31mloss: nan\x1b[0m\n\x1b[A\x1b]0;title\a ok\x1b]2;t\x1b\\!\n"),
            (Lines{"loss: nan", " ok!"}));
}

TEST(LineAssembler, EscapeSplitAcrossChunksIsStillRemoved) {
  LineAssembler a;
  EXPECT_EQ(a.feed("x\x1b["), Lines{});
  EXPECT_EQ(a.feed("1;32my\n"), Lines{"xy"});
}

TEST(LineAssembler, CutsVeryLongLinesAndReplacesControlBytes) {
  LineAssembler a(8);
  const auto lines = a.feed(std::string(100, 'z') + "\n" +
                            std::string("\x01\x02"
                                        "ab\0c",
                                        6) +
                            "\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string(8, 'z'));
  EXPECT_EQ(lines[1], "  ab c");
}

TEST(CleanText, JoinsTheCleanedLines) { EXPECT_EQ(clean_text("\x1b[1ma\rb\nc"), "a\nb\nc\n"); }

}  // namespace
}  // namespace gpusage::run
