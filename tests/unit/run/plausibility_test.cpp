// run/plausibility: a throughput that implies more than the card's peak is flagged, not turned into an MFU.
#include "run/plausibility.hpp"

#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"

namespace gpusage::run {
namespace {

// ResNet-50 bf16 batch 256 on an RTX 5090 (209.5 dense bf16 TFLOPS in data/gpus.toml), 24.6 GFLOP per sample.
Expectation resnet_on_5090() {
  Expectation e;
  e.model = "ResNet-50";
  e.gpu_id = "rtx5090";
  e.gpu_name = "GeForce RTX 5090";
  e.precision = catalog::Precision::bf16;
  e.batch = 256;
  e.model_flops_per_sample = 24.6e9;
  e.peak_tflops = 209.5;
  return e;
}

const catalog::Gpu* rtx5090() { return &catalog::Catalog::builtin().resolve("rtx5090"); }

TEST(Plausibility, AThroughputWithinThePeakIsNotFlagged) {
  // 512 samples/s = 12.6 TFLOPS: 6% MFU.
  EXPECT_FALSE(implausible_reading(resnet_on_5090(), rtx5090(), Throughput{2, "it", "tqdm"}));
  // 8,500 samples/s = 209.1 TFLOPS: just under the peak still counts as possible.
  EXPECT_FALSE(implausible_throughput(resnet_on_5090(), rtx5090(), 8500, 256, "it"));
}

TEST(Plausibility, MfuAbove100PercentIsFlaggedWithItsLikelyCauses) {
  // 100 it/s x 256 = 25,600 samples/s = 629.8 TFLOPS, 3.0x the 209.5 dense bf16 TFLOPS.
  const auto f = implausible_reading(resnet_on_5090(), rtx5090(), Throughput{100, "it", "tqdm"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "run-throughput-implausible");
  EXPECT_EQ(f->title,
            "25600 samples/s per GPU would be 629.8 TFLOPS of ResNet-50, 3.0x what GeForce RTX 5090 can do (209.5 "
            "dense bf16 tensor TFLOPS): the throughput is not what the run trains, and no MFU is given");
  EXPECT_EQ(f->evidence,
            "One 'it' is taken as 256 samples per GPU (--batch 256); ResNet-50 at 24.6 GFLOP per sample (forward and "
            "backward).");
  EXPECT_NE(f->fix.find("Check what one 'it' counts"), std::string::npos);
  EXPECT_NE(f->fix.find("give --batch as the per-GPU batch (not the global batch over all GPUs)"), std::string::npos);
  EXPECT_NE(f->fix.find("on GeForce RTX 5090 and not a smaller model or another card"), std::string::npos);
}

TEST(Plausibility, WithoutARateAtThePrecisionTheFastestRateTheCardListsIsTheCeiling) {
  Expectation e = resnet_on_5090();
  e.peak_tflops.reset();
  const catalog::Gpu* card = rtx5090();
  const auto ceiling = compute_ceiling(e, card);
  ASSERT_TRUE(ceiling);
  EXPECT_GE(ceiling->tflops, *card->bf16_tflops);  // fp8/fp4 rates included: the most generous reading
  EXPECT_FALSE(implausible_throughput(e, card, ceiling->tflops * 1e12 / e.model_flops_per_sample * 0.99, 1, "it"));
  EXPECT_TRUE(implausible_throughput(e, card, ceiling->tflops * 1e12 / e.model_flops_per_sample * 1.01, 1, "it"));
  EXPECT_FALSE(compute_ceiling(e, nullptr));  // no card, no ceiling: nothing is flagged
}

TEST(Plausibility, AnImpossibleMedianWithdrawsTheMfuFromTheSummary) {
  ExpectationSummary s{resnet_on_5090(), {}};
  s.measured = compare(s.expected, {ThroughputSummary{"it", "tqdm", 8, 100, 100}}, std::nullopt, std::nullopt);
  ASSERT_TRUE(s.measured.efficiency);
  ASSERT_GT(*s.measured.efficiency->mfu, 1);
  const auto f = withdraw_implausible(s, rtx5090());
  ASSERT_TRUE(f);
  EXPECT_FALSE(s.measured.efficiency);
  EXPECT_TRUE(efficiency_json(s).is_null());
  EXPECT_EQ(render_expectation(s).find("MFU"), std::string::npos) << render_expectation(s);
  ExpectationSummary fine{resnet_on_5090(), {}};
  fine.measured = compare(fine.expected, {ThroughputSummary{"it", "tqdm", 8, 2, 2}}, std::nullopt, std::nullopt);
  EXPECT_FALSE(withdraw_implausible(fine, rtx5090()));
  EXPECT_TRUE(fine.measured.efficiency);
}

}  // namespace
}  // namespace gpusage::run
