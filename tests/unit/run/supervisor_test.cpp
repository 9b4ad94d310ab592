#include "run/supervisor.hpp"

#include <gtest/gtest.h>

#include "core/common/error.hpp"

namespace gpusage::run {
namespace {

TEST(DefaultLogDir, UtcTimeAndCommandName) {
  // 2026-12-02T20:50:12Z
  EXPECT_EQ(default_log_dir({"/usr/bin/python3", "train.py"}, 1796244612),
            "gpusage-runs/20261202T205012Z-python3");
  EXPECT_EQ(default_log_dir({"my run!"}, 0), "gpusage-runs/19700101T000000Z-my_run_");
}

TEST(ResolveExecutable, SearchesPathLikeExecvp) {
  EXPECT_EQ(resolve_executable("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(resolve_executable("no-such-program-here", "/bin:/usr/bin"), "");
  EXPECT_EQ(resolve_executable("/bin/sh", ""), "/bin/sh");
  EXPECT_EQ(resolve_executable("/etc/passwd", ""), "");  // not executable
}

TEST(Supervise, RefusesBadOptionsBeforeStartingAnything) {
  RunRequest r;
  EXPECT_THROW(supervise(r), InputError);
  r.command = {"true"};
  r.interval_s = 0.01;
  try {
    supervise(r);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--interval 0.01: accepted values are 0.1 to 3600 seconds");
  }
}

}  // namespace
}  // namespace gpusage::run
