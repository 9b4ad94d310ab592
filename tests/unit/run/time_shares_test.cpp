// run/time_shares: where the wall time went, from hand-made samples and throughput lines.
#include "run/time_shares.hpp"

#include <gtest/gtest.h>

#include "run/summary.hpp"

namespace gpusage::run {
namespace {

RecordedSample at(double t, unsigned utilization) {
  RecordedSample r;
  r.sample.unix_time_s = t;
  device::GpuSample gpu;
  gpu.utilization_gpu_percent = utilization;
  r.sample.gpus.push_back(gpu);
  return r;
}

TimedThroughput line(double t) { return {t, Throughput{2, "it", "tqdm"}}; }

TEST(TimeShares, StartupPausesInputWaitAndTraining) {
  // Run from 0 to 20 s. Lines at 4, 5, 6, 7 (1 s apart), then a 6 s gap (a pause: over 3x the median 1 s),
  // then 13, 14; the run ends at 20. Samples every second: 25% busy until 10 s, 75% busy after.
  std::vector<RecordedSample> samples;
  for (int t = 0; t < 20; ++t) samples.push_back(at(t, t < 10 ? 25 : 75));
  const auto s =
      estimate_time_shares(0, 20, samples, {line(4), line(5), line(6), line(7), line(13), line(14)});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->wall_s, 20);
  EXPECT_DOUBLE_EQ(s->startup_s, 4);
  EXPECT_DOUBLE_EQ(s->pauses_s, 6 + 6);  // the gap 7-13 and the tail 14-20
  // Flowing: 4-7 at 25% busy (2.25 s idle of 3) and 13-14 at 75% (0.25 s idle of 1).
  EXPECT_DOUBLE_EQ(s->input_wait_s, 2.5);
  EXPECT_DOUBLE_EQ(s->training_s, 1.5);
}

TEST(TimeShares, NoneWithoutTwoLines) { EXPECT_FALSE(estimate_time_shares(0, 10, {at(0, 50)}, {line(3)})); }

TEST(TimeShares, TheBarShowsEachShareAndTheFixForTheLargestAvoidable) {
  TimeShares s{20, 4, 12, 2.5, 1.5};
  EXPECT_EQ(
      render_time_bar(s, 20),
      "gpusage: time [ssssiiieeeeeeeeeeee#] startup 20%, input wait 12%, eval/checkpoint 60%, training 8% "
      "(s i e #)\n"
      "gpusage:   fix for eval/checkpoint: evaluate less often or on a subset, save checkpoints "
      "asynchronously "
      "(torch.distributed.checkpoint.async_save)\n");
}

}  // namespace
}  // namespace gpusage::run
