#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/estimate/planner.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;

TrainingConfig adamw_config(int batch, Precision precision) { return toy::config(batch, precision, Optimizer::adamw); }

TEST(Planner, TargetBatchUsesTheFewestAccumulationStepsWithAnExactSplit) {
  auto w = toy::two_block_model();
  auto gpu = toy::gpu(1.0);
  auto c = adamw_config(1, Precision::fp32);
  const int largest = max_batch(w, c, gpu);
  ASSERT_GT(largest, 100);
  // A target below the largest batch needs no accumulation.
  auto small = plan_target_batch(w, c, gpu, 64);
  EXPECT_EQ(small.batch_per_gpu, 64);
  EXPECT_EQ(small.accumulation_steps, 1);
  // A target of 3 x largest: 3 steps of exactly `largest`.
  auto large = plan_target_batch(w, c, gpu, 3 * largest);
  EXPECT_EQ(large.accumulation_steps, 3);
  EXPECT_EQ(large.batch_per_gpu, largest);
}

TEST(Planner, TargetBatchIsSplitAcrossDataParallelGpus) {
  auto w = toy::two_block_model();
  auto gpu = toy::gpu(2.0);  // 1 GB would hold little beside NCCL's 0.69 GB communicator
  auto c = adamw_config(1, Precision::fp32);
  c.gpus_per_node = 4;
  auto plan = plan_target_batch(w, c, gpu, 256);
  EXPECT_EQ(plan.batch_per_gpu * plan.accumulation_steps * 4, 256);
}

TEST(Planner, TargetBatchFailsClearlyWhenNothingFits) {
  auto w = toy::two_block_model();
  EXPECT_THROW(plan_target_batch(w, adamw_config(1, Precision::fp32), toy::gpu(0.5), 256), InputError);
}

TEST(Planner, PredictionReportsThroughputEpochAndEnergy) {
  auto w = toy::two_block_model();
  auto gpu = toy::gpu(1.0);
  auto c = adamw_config(32, Precision::bf16);
  c.dataset_size = 1000;
  auto p = predict(w, c, gpu);
  EXPECT_TRUE(p.fits);
  EXPECT_DOUBLE_EQ(p.throughput, 32 / p.time.step_s);
  ASSERT_TRUE(p.tokens_per_s.has_value());
  EXPECT_DOUBLE_EQ(*p.tokens_per_s, p.throughput * 8);
  ASSERT_TRUE(p.epoch_time_s.has_value());
  EXPECT_DOUBLE_EQ(*p.epoch_time_s, 1000 / p.throughput);
  EXPECT_DOUBLE_EQ(*p.energy_wh_per_epoch, *p.epoch_time_s * 400 / 3600);
}

TEST(Planner, LanguageModelsHaveNoDefaultEpoch) {
  auto p = predict(toy::two_block_model(), adamw_config(1, Precision::bf16), toy::gpu(1.0));
  EXPECT_FALSE(p.epoch_time_s.has_value());
}

TEST(Planner, AdviceWhenItDoesNotFitOffersAccumulationAndMixedPrecision) {
  auto w = toy::two_block_model();
  auto gpu = toy::gpu(1.0);
  auto c = adamw_config(1, Precision::fp32);
  const int largest = max_batch(w, c, gpu);
  c.batch_per_gpu = largest * 2;
  auto p = predict(w, c, gpu);
  ASSERT_FALSE(p.fits);
  bool accumulation = false, mixed = false, lora = false;
  for (const auto& line : p.advice) {
    accumulation |= line.find("2 accumulation steps") != std::string::npos;
    mixed |= line.find("--precision bf16") != std::string::npos;
    lora |= line.find("--lora 16") != std::string::npos;
  }
  EXPECT_TRUE(accumulation);
  EXPECT_TRUE(mixed);
  EXPECT_TRUE(lora);
}

TEST(Planner, RejectsBatchBelowOne) {
  EXPECT_THROW(predict(toy::two_block_model(), adamw_config(0, Precision::fp32), toy::gpu()), InputError);
}

}  // namespace
}  // namespace gpusage::estimate
