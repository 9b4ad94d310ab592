// The batches a comparison (guide, report) sweeps when none are given: per model kind, and never a card that
// shows nothing fitting where plan finds a batch that fits.
#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::estimate {
namespace {

using workload::Domain;

TEST(BatchLadder, VisionKeepsItsLadderWhenEveryCardFitsItsFirstBatch) {
  EXPECT_EQ(batch_ladder(Domain::vision, {32, 64, 128, 256}, {250, 180, 90}), (std::vector<int>{32, 64, 128, 256}));
}

TEST(BatchLadder, LanguageModelsTakePowersOfTwoUpToTheFirstAboveTheLargestBatch) {
  // QLoRA 8B at 2048 tokens: a handful of samples fit; 8 is the first power of two above 7.
  EXPECT_EQ(batch_ladder(Domain::language, {32, 64, 128, 256}, {7, 5}), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(batch_ladder(Domain::language, {}, {8}), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(batch_ladder(Domain::language, {}, {0}), (std::vector<int>{1, 2}));
}

TEST(BatchLadder, ALongLanguageLadderKeepsItsTopEightAndACardsFittingBatch) {
  // BERT-base at 128 tokens fits hundreds: the top eight powers of two, and 2 for the card that fits 3.
  EXPECT_EQ(batch_ladder(Domain::language, {}, {700, 3}), (std::vector<int>{2, 8, 16, 32, 64, 128, 256, 512, 1024}));
}

TEST(BatchLadder, ACardBelowTheVisionLadderGetsTheLargestPowerOfTwoThatFitsIt) {
  EXPECT_EQ(batch_ladder(Domain::vision, {32, 64, 128, 256}, {250, 20, 0}), (std::vector<int>{16, 32, 64, 128, 256}));
}

TEST(BatchLadder, TheSweepOfAnLlmOnTwoCardsFitsABatchOnEachCard) {
  const catalog::Catalog& catalog = catalog::Catalog::active();
  workload::WorkloadOptions options;
  options.seq_len = 2048;
  TrainingConfig base;
  base.precision = catalog::Precision::bf16;
  base.qlora = true;
  base.checkpointing = true;
  SweepRequest request;
  request.gpus = {&catalog.resolve("rtx5090"), &catalog.resolve("rtx4090")};
  request.batches = {32, 64, 128, 256};
  request.ladder = true;
  const Sweep sweep = run_sweep(workload::build("llama3.1-8b", options), base, Calibration{}, request, catalog);
  ASSERT_FALSE(sweep.predictions.empty());
  for (const catalog::Gpu* gpu : request.gpus) {
    int fitting = 0, largest = 0;
    for (const auto& p : sweep.predictions) {
      if (p.gpu->id != gpu->id) continue;
      largest = p.max_batch;
      fitting += p.fits;
      EXPECT_LE(p.config.batch_per_gpu, 2 * std::max(1, p.max_batch)) << gpu->id;
    }
    EXPECT_GT(largest, 0) << gpu->id;
    EXPECT_GT(fitting, 0) << gpu->id;
  }
}

}  // namespace
}  // namespace gpusage::estimate
