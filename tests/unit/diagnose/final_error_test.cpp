// The fallback for a failed run no family explains (issue 54): one finding that quotes the final error and
// the library that raised it, never on a clean log.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/common/text.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

std::vector<Finding> diagnose(const std::string& text) { return check_log(scan_log(text), RunContext{}); }

TEST(UnrecognisedError, QuotesTheTracebacksLastLineAndTheLibraryOfItsLastFrame) {
  const auto findings = diagnose(
      "{'loss': 1.2, 'learning_rate': 2e-05, 'epoch': 0.5}\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/train.py\", line 88, in <module>\n"
      "    trainer.train()\n"
      "  File \"/opt/conda/lib/python3.10/site-packages/transformers/trainer.py\", line 1539, in train\n"
      "    return inner_training_loop(\n"
      "ValueError: Expected input batch_size (16) to match target batch_size (8).\n");
  ASSERT_EQ(ids(findings), std::vector<std::string>{"log-unrecognised-error"});
  const Finding& f = findings.front();
  EXPECT_EQ(f.severity, Severity::error);
  EXPECT_EQ(f.title, "The run failed with an error doctor does not recognise (raised in transformers, line 7)");
  EXPECT_EQ(f.evidence, "line 7: ValueError: Expected input batch_size (16) to match target batch_size (8).");
  EXPECT_NE(f.fix.find("search the error's text in transformers's issue tracker"), std::string::npos) << f.fix;
}

TEST(UnrecognisedError, UserCodeTakesTheExceptionsOwnNamespace) {
  const auto findings = diagnose(
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "    main()\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n");
  ASSERT_EQ(ids(findings), std::vector<std::string>{"log-unrecognised-error"});
  EXPECT_NE(findings.front().title.find("raised in torch,"), std::string::npos) << findings.front().title;
}

TEST(UnrecognisedError, ACppTerminateNamesItsNamespace) {
  const auto findings = diagnose(
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  unexpected pos 832 vs 800\n");
  ASSERT_EQ(ids(findings), std::vector<std::string>{"log-unrecognised-error"});
  EXPECT_NE(findings.front().title.find("raised in c10,"), std::string::npos) << findings.front().title;
}

TEST(UnrecognisedError, NotWhenAFamilyExplainsTheFailure) {
  const auto findings = diagnose(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_FALSE(find(findings, "log-unrecognised-error")) << text::join(ids(findings));
  EXPECT_TRUE(find(findings, "log-illegal-memory-access")) << text::join(ids(findings));
}

TEST(UnrecognisedError, NeverOnACleanLog) {
  const std::string dir = std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/";
  std::ifstream index(dir + "real/index.csv");
  std::string line;
  int clean = 0;
  while (std::getline(index, line)) {
    const auto fields = text::csv_fields(line);
    if (fields.size() < 2 || fields[1] != "clean") continue;
    ++clean;
    const auto findings = check_log(scan_log_file(dir + "real/" + fields[0]), RunContext{});
    EXPECT_FALSE(find(findings, "log-unrecognised-error")) << fields[0];
  }
  EXPECT_GE(clean, 40);
  EXPECT_FALSE(find(check_log(scan_log_file(dir + "logs/clean.log"), RunContext{}), "log-unrecognised-error"));
}

}  // namespace
}  // namespace gpusage::diagnose
