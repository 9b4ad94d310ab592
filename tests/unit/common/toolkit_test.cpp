// core/common: the one reader/writer of files, the one UTC formatter, the one quantile, the one batch-list
// parser and the one subprocess runner that every front end uses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/json.hpp"
#include "core/common/stats.hpp"
#include "core/common/subprocess.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"

namespace gpusage {
namespace {

using ::testing::HasSubstr;

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(IsoUtc, WritesSecondsOrMillisecondsInUtc) {
  EXPECT_EQ(wallclock::iso_utc(0, false), "1970-01-01T00:00:00Z");
  EXPECT_EQ(wallclock::iso_utc(1764690600.9, false), "2025-12-02T15:50:00Z");
  EXPECT_EQ(wallclock::iso_utc(1764690600.9), "2025-12-02T15:50:00.900Z");
  EXPECT_EQ(wallclock::iso_utc(1764690600.123), "2025-12-02T15:50:00.123Z");
}

TEST(IsoUtc, CarriesAMillisecondThatRoundsToTheNextSecond) {
  EXPECT_EQ(wallclock::iso_utc(1764690600.9996), "2025-12-02T15:50:01.000Z");
}

TEST(CompactUtc, IsForFileNames) { EXPECT_EQ(wallclock::compact_utc(1764690600.9), "20251202T155000Z"); }

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  const std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.99), 4.96);
  EXPECT_DOUBLE_EQ(stats::quantile(v, -1), 1.0);  // clamped
  EXPECT_DOUBLE_EQ(stats::quantile(v, 2), 5.0);
  EXPECT_DOUBLE_EQ(stats::median({1, 2, 3, 4}), 2.5);
  EXPECT_THROW(stats::quantile({}, 0.5), std::invalid_argument);
}

TEST(Summarize, GivesTheDistributionOfASample) {
  const stats::Distribution d = stats::summarize({1, 2, 3, 4, 5});
  EXPECT_EQ(d.count, 5);
  EXPECT_DOUBLE_EQ(d.mean, 3);
  EXPECT_DOUBLE_EQ(d.p90, 4.6);
  EXPECT_NEAR(d.cv, 0.527046, 1e-6);
  EXPECT_EQ(stats::summarize({}).count, 0);
}

TEST(BatchList, AcceptsAutoInAnyCaseAndCommaSeparatedSizes) {
  EXPECT_TRUE(parse_batch_list("AUTO").is_auto);
  EXPECT_EQ(parse_batch_list("32, 64,128").sizes, (std::vector<int>{32, 64, 128}));
  EXPECT_EQ(parse_batch_list("1048576").sizes, (std::vector<int>{1048576}));
}

TEST(BatchList, RejectsABadEntryQuotingTheOptionTextAndEntry) {
  EXPECT_EQ(input_error([] { parse_batch_list("2,x"); }),
            "--batch '2,x': 'x' is not a batch size; give auto, or whole numbers from 1 to 1048576 separated by "
            "commas");
  EXPECT_THAT(input_error([] { parse_batch_list("0"); }), HasSubstr("'0' is not a batch size"));
  EXPECT_THAT(input_error([] { parse_batch_list("1048577"); }), HasSubstr("'1048577' is not a batch size"));
  EXPECT_THAT(input_error([] { parse_batch_list("8,,16"); }), HasSubstr("'' is not a batch size"));
}

class Files : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpusage-io-" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(Files, WriteThenReadGivesTheContentBackAndLeavesNoTemporaryFile) {
  const std::string path = (dir / "out.txt").string();
  io::write_file_atomically(path, "hello\n");
  EXPECT_EQ(io::read_file(path, "test file"), "hello\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
}

TEST_F(Files, ReadNamesTheFileThatCannotBeRead) {
  const std::string path = (dir / "missing.json").string();
  EXPECT_EQ(input_error([&] { io::read_file(path, "--bench file"); }), "cannot read --bench file '" + path + "'");
  EXPECT_EQ(input_error([&] { io::read_file(path, ""); }), "cannot read '" + path + "'");
  EXPECT_FALSE(io::try_read_file(path));
}

TEST_F(Files, ReadRefusesAFileOverTheLimitNamingItsSize) {
  const std::string path = (dir / "big.json").string();
  io::write_file_atomically(path, std::string(2u << 20, 'x'));
  EXPECT_EQ(input_error([&] { io::read_file(path, "config", 1u << 20); }),
            "config '" + path + "' is 2097152 bytes; accepted: up to 1048576 bytes (1 MiB)");
}

TEST_F(Files, WriteIntoAMissingDirectoryIsAUserError) {
  EXPECT_THAT(input_error([&] { io::write_file_atomically((dir / "no" / "x").string(), "x"); }),
              HasSubstr("cannot write"));
}

TEST(Subprocess, CapturesStandardOutputAndTheExitCode) {
  process::Options options;
  options.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  options.detached = true;
  options.timeout_s = 30;
  const process::Result r = process::run(options);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "out\n");
}

TEST(Subprocess, StreamsStandardErrorToTheCallbackWithTheGivenEnvironment) {
  process::Options options;
  options.argv = {"/bin/sh", "-c", "echo \"$MARK\" >&2"};
  options.environment = std::vector<std::string>{"MARK=streamed"};
  options.capture = process::Stream::standard_error;
  std::string seen;
  options.on_output = [&](std::string_view chunk) { seen.append(chunk); };
  const process::Result r = process::run(options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(seen, "streamed\n");
  EXPECT_TRUE(r.output.empty());
}

TEST(Subprocess, AProgramThatDoesNotExistIsNotStarted) {
  process::Options options;
  options.argv = {"/nonexistent/program"};
  EXPECT_FALSE(process::run(options).started);
}

TEST(Subprocess, StopsAChildAtTheDeadline) {
  process::Options options;
  options.argv = {"/bin/sh", "-c", "echo started; exec sleep 30"};
  options.detached = true;
  options.timeout_s = 0.3;
  const process::Result r = process::run(options);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.output, "started\n");
}

TEST(Units, FormatsBytesInTheLargestUnitReached) {
  EXPECT_EQ(units::format_bytes(32.0 * units::kGiB), "32.0 GiB");
  EXPECT_EQ(units::format_bytes(512.0 * units::kMiB), "512 MiB");
  EXPECT_EQ(units::format_bytes(units::kGiB - units::kMiB), "1023 MiB");
  EXPECT_EQ(units::format_bytes(4096), "4 KiB");
  EXPECT_EQ(units::format_bytes(17), "17 B");
}

TEST(Units, FormatsGibAndNamesTheSample) {
  EXPECT_EQ(units::format_gib(12.5 * units::kGiB), "12.5 GiB");
  EXPECT_STREQ(units::per_second(units::SampleKind::image), "img/s");
  EXPECT_STREQ(units::per_second(units::SampleKind::sequence), "seq/s");
}

TEST(JsonUtil, WritesAMissingValueAsNull) {
  EXPECT_TRUE(json_util::optional(std::optional<double>()).is_null());
  EXPECT_EQ(json_util::optional(std::optional<int>(3)), 3);
  EXPECT_EQ(json_util::optional_number<int>(nlohmann::json{{"a", "x"}}, "a"), std::nullopt);
}

}  // namespace
}  // namespace gpusage
