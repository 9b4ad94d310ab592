// run/notify: option parsing, the rate limit and the documents a hook command receives.
#include "run/notify.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"

namespace gpusage::run {
namespace {

TEST(Notify, WebhookUrlSplitsIntoHostAndPath) {
  const WebhookUrl u = parse_webhook_url("https://ntfy.sh/my-runs?x=1");
  EXPECT_EQ(u.scheme_host_port, "https://ntfy.sh");
  EXPECT_EQ(u.path, "/my-runs?x=1");
  EXPECT_EQ(parse_webhook_url("http://127.0.0.1:8080").path, "/");
  EXPECT_THROW(parse_webhook_url("ntfy.sh/my-runs"), InputError);
}

TEST(Notify, LevelNamesTheValueAndWhatIsAccepted) {
  EXPECT_EQ(parse_notify_level("error"), NotifyLevel::error);
  try {
    parse_notify_level("critical");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--notify-level 'critical': accepted values are info, warning, error");
  }
}

TEST(Notifier, LiveEventsAreRateLimitedAndTheEndCountsWhatWasDropped) {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("gpusage-notify-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(file);
  {
    Notifier notifier({"cat >> " + file + "; echo >> " + file, "", NotifyLevel::warning}, {{"host", "h"}});
    notifier.live({{"event", "finding"}}, NotifyLevel::info, "below the level", 0);
    for (int i = 0; i < kMaxLivePerMinute + 3; ++i)
      notifier.live({{"event", "alert"}}, NotifyLevel::warning, "a", i);
    notifier.finish({{"event", "finished"}}, NotifyLevel::info, "done");
    EXPECT_TRUE(notifier.take_notes().empty());
  }
  std::vector<nlohmann::json> got;
  for (const auto& line : text::split(io::read_file(file, "hook output"), '\n'))
    if (!line.empty()) got.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(file);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kMaxLivePerMinute + 1));
  EXPECT_EQ(got.front(),
            (nlohmann::json{{"host", "h"}, {"event", "alert"}, {"severity", "warning"}, {"text", "a"}}));
  EXPECT_EQ(got.back()["event"], "finished");
  EXPECT_EQ(got.back()["suppressed"], 3);
}

}  // namespace
}  // namespace gpusage::run
