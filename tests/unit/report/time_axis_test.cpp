// report/time_axis: the pages' time axes read as time since the start, at a round step chosen by the span,
// with labels that are all different (the run report's axis read ".900 .900 .900": issue 50).
#include "report/time_axis.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace gpusage::report {
namespace {

using ::testing::ElementsAre;

TEST(TimeTicks, ASecondsSpanCountsSeconds) {
  const TimeTicks t = time_ticks(3.2);
  EXPECT_EQ(t.unit, "s");
  EXPECT_DOUBLE_EQ(t.step_s, 0.5);
  EXPECT_THAT(t.labels, ElementsAre("0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s", "3.0 s"));
  EXPECT_THAT(time_ticks(45).labels, ElementsAre("0 s", "10 s", "20 s", "30 s", "40 s"));
}

TEST(TimeTicks, MinutesReadAsMinutesAndSeconds) {
  const TimeTicks t = time_ticks(200);
  EXPECT_EQ(t.unit, "min:s");
  EXPECT_THAT(t.labels, ElementsAre("0:00", "0:30", "1:00", "1:30", "2:00", "2:30", "3:00"));
  EXPECT_THAT(time_ticks(40 * 60).labels, ElementsAre("0:00", "5:00", "10:00", "15:00", "20:00", "25:00", "30:00",
                                                      "35:00", "40:00"));
}

TEST(TimeTicks, HoursReadAsHoursAndMinutes) {
  const TimeTicks t = time_ticks(3 * 3600 + 600);
  EXPECT_EQ(t.unit, "h:min");
  EXPECT_THAT(t.labels, ElementsAre("0:00", "0:30", "1:00", "1:30", "2:00", "2:30", "3:00"));
  // Days of training: whole-hour steps, still counted in hours.
  EXPECT_EQ(time_ticks(3 * 86400).labels.back(), "72:00");
}

TEST(TimeTicks, EverySpanGivesDistinctLabelsAtMostNinePlusAStart) {
  for (double span : {0.0, 0.05, 0.5, 0.95, 1.7, 7.0, 59.0, 61.0, 89.9, 95.0, 599.0, 3599.0, 5400.0, 5401.0, 9000.0,
                      86399.0, 200000.0, 2e6}) {
    SCOPED_TRACE(span);
    const TimeTicks t = time_ticks(span);
    ASSERT_FALSE(t.labels.empty());
    EXPECT_EQ(t.labels.size(), t.values_s.size());
    EXPECT_LE(t.labels.size(), 9u);
    EXPECT_EQ(std::set<std::string>(t.labels.begin(), t.labels.end()).size(), t.labels.size());
    EXPECT_DOUBLE_EQ(t.values_s.front(), 0);
    EXPECT_LE(t.values_s.back(), std::max(span, 0.0) + 1e-9);
  }
}

TEST(TimeAxisEncoding, MapsEachTickToItsLabelOverTheSpan) {
  const nlohmann::json x = time_axis_encoding("elapsed_s", 200, "2026-12-07T17:00:00Z");
  EXPECT_EQ(x["field"], "elapsed_s");
  EXPECT_EQ(x["type"], "quantitative");
  EXPECT_EQ(x["title"], "Time since 2026-12-07T17:00:00Z (min:s)");
  EXPECT_EQ(x["scale"]["domain"], nlohmann::json::array({0, 200}));
  EXPECT_EQ(x["axis"]["values"].size(), 7u);
  const std::string expression = x["axis"]["labelExpr"];
  EXPECT_THAT(expression, ::testing::HasSubstr("abs(datum.value - 30) < 1e-6 ? '0:30'"));
  EXPECT_THAT(expression, ::testing::HasSubstr("abs(datum.value - 180) < 1e-6 ? '3:00'"));
}

}  // namespace
}  // namespace gpusage::report
