// run/hang: when a quiet run is hung, and what the finding says about its processes.
#include "run/hang.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpusage::run {
namespace {

TEST(HangWatch, QuietOutputForTheLimitIsAHangWhateverTheGpusDo) {
  HangWatch watch(10);
  EXPECT_FALSE(watch.due(109, 100));  // 9 s of quiet
  const auto quiet = watch.due(110.5, 100);
  ASSERT_TRUE(quiet);
  EXPECT_EQ(*quiet, 10.5);
}

TEST(HangWatch, AQuietSpellIsAnnouncedOnceAndNewOutputRearmsIt) {
  HangWatch watch(1);
  EXPECT_TRUE(watch.due(2, 0));
  EXPECT_FALSE(watch.due(3, 0));
  EXPECT_FALSE(watch.due(3.5, 3));  // output at 3: a new spell, 0.5 s old
  EXPECT_TRUE(watch.due(4, 3));
}

device::GpuSample reading(unsigned utilization, double power_w, double limit_w) {
  device::GpuSample g;
  g.utilization_gpu_percent = utilization;
  g.power_w = power_w;
  g.power_limit_w = limit_w;
  return g;
}

TEST(GpuActivity, BusyAtLowPowerIsSpinningBusyAtPowerIsComputingUnder5PercentIsIdle) {
  EXPECT_EQ(classify(gpu_activity({reading(100, 70, 575), reading(100, 72, 575)})), QuietGpus::spinning);
  EXPECT_EQ(classify(gpu_activity({reading(97, 300, 575)})), QuietGpus::computing);
  EXPECT_EQ(classify(gpu_activity({reading(0, 120, 575), reading(3, 60, 575)})), QuietGpus::idle);
  EXPECT_EQ(classify(gpu_activity({})), QuietGpus::not_read);
  device::GpuSample no_power;
  no_power.utilization_gpu_percent = 100;
  EXPECT_EQ(classify(gpu_activity({no_power})), QuietGpus::computing);  // busy, power not read
  const GpuActivity a = gpu_activity({reading(100, 57.5, 575), reading(90, 115, 575), reading(80, 57.5, 575)});
  EXPECT_EQ(a.readings, 3u);
  EXPECT_EQ(*a.utilization_percent, 90);
  EXPECT_DOUBLE_EQ(*a.power_fraction, 0.1);
}

HangEvidence evidence(GpuActivity gpus) {
  HangEvidence e;
  e.quiet_s = 600.4;
  e.after_s = 600;
  e.gpus = gpus;
  e.processes = {"pid 7 python3: S (sleeping), waiting in futex_wait_queue"};
  e.last_lines = {"step 1200 loss 2.31"};
  e.killing = true;
  return e;
}

TEST(HangFinding, NamesTheProcessStatesAndTheLastLines) {
  const auto f = hang_finding(evidence(gpu_activity({reading(0, 115, 575)})));
  EXPECT_EQ(f.id, "run-hang");
  EXPECT_EQ(f.title,
            "no output for 600.4 s (--hang-after 600), GPUs idle (median 0% utilization at 20% of the power limit): "
            "gpusage ended the run's process group (--kill-on-hang)");
  EXPECT_EQ(
      f.evidence,
      "The run's processes:\n  pid 7 python3: S (sleeping), waiting in futex_wait_queue\nIts last lines:\n"
      "  step 1200 loss 2.31");
  EXPECT_TRUE(f.fix.starts_with("A wait on the host side:")) << f.fix;
  EXPECT_EQ(f.fix.find("TORCH_NCCL_TRACE_BUFFER_SIZE"), std::string::npos) << f.fix;
}

TEST(HangFinding, BusyAtLowPowerPointsAtACollectiveAndTheFlightRecorder) {
  const auto f = hang_finding(evidence(gpu_activity({reading(100, 57.5, 575)})));
  EXPECT_EQ(f.title,
            "no output for 600.4 s (--hang-after 600), GPUs busy at low power (median 100% utilization at 10% of "
            "the power limit): gpusage ended the run's process group (--kill-on-hang)");
  EXPECT_TRUE(f.fix.starts_with("Most likely a collective")) << f.fix;
  EXPECT_NE(f.fix.find("Rerun with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 "
                       "TORCH_NCCL_DESYNC_DEBUG=1 NCCL_DEBUG=INFO:"),
            std::string::npos)
      << f.fix;
}

TEST(HangFinding, NeverRecommendsADebugSettingTheRunAlreadyHas) {
  HangEvidence e = evidence(gpu_activity({reading(100, 57.5, 575)}));
  e.settings_already_set = {"NCCL_DEBUG", "TORCH_NCCL_TRACE_BUFFER_SIZE"};
  const auto some = hang_finding(e);
  EXPECT_NE(some.fix.find("Rerun with TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_DESYNC_DEBUG=1:"), std::string::npos)
      << some.fix;
  EXPECT_EQ(some.fix.find("NCCL_DEBUG=INFO"), std::string::npos) << some.fix;
  e.settings_already_set = {"NCCL_DEBUG", "TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
                            "TORCH_NCCL_DESYNC_DEBUG"};
  const auto all = hang_finding(e);
  EXPECT_EQ(all.fix.find("Rerun with"), std::string::npos) << all.fix;
  EXPECT_NE(all.fix.find("The run already sets NCCL's and PyTorch's debug settings"), std::string::npos) << all.fix;
}

TEST(HangFinding, BusyAtFullPowerIsWorkThatPrintsNothing) {
  const auto f = hang_finding(evidence(gpu_activity({reading(97, 300, 575)})));
  EXPECT_NE(f.title.find("GPUs busy (median 97% utilization at 52% of the power limit)"), std::string::npos);
  EXPECT_TRUE(f.fix.starts_with("The GPUs kept computing without a line of output")) << f.fix;
}

TEST(DescribeProcesses, ReadsTheStateAfterTheLastParenthesisAndTheWaitChannel) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("gpusage-proc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "42");
  std::ofstream(root / "42" / "stat") << "42 (py (worker) 1) D 1 42 42 0 -1\n";
  std::ofstream(root / "42" / "wchan") << "nfs_wait_bit_killable";
  const auto lines = describe_processes({42, 43}, root.string());  // 43 exited
  std::filesystem::remove_all(root);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "pid 42 py (worker) 1: D (uninterruptible wait, usually I/O), waiting in nfs_wait_bit_killable");
}

}  // namespace
}  // namespace gpusage::run
