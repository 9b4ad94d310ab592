// run/advice: the summary's advice never recommends what the run already does. The findings are doctor's real
// rules over real logs (tests/fixtures/doctor/logs), as final_findings makes them at the end of a run.
#include "run/advice.hpp"

#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/workload/workload.hpp"
#include "run/run_report.hpp"

namespace gpusage::run {
namespace {

std::vector<diagnose::Finding> findings_of(const std::string& log, const diagnose::RunContext& context = {}) {
  return final_findings(
      diagnose::read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/" + log), context, {});
}

const diagnose::Finding& find(const std::vector<diagnose::Finding>& findings, const std::string& id) {
  for (const auto& f : findings)
    if (f.id == id) return f;
  throw std::runtime_error("no finding " + id);
}

RunPractice bf16_run() { return RunPractice{catalog::Precision::bf16, false}; }

TEST(Advice, ADivergedBf16RunIsNotToldToPreferBf16) {
  auto findings = findings_of("nan_loss.log");
  ASSERT_NE(find(findings, "log-non-finite").fix.find("prefer bf16"), std::string::npos);  // the rule says it
  drop_followed_advice(findings, bf16_run());
  const std::string& fix = find(findings, "log-non-finite").fix;
  EXPECT_EQ(fix.find("bf16"), std::string::npos) << fix;
  EXPECT_EQ(fix,
            "Lower the learning rate or add warm-up, clip gradients (torch.nn.utils.clip_grad_norm_(model.parameters(), "
            "1.0)), and find the first bad op with torch.autograd.set_detect_anomaly(True).");
}

TEST(Advice, AnFp16RunIsStillToldAboutBf16) {
  auto findings = findings_of("nan_loss.log");
  drop_followed_advice(findings, RunPractice{catalog::Precision::fp16, false});
  EXPECT_NE(find(findings, "log-non-finite").fix.find("prefer bf16"), std::string::npos);
  auto unknown = findings_of("nan_loss.log");
  drop_followed_advice(unknown, RunPractice{});  // no --precision: nothing is known, nothing is dropped
  EXPECT_NE(find(unknown, "log-non-finite").fix.find("prefer bf16"), std::string::npos);
}

TEST(Advice, OverflowSkipsUnderBf16DoNotRecommendBf16) {
  auto findings = findings_of("overflow_skips.log");
  drop_followed_advice(findings, bf16_run());
  const std::string& fix = find(findings, "log-overflow-skips").fix;
  EXPECT_EQ(fix.find("bf16"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Lower the learning rate, or clip gradients."), std::string::npos) << fix;
}

TEST(Advice, AnOomWithoutAModelKeepsOnlyWhatTheRunDoesNotDo) {
  auto mixed = findings_of("oom_pytorch2.log");
  const std::string generic = "; use mixed precision (torch.autocast) or activation checkpointing.";
  ASSERT_NE(find(mixed, "log-cuda-oom").fix.find(generic), std::string::npos);
  drop_followed_advice(mixed, bf16_run());
  EXPECT_EQ(find(mixed, "log-cuda-oom").fix.find("mixed precision"), std::string::npos);
  EXPECT_NE(find(mixed, "log-cuda-oom").fix.find("; use activation checkpointing."), std::string::npos);
  auto both = findings_of("oom_pytorch2.log");
  drop_followed_advice(both, RunPractice{catalog::Precision::bf16, true});
  EXPECT_EQ(find(both, "log-cuda-oom").fix.find("checkpointing"), std::string::npos) << find(both, "log-cuda-oom").fix;
  EXPECT_EQ(find(both, "log-cuda-oom").fix.find("mixed precision"), std::string::npos);
}

TEST(Advice, AnOomPlanDoesNotOfferCheckpointingToARunThatCheckpoints) {
  const workload::Workload resnet = workload::build("resnet50");
  diagnose::RunContext context;
  context.workload = &resnet;
  context.batch = 256;
  context.precision = catalog::Precision::bf16;
  context.gpu = &catalog::Catalog::builtin().resolve("rtx4090");
  auto findings = findings_of("oom_pytorch2.log", context);
  ASSERT_NE(find(findings, "log-cuda-oom").fix.find("Activation checkpointing (torch.utils.checkpoint) would allow"),
            std::string::npos);
  drop_followed_advice(findings, RunPractice{catalog::Precision::bf16, true});
  const std::string& fix = find(findings, "log-cuda-oom").fix;
  EXPECT_EQ(fix.find("checkpointing"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Largest batch that fits"), std::string::npos) << fix;
}

TEST(Advice, ThePracticeComesFromTheRunsOptions) {
  RunRequest request;
  EXPECT_FALSE(practice_of(request).precision);
  request.context.precision = catalog::Precision::bf16;
  ExpectationRequest& expect = request.expectation.emplace();
  expect.setup.checkpointing = "none";
  EXPECT_FALSE(practice_of(request).checkpointing);
  expect.setup.checkpointing = "full";
  const RunPractice p = practice_of(request);
  EXPECT_EQ(p.precision, catalog::Precision::bf16);
  EXPECT_TRUE(p.checkpointing);
}

}  // namespace
}  // namespace gpusage::run
