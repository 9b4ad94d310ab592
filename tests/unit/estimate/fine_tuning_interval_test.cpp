// The adapter fine-tuning intervals: a new source's spread (each source's bias plus a run's scatter about it),
// used by plan for LoRA and QLoRA, and judged by validate on ranges drawn without the row's own source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/estimate/uncertainty.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

// Two sources, each with no scatter about its own bias: 20% too fast and 20% too slow. Each source is one draw
// of the bias, spread about the two biases' median (their mean) by two sources' widening.
TEST(FineTuningCell, IsEachSourcesBiasPlusTheScatterAboutIt) {
  const ErrorsBySource errors{{"a", {0.2, 0.2, 0.2}}, {"b", {-0.2, -0.2, -0.2}}};
  const IntervalCell c = fine_tuning_cell("lora", errors);
  EXPECT_EQ(c.family, "lora");
  EXPECT_EQ(c.rows, 6);
  const double center = (std::log(1.2) + std::log(0.8)) / 2, w = source_spread_widening(2);
  EXPECT_NEAR(std::log(c.ratio_p10), center + (std::log(0.8) - center) * w, 1e-12);
  EXPECT_NEAR(std::log(c.ratio_p90), center + (std::log(1.2) - center) * w, 1e-12);
  EXPECT_NEAR(c.median_abs_error, 0.2, 1e-12);  // the runs' own errors, not widened
}

// t(0.9; S - 1) x sqrt(1 + 1/S) / z(0.9): 3.078 x 1.2247 / 1.2816 for two sources, 1.638 x 1.1180 / 1.2816 for
// four, 1.383 x 1.0488 / 1.2816 for ten; none for one source, and towards 1 as the sources grow.
TEST(FineTuningCell, FewSourcesWidenTheBiasSpreadAsAPredictionIntervalDoes) {
  EXPECT_DOUBLE_EQ(source_spread_widening(1), 1.0);
  EXPECT_NEAR(source_spread_widening(2), 2.9416, 1e-3);
  EXPECT_NEAR(source_spread_widening(4), 1.4289, 1e-3);
  EXPECT_NEAR(source_spread_widening(10), 1.1318, 1e-3);
  EXPECT_NEAR(source_spread_widening(1000), 1.0005, 1e-3);
}

// One source with many runs does not outvote the others: nine runs of source "big" at +50% and one run each of
// three sources at 0% give bias draws {+50%, 0, 0, 0}, each a quarter: the 10th percentile is exactly right and
// the 90th is +50% widened for four sources about their median 0 (the pooled runs would put 75% of the mass at
// +50% and the 10th percentile there too).
TEST(FineTuningCell, WeighsSourcesNotRuns) {
  const ErrorsBySource errors{{"big", std::vector<double>(9, 0.5)}, {"x", {0.0}}, {"y", {0.0}}, {"z", {0.0}}};
  const IntervalCell c = fine_tuning_cell("qlora", errors);
  EXPECT_NEAR(c.ratio_p10, 1.0, 1e-12);
  EXPECT_NEAR(std::log(c.ratio_p90), std::log(1.5) * source_spread_widening(4), 1e-12);
}

// Scatter within a source widens the range of every source: source "a" (bias 0) has runs at -10% and +10%
// of the median in log terms, source "b" none.
TEST(FineTuningCell, AddsTheScatterWithinASourceToEveryBias) {
  const double lo = std::expm1(-0.1), hi = std::expm1(0.1);
  const ErrorsBySource errors{{"a", {lo, 0.0, hi}}, {"b", {0.0, 0.0, 0.0}}};
  const IntervalCell c = fine_tuning_cell("lora", errors);
  // Biases {0, 0}; scatter: a's {-0.1, 0, 0.1} drawn half the time, b's {0} the other half: -0.1 and +0.1 each
  // weigh 1/6, so the 10th and 90th percentiles are -0.1 and +0.1.
  EXPECT_NEAR(std::log(c.ratio_p10), -0.1, 1e-9);
  EXPECT_NEAR(std::log(c.ratio_p90), 0.1, 1e-9);
}

// A source with many wild runs sets the tails no more than its share of sources: "wild" has 9 runs, one of them
// 5x the prediction's error in log terms (+1.6), among three sources with no scatter. That run weighs
// (1/3) x (1/9) = 1/27 of the scatter draws, under the 10% the 90th percentile leaves above it.
TEST(FineTuningCell, OneSourcesOutlierWeighsItsShareOfThatSourcesRuns) {
  std::vector<double> wild(8, 0.0);
  wild.push_back(std::expm1(1.6));
  const ErrorsBySource errors{{"wild", wild}, {"m", {0.0}}, {"n", {0.0}}};
  const IntervalCell c = fine_tuning_cell("qlora", errors);
  EXPECT_NEAR(c.ratio_p90, 1.0, 1e-12);
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

// A full-parameter plan of a causal language model takes the full fine-tuning cell; alone where the model's
// family has no cell of its own (it would borrow from other models), else joined with the family's.
TEST(ThroughputInterval, AFullParameterLlmPlanSpansTheFullFineTuningRunsAndTheFamilysOwn) {
  IntervalTable t = table_with_fine_tuning();
  t.fine_tuning.push_back({"full", "*", "*", 40, 0.8, 1.25, 0.1});
  const Interval alone = throughput_interval(t, 100, "mistral", "bf16", "Ada", 1, "full");
  EXPECT_DOUBLE_EQ(alone.low, 80);    // 100 / 1.25
  EXPECT_DOUBLE_EQ(alone.high, 125);  // 100 / 0.8
  EXPECT_THAT(alone.basis, HasSubstr("full fine-tuning: 40 held-out runs"));
  EXPECT_THAT(alone.warnings, ::testing::Not(::testing::Contains(HasSubstr("mistral model"))));
  // llama · bf16 has its own cell (0.9-1.1): the range is the wider of the two on each side.
  const Interval joined = throughput_interval(t, 100, "llama", "bf16", "Ada", 1, "full");
  EXPECT_DOUBLE_EQ(joined.low, 80);
  EXPECT_DOUBLE_EQ(joined.high, 125);
  EXPECT_THAT(joined.basis, HasSubstr("llama · bf16 · any GPU: 40 held-out runs and full fine-tuning"));
  // A cell passed in (validate's, drawn without a row's source) stands for the table's.
  const IntervalCell others{"full", "*", "*", 30, 0.95, 1.05, 0.05};
  const Interval passed = throughput_interval(t, 100, "mistral", "bf16", "Ada", 1, "full", &others);
  EXPECT_NEAR(passed.low, 100 / 1.05, 1e-9);
  EXPECT_NEAR(passed.high, 100 / 0.95, 1e-9);
}

TEST(FineTuningMethod, IsTheAdapterRecipeFullForACausalLanguageModelOrNothing) {
  TrainingConfig c;
  EXPECT_EQ(fine_tuning_method(c, false), "");
  EXPECT_EQ(fine_tuning_method(c, true), "full");
  c.lora_rank = 16;
  EXPECT_EQ(fine_tuning_method(c, true), "lora");
  c.qlora = true;
  EXPECT_EQ(fine_tuning_method(c, false), "qlora");
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

TEST(IntervalTable, TheBuiltInTableHasEveryFineTuningMethodsCell) {
  const IntervalTable& t = builtin_interval_table();
  ASSERT_EQ(t.fine_tuning.size(), 3u);
  EXPECT_EQ(t.fine_tuning[0].family, "full");
  for (const IntervalCell& c : t.fine_tuning) {
    EXPECT_GE(c.rows, kMinIntervalRows) << c.family;
    EXPECT_LT(c.ratio_p10, 1.0) << c.family;
    EXPECT_GT(c.ratio_p90, 1.0) << c.family;
  }
}

}  // namespace
}  // namespace gpusage::estimate
