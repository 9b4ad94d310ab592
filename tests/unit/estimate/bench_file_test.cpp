// The one reader of gpusage bench results (plan --calibration, bench, report).
#include "core/estimate/bench_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/error.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

TEST(BenchFile, ReadsWhereItRanWhatItTrainedAndEachRun) {
  const BenchFile file = read_bench_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/report/bench-rtx5090.json");
  EXPECT_EQ(file.device, "cuda");
  EXPECT_EQ(file.device_name, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(file.model, "resnet50");
  EXPECT_EQ(file.precision, "fp16");
  EXPECT_EQ(file.optimizer, "momentum");
  EXPECT_EQ(file.resolution, 224);
  EXPECT_FALSE(file.seq_len.has_value());
  ASSERT_EQ(file.runs.size(), 4u);
  EXPECT_EQ(file.runs[0].batch, 64);
  EXPECT_TRUE(file.runs[0].ok);
  EXPECT_EQ(file.runs[0].throughput, 1480.0);
  EXPECT_FALSE(file.runs[3].ok);
  EXPECT_EQ(file.runs[3].failure, "out_of_memory");
  EXPECT_FALSE(file.runs[3].throughput.has_value());
}

std::string bench_file_error(const std::string& text) {
  try {
    parse_bench_file(text, "b.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchFile, NamesTheFileAndTheMissingKey) {
  EXPECT_THAT(bench_file_error("not json"), HasSubstr("--bench 'b.json': not valid JSON"));
  EXPECT_THAT(bench_file_error("{}"), HasSubstr("--bench 'b.json': missing 'environment'"));
  EXPECT_THAT(bench_file_error(R"({"environment": {"device_name": "x"}, "model": "resnet50", "precision": "fp16",
                             "runs": [{"status": "ok"}]})"),
              HasSubstr("missing 'batch'"));
  EXPECT_THAT(bench_file_error(R"({"environment": {"device_name": "x"}, "model": "resnet50", "precision": "fp16",
                             "runs": []})"),
              HasSubstr("'runs' is empty"));
  EXPECT_THAT(bench_file_error(R"({"environment": {"device_name": 3}, "model": "resnet50", "precision": "fp16",
                             "runs": []})"),
              HasSubstr("unexpected value"));
}

// Found by fuzz/bench_json (kept in fuzz/regressions/bench_json): a number beyond the field's integer type
// was converted with undefined behaviour; it is a one-line error naming the file and the field.
TEST(BenchFile, AWholeNumberBeyondItsFieldIsAnErrorNamingIt) {
  const std::string head = R"({"environment": {"device_name": "x"}, "model": "resnet50", "precision": "fp16", )";
  EXPECT_THAT(bench_file_error(head + R"("resolution": 9223372036854775808224, "runs": [{"batch": 8}]})"),
              HasSubstr("--bench 'b.json': 'resolution' is 9.223372036854776e+21, outside the whole numbers"));
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": 3e9}]})"), HasSubstr("'batch' is 3000000000.0, outside"));
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": "8"}]})"), HasSubstr("'batch' is \"8\", not a number"));
  EXPECT_EQ(parse_bench_file(head + R"("resolution": 224, "runs": [{"batch": 8}]})", "b.json").resolution, 224);
}

// Found by fuzz/bench_json in a clean-clone .ci/run (kept in fuzz/regressions/bench_json): a run of batch -4
// was read, and --calibration turned it into a negative step-time scale. A batch below 1, or a throughput that
// is not positive, is a one-line error naming the field.
TEST(BenchFile, ANonPositiveBatchOrThroughputIsAnErrorNamingIt) {
  const std::string head = R"({"environment": {"device_name": "x"}, "model": "resnet50", "precision": "fp16", )";
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": -4, "throughput": 1480.0}]})"),
              HasSubstr("--bench 'b.json': 'batch' is -4: a run's batch is at least 1"));
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": 0}]})"), HasSubstr("'batch' is 0"));
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": 8, "throughput": -1480.0}]})"),
              HasSubstr("'throughput' is -1480: a measured throughput is a positive number"));
  EXPECT_THAT(bench_file_error(head + R"("runs": [{"batch": 8, "throughput": 0}]})"), HasSubstr("'throughput' is 0"));
  EXPECT_EQ(parse_bench_file(head + R"("runs": [{"batch": 8, "throughput": 1480.0}]})", "b.json").runs[0].batch, 8);
}

}  // namespace
}  // namespace gpusage::estimate
