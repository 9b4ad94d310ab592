#include "run/log_watch.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

TEST(LogWatch, AnnouncesEachFindingOnceWhenItAppears) {
  LogWatch watch({});
  watch.add("{'loss': 2.31, 'epoch': 0.1}");
  for (const auto& f : watch.scan()) EXPECT_NE(f.id, "log-non-finite");
  watch.add("{'loss': nan, 'epoch': 0.2}");
  auto fresh = watch.scan();
  ASSERT_TRUE(
      std::any_of(fresh.begin(), fresh.end(), [](const auto& f) { return f.id == "log-non-finite"; }));
  watch.add("{'loss': nan, 'epoch': 0.3}");
  fresh = watch.scan();
  EXPECT_TRUE(
      std::none_of(fresh.begin(), fresh.end(), [](const auto& f) { return f.id == "log-non-finite"; }));
}

TEST(LogWatch, NoNewLinesNoScan) {
  LogWatch watch({});
  watch.add("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
  EXPECT_FALSE(watch.scan().empty());
  EXPECT_TRUE(watch.scan().empty());
}

}  // namespace
}  // namespace gpusage::run
