#include "run/throughput.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

void expect_reading(std::string_view line, double per_s, const std::string& unit, const std::string& source) {
  auto t = parse_throughput(line);
  ASSERT_TRUE(t) << line;
  EXPECT_NEAR(t->per_second, per_s, 1e-9) << line;
  EXPECT_EQ(t->unit, unit) << line;
  EXPECT_EQ(t->source, source) << line;
}

TEST(Throughput, TqdmIterationsPerSecond) {
  expect_reading("Epoch 1:  45%|████▌     | 45/100 [00:04<00:05,  9.87it/s, loss=0.512]", 9.87, "it", "tqdm");
}

TEST(Throughput, TqdmSecondsPerIterationIsInverted) {
  expect_reading(" 3%|▎         | 3/100 [00:06<03:14,  2.00s/it]", 0.5, "it", "tqdm");
}

TEST(Throughput, TqdmCustomUnitAndUnitScale) {
  expect_reading("train: 100%|██████████| 50000/50000 [00:20<00:00, 2.45kimg/s]", 2450, "img", "tqdm");
  expect_reading("100%|██| 8/8 [00:01<00:00, 612.40samples/s]", 612.4, "samples", "tqdm");
}

TEST(Throughput, ByteRatesOfDownloadsAreIgnored) {
  EXPECT_FALSE(parse_throughput("model.safetensors: 100%|██████████| 548M/548M [00:05<00:00, 98.1MB/s]"));
  EXPECT_FALSE(parse_throughput(" 0%|          | 0/100 [00:00<?, ?it/s]"));
}

TEST(Throughput, HuggingFaceTrainerFinalMetrics) {
  expect_reading(
      "{'train_runtime': 102.3, 'train_samples_per_second': 39.1, 'train_steps_per_second': 4.89, "
      "'train_loss': 0.52, 'epoch': 3.0}",
      4.89, "steps", "hf-trainer");
  expect_reading("{'train_runtime': 10.0, 'train_samples_per_second': 39.1}", 39.1, "samples", "hf-trainer");
}

TEST(Throughput, EvaluationRatesAreNotTrainingThroughput) {
  EXPECT_FALSE(parse_throughput(
      "{'eval_loss': 0.4, 'eval_samples_per_second': 120.5, 'eval_steps_per_second': 15.1}"));
}

TEST(Throughput, LightningThroughputMonitor) {
  expect_reading("train/batches_per_sec=12.5 train/samples_per_sec=400.0", 400.0, "samples", "lightning");
  expect_reading("{'train/samples_per_sec': 1.2e3}", 1200, "samples", "lightning");
}

TEST(Throughput, KerasTimePerStep) {
  expect_reading("100/100 [==============================] - 4s 40ms/step - loss: 0.2183 - accuracy: 0.9371",
                 25, "steps", "keras");
  expect_reading("782/782 ━━━━━━━━━━━━━━━━━━━━ 12s 2s/step - loss: 1.4", 0.5, "steps", "keras");
  expect_reading("10/10 - 0s - 500us/step - loss: 0.1", 2000, "steps", "keras");
}

TEST(Throughput, PlainLinesCarryNone) {
  EXPECT_FALSE(parse_throughput("step 100 loss 2.31 lr 3e-4"));
  EXPECT_FALSE(parse_throughput("saving to runs/s/checkpoint.pt"));
}

}  // namespace
}  // namespace gpusage::run
