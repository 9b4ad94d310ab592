#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "e2e/run_cli.hpp"
#include "monitor/append_file.hpp"
#include "monitor/log_writer.hpp"
#include "monitor/views.hpp"
#include "unit/monitor/sample_fixture.hpp"

namespace gpusage::monitor {
namespace {

using testing::sample_at;
using testing::training_gpu;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpusage-log-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(LogWriter, CsvHeaderIsWrittenOnceAcrossRuns) {
  std::string path = temp_path("a.csv");
  std::filesystem::remove(path);
  {
    LogWriter log(path);
    log.write(sample_at(1, {training_gpu()}), {});
  }
  {
    LogWriter log(path);  // appends
    log.write(sample_at(2, {training_gpu()}), {});
  }
  auto lines = text::split(gpusage::testing::read_text(path), '\n');
  ASSERT_EQ(lines.size(), 4u);  // header, two rows, and the empty piece after the final newline
  EXPECT_EQ(lines[0] + "\n", csv_header());
  EXPECT_TRUE(lines[1].starts_with("1970-01-01T00:00:01.000Z,1.000,0,"));
  EXPECT_TRUE(lines[2].starts_with("1970-01-01T00:00:02.000Z,2.000,0,"));
  EXPECT_EQ(lines[3], "");
  std::filesystem::remove(path);
}

TEST(LogWriter, JsonLinesHoldOneSamplePerLine) {
  std::string path = temp_path("b.jsonl");
  std::filesystem::remove(path);
  {
    LogWriter log(path);
    EXPECT_EQ(log.format(), LogFormat::json_lines);
    log.write(sample_at(1, {training_gpu()}), {});
    log.write(sample_at(2, {}), {});
  }
  auto lines = text::split(gpusage::testing::read_text(path), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines[0]).at("gpus").size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("unix_time_s"), 2.0);
  std::filesystem::remove(path);
}

TEST(LogWriter, AnUnknownExtensionIsAnInputError) {
  try {
    LogWriter log(temp_path("c.txt"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("use .csv, or .jsonl"), std::string::npos) << e.what();
  }
}

TEST(LogWriter, AnUnwritablePathIsAnInputErrorNamingIt) {
  try {
    LogWriter log("/nonexistent-dir/run.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent-dir/run.csv'"), std::string::npos) << e.what();
  }
}

TEST(AppendFile, AFullDeviceGivesOneWarningAndKeepsTheCallerRunning) {
  AppendFile full("/dev/full", AppendFile::Open::append, "--log");  // every write fails with ENOSPC
  EXPECT_FALSE(full.append("{\"a\":1}\n", 100.0));
  std::optional<std::string> warning = full.take_warning();
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning,
            "gpusage: warning: --log '/dev/full': write failed (No space left on device); the log is cut back to "
            "its last whole record, everything else keeps running, and the log is retried every 1 to 60 s");
  EXPECT_FALSE(full.take_warning());
  EXPECT_FALSE(full.append("{\"a\":2}\n", 100.5));  // before the retry time: skipped
  EXPECT_FALSE(full.append("{\"a\":3}\n", 101.0));  // the retry fails again, silently
  EXPECT_FALSE(full.take_warning());
}

TEST(AppendFile, AppendsWholeRecordsAndCountsTheBytes) {
  std::string path = temp_path("append.jsonl");
  std::filesystem::remove(path);
  {
    AppendFile file(path, AppendFile::Open::append, "--log");
    EXPECT_TRUE(file.append("one\n", 1.0));
    EXPECT_TRUE(file.append("two\n", 2.0));
    EXPECT_EQ(file.size(), 8u);
    EXPECT_FALSE(file.take_warning());
  }
  EXPECT_EQ(gpusage::testing::read_text(path), "one\ntwo\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpusage::monitor
