// run/hang: when a quiet run is hung, and what the finding says about its processes.
#include "run/hang.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpusage::run {
namespace {

TEST(HangWatch, QuietForTheLimitSinceTheLaterOfOutputAndGpuActivity) {
  HangWatch watch(10);
  EXPECT_FALSE(watch.due(109, 100, std::nullopt));  // 9 s of quiet
  EXPECT_FALSE(watch.due(112, 100, 105));           // the GPU was busy 7 s ago
  const auto quiet = watch.due(115, 100, 105);
  ASSERT_TRUE(quiet);
  EXPECT_EQ(*quiet, 10);
}

TEST(HangWatch, AQuietSpellIsAnnouncedOnceAndNewOutputRearmsIt) {
  HangWatch watch(1);
  EXPECT_TRUE(watch.due(2, 0, std::nullopt));
  EXPECT_FALSE(watch.due(3, 0, std::nullopt));
  EXPECT_FALSE(watch.due(3.5, 3, std::nullopt));  // output at 3: a new spell, 0.5 s old
  EXPECT_TRUE(watch.due(4, 3, std::nullopt));
}

TEST(HangFinding, NamesTheProcessStatesAndTheLastLines) {
  const auto f = hang_finding(600.4, 600, {"pid 7 python3: S (sleeping), waiting in futex_wait_queue"},
                              {"step 1200 loss 2.31"}, true);
  EXPECT_EQ(f.id, "run-hang");
  EXPECT_EQ(
      f.title,
      "no output and no GPU activity for 600.4 s (--hang-after 600): gpusage ended the run's process group "
      "(--kill-on-hang)");
  EXPECT_EQ(
      f.evidence,
      "The run's processes:\n  pid 7 python3: S (sleeping), waiting in futex_wait_queue\nIts last lines:\n"
      "  step 1200 loss 2.31");
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
