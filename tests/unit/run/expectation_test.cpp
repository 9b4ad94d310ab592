// run/expectation: unit conversions, MFU arithmetic and the live check against plan's interval.
#include "run/expectation.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

// A hand-made prediction: 1,000 samples/s per GPU (80%: 800 to 1,200) at batch 64 on a 200-TFLOPS card.
Expectation sample_expectation() {
  Expectation e;
  e.model = "ResNet-50";
  e.gpu_id = "rtx5090";
  e.gpu_name = "GeForce RTX 5090";
  e.precision = catalog::Precision::bf16;
  e.batch = 64;
  e.samples_per_s = 1000;
  e.samples_per_s_low = 800;
  e.samples_per_s_high = 1200;
  e.utilization_percent = 99;
  e.model_flops_per_sample = 24e9;
  e.peak_tflops = 200;
  return e;
}

TEST(Expectation, AnIterationIsOneStepOfBatchTimesAccumulationSamples) {
  Expectation e = sample_expectation();
  e.accumulation = 4;
  EXPECT_EQ(samples_per_unit(e, "it", "tqdm"), 256.0);
  EXPECT_EQ(samples_per_unit(e, "steps", "keras"), 256.0);
  EXPECT_EQ(samples_per_unit(e, "img", "tqdm"), 1.0);
}

TEST(Expectation, FrameworkSampleRatesCountTheWholeWorld) {
  Expectation e = sample_expectation();
  e.world_size = 8;
  EXPECT_EQ(samples_per_unit(e, "samples", "hf-trainer"), 1.0 / 8);
  EXPECT_EQ(samples_per_unit(e, "samples", "tqdm"), 1.0);
}

TEST(Expectation, TokensConvertOnlyForLanguageModels) {
  Expectation e = sample_expectation();
  EXPECT_FALSE(samples_per_unit(e, "tok", "tqdm"));
  e.tokens_per_sample = 2048;
  EXPECT_EQ(samples_per_unit(e, "tok", "tqdm"), 1.0 / 2048);
  EXPECT_FALSE(samples_per_unit(e, "MB", "tqdm"));
}

TEST(Expectation, MfuIsModelFlopsTimesSamplesOverTheDensePeak) {
  const Efficiency f = efficiency(sample_expectation(), 500);
  EXPECT_DOUBLE_EQ(f.achieved_tflops, 24e9 * 500 / 1e12);  // 12 TFLOPS
  ASSERT_TRUE(f.mfu);
  EXPECT_DOUBLE_EQ(*f.mfu, 12.0 / 200);
  Expectation unlisted = sample_expectation();
  unlisted.peak_tflops.reset();
  EXPECT_FALSE(efficiency(unlisted, 500).mfu);
}

TEST(Expectation, LoraCountsForwardAndInputGradientsOnly) {
  workload::Workload w;
  workload::Layer layer;
  layer.forward_flops = 10;
  layer.backward_flops = 20;
  w.layers.push_back(layer);
  EXPECT_EQ(model_flops_per_sample(w, false), 30);
  EXPECT_EQ(model_flops_per_sample(w, true), 20);
}

TEST(ExpectationWatch, FiresOnceAfterTheWindowAndThreeReadingsOutside) {
  ExpectationWatch watch(sample_expectation(), 10);
  const Throughput slow{5, "it", "tqdm"};  // 320 samples/s, below 800
  EXPECT_FALSE(watch.add(100, slow, 20));
  EXPECT_FALSE(watch.add(105, slow, 20));
  EXPECT_FALSE(watch.add(109, slow, 20));  // three readings, 9 s: not yet
  const auto f = watch.add(110, slow, 20);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "run-throughput-below-prediction");
  EXPECT_EQ(f->title,
            "5 it/s against 12.5\u201318.8 predicted for ResNet-50 bf16 batch 64 on GeForce RTX 5090: the "
            "GPU is idle "
            "80% of the time; input-bound");
  EXPECT_FALSE(watch.add(200, slow, 20));  // once
}

TEST(ExpectationWatch, AReadingInsideTheIntervalStartsTheWindowAgain) {
  ExpectationWatch watch(sample_expectation(), 10);
  const Throughput slow{5, "it", "tqdm"}, good{15, "it", "tqdm"};
  watch.add(100, slow, 95);
  watch.add(105, slow, 95);
  watch.add(108, good, 95);  // 960 samples/s: inside
  EXPECT_FALSE(watch.add(111, slow, 95));
  EXPECT_FALSE(watch.add(115, slow, 95));
  EXPECT_FALSE(watch.add(120, slow, 95));  // three readings but 9 s
  const auto f = watch.add(121, slow, 95);
  ASSERT_TRUE(f);
  EXPECT_NE(f->title.find("the GPU is busy (95% utilization): the step itself is slower than the model"),
            std::string::npos)
      << f->title;
}

TEST(ExpectationWatch, FasterThanTheIntervalIsInformation) {
  ExpectationWatch watch(sample_expectation(), 0);
  const Throughput fast{2000, "img", "tqdm"};
  watch.add(1, fast, 99);
  watch.add(2, fast, 99);
  const auto f = watch.add(3, fast, 99);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "run-throughput-above-prediction");
  EXPECT_EQ(f->severity, diagnose::Severity::info);
}

TEST(Expectation, CompareUsesTheFirstThroughputThatConverts) {
  const std::vector<ThroughputSummary> throughput = {{"MB", "tqdm", 9, 100, 100}, {"it", "tqdm", 4, 10, 10}};
  const ExpectationOutcome o = compare(sample_expectation(), throughput, 1e9, 90);
  ASSERT_TRUE(o.measured_samples_per_s);
  EXPECT_EQ(*o.measured_samples_per_s, 640);
  EXPECT_EQ(o.verdict, Verdict::below);
  EXPECT_EQ(o.reading->unit, "it");
}

}  // namespace
}  // namespace gpusage::run
