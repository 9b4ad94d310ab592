// The adapter fine-tuning intervals: a new source's spread (each source's bias plus a run's scatter about it),
// used by plan for LoRA and QLoRA, and judged by validate on ranges drawn without the row's own source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/estimate/uncertainty.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

// Two sources, each with no scatter about its own bias: 20% too fast and 20% too slow. The pooled runs'
// quantiles and the two-level ones agree here; what the two-level range adds is each source one draw.
TEST(FineTuningCell, IsEachSourcesBiasPlusTheScatterAboutIt) {
  const ErrorsBySource errors{{"a", {0.2, 0.2, 0.2}}, {"b", {-0.2, -0.2, -0.2}}};
  const IntervalCell c = fine_tuning_cell("lora", errors);
  EXPECT_EQ(c.family, "lora");
  EXPECT_EQ(c.rows, 6);
  EXPECT_NEAR(c.ratio_p10, 0.8, 1e-12);
  EXPECT_NEAR(c.ratio_p90, 1.2, 1e-12);
  EXPECT_NEAR(c.median_abs_error, 0.2, 1e-12);
}

// One source with many runs does not outvote the others: nine runs of source "big" at +50% and one run each of
// three sources at 0% give bias draws {+50%, 0, 0, 0}: the median source is right, and the 10th percentile is
// exactly right, where pooled runs would put 90% of the mass at +50%.
TEST(FineTuningCell, WeighsSourcesNotRuns) {
  const ErrorsBySource errors{{"big", std::vector<double>(9, 0.5)}, {"x", {0.0}}, {"y", {0.0}}, {"z", {0.0}}};
  const IntervalCell c = fine_tuning_cell("qlora", errors);
  EXPECT_NEAR(c.ratio_p10, 1.0, 1e-12);
  // Pairs: 4 biases x 12 runs' scatter (all 0): {1.5 x 12, 1.0 x 36}; the 90th percentile is 1.5.
  EXPECT_NEAR(c.ratio_p90, 1.5, 1e-12);
}

// Scatter within a source widens the range of every source: source "a" (bias 0) has runs at -10% and +10%
// of the median in log terms.
TEST(FineTuningCell, AddsTheScatterWithinASourceToEveryBias) {
  const double lo = std::expm1(-0.1), hi = std::expm1(0.1);
  const ErrorsBySource errors{{"a", {lo, 0.0, hi}}, {"b", {0.0, 0.0, 0.0}}};
  const IntervalCell c = fine_tuning_cell("lora", errors);
  // Pairs: biases {0, 0} x scatter {-0.1, 0, 0.1, 0, 0, 0}, sorted {-0.1 x 2, 0 x 8, 0.1 x 2}: the 10th
  // percentile sits at position 1.1 (-0.1 + 0.1 x 0.1), the 90th at 9.9.
  EXPECT_NEAR(std::log(c.ratio_p10), -0.09, 1e-9);
  EXPECT_NEAR(std::log(c.ratio_p90), 0.09, 1e-9);
}

TEST(FineTuningCell, NoRunsIsAnEmptyCell) {
  const IntervalCell c = fine_tuning_cell("lora", {});
  EXPECT_EQ(c.rows, 0);
}

IntervalTable table_with_fine_tuning() {
  IntervalTable t;
  t.method = "leave-one-gpu-out";
  t.cells = {{"llama", "bf16", "*", 40, 0.9, 1.1, 0.05}, {"*", "*", "*", 100, 0.9, 1.1, 0.05}};
  t.multi_gpu = {"*", "*", "*", 20, 0.8, 1.2, 0.1};
  t.fine_tuning = {{"lora", "*", "*", 30, 0.7, 1.4, 0.15}, {"qlora", "*", "*", 4, 0.5, 2.0, 0.3}};
  t.max_validated_gpus = 8;
  return t;
}

TEST(ThroughputInterval, AnAdapterPlanTakesItsMethodsCellBeforeTheModelsOrTheDataParallelOne) {
  const Interval i = throughput_interval(table_with_fine_tuning(), 140, "llama", "bf16", "Ada", 2, "lora");
  EXPECT_DOUBLE_EQ(i.low, 100);   // 140 / 1.4
  EXPECT_DOUBLE_EQ(i.high, 200);  // 140 / 0.7
  EXPECT_THAT(i.basis, HasSubstr("LoRA fine-tuning: 30 held-out runs"));
  // The method's cell pools every fine-tuned model: no model family warning; an unvalidated GPU count still warns.
  const Interval mistral = throughput_interval(table_with_fine_tuning(), 140, "mistral", "bf16", "Ada", 16, "lora");
  EXPECT_THAT(mistral.warnings, ::testing::Not(::testing::Contains(HasSubstr("mistral model"))));
  EXPECT_THAT(mistral.warnings, ::testing::Contains(HasSubstr("no validation run with 16 GPUs")));
  const Interval full = throughput_interval(table_with_fine_tuning(), 140, "mistral", "bf16", "Ada", 1);
  EXPECT_THAT(full.warnings, ::testing::Contains(HasSubstr("no validation run of a mistral model")));
}

TEST(ThroughputInterval, AMethodCellWithTooFewRunsFallsBackToTheUsualCells) {
  const Interval i = throughput_interval(table_with_fine_tuning(), 110, "llama", "bf16", "Ada", 1, "qlora");
  EXPECT_DOUBLE_EQ(i.low, 100);  // llama · bf16 · any GPU: 110 / 1.1
  EXPECT_THAT(i.basis, HasSubstr("llama · bf16 · any GPU"));
}

TEST(FineTuningMethod, IsTheAdapterRecipeOrNothing) {
  TrainingConfig c;
  EXPECT_EQ(fine_tuning_method(c), "");
  c.lora_rank = 16;
  EXPECT_EQ(fine_tuning_method(c), "lora");
  c.qlora = true;
  EXPECT_EQ(fine_tuning_method(c), "qlora");
}

TEST(IntervalTable, FineTuningCellsRoundTripAndOlderTablesHaveNone) {
  const IntervalTable t = table_with_fine_tuning();
  const std::string json = interval_table_json(t, "published.csv");
  const IntervalTable back = parse_interval_table(json, "x.json");
  ASSERT_EQ(back.fine_tuning.size(), 2u);
  EXPECT_EQ(back.fine_tuning[0].family, "lora");
  EXPECT_DOUBLE_EQ(back.fine_tuning[0].ratio_p90, 1.4);
  const std::string older = R"({"method": "in-sample", "max_validated_gpus": 1, "multi_gpu": {"family": "*",
    "precision": "*", "architecture": "*", "rows": 0, "ratio_p10": 1, "ratio_p90": 1, "median_abs_error": 0},
    "cells": []})";
  EXPECT_TRUE(parse_interval_table(older, "old.json").fine_tuning.empty());
}

TEST(IntervalTable, TheBuiltInTableHasTheAdapterMethodsCells) {
  const IntervalTable& t = builtin_interval_table();
  ASSERT_EQ(t.fine_tuning.size(), 2u);
  for (const IntervalCell& c : t.fine_tuning) {
    EXPECT_GE(c.rows, kMinIntervalRows) << c.family;
    EXPECT_LT(c.ratio_p10, 1.0) << c.family;
    EXPECT_GT(c.ratio_p90, 1.0) << c.family;
  }
}

}  // namespace
}  // namespace gpusage::estimate
