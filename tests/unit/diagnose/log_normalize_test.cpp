// Normalisation before matching (issue 30): each shape pasted logs take, as a unit and through the scanner.
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/log_normalize.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

TEST(StripDecorations, RemovesRankHostTimeAndGlogPrefixes) {
  EXPECT_EQ(strip_decorations("[rank0]: RuntimeError: CUDA error"), "RuntimeError: CUDA error");
  EXPECT_EQ(strip_decorations("[default3]:[rank3]: Killed"), "Killed");
  EXPECT_EQ(strip_decorations("[1,0]<stderr>:NCCL error"), "NCCL error");
  EXPECT_EQ(strip_decorations("gpu-node-17: RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(strip_decorations("3: Killed"), "Killed");
  EXPECT_EQ(strip_decorations("E0303 05:59:07.961540      41 cuda_dnn.cc:454] Loaded runtime CuDNN library"),
            "Loaded runtime CuDNN library");
  EXPECT_EQ(strip_decorations("2021-02-27 01:33:51.779607: W external/xla/asm_compiler.cc:235] ptxas fatal"),
            "ptxas fatal");
  EXPECT_EQ(strip_decorations("[2024-03-03T12:00:00.5Z] step 3"), "step 3");
  EXPECT_EQ(strip_decorations("2024-03-03 12:00:00,123 - ERROR - boom"), "ERROR - boom");
}

TEST(StripDecorations, LeavesMessagesAlone) {
  EXPECT_EQ(strip_decorations("RuntimeError: CUDA error: out of memory"), "RuntimeError: CUDA error: out of memory");
  EXPECT_EQ(strip_decorations("Epoch 1: loss 0.5"), "Epoch 1: loss 0.5");
  EXPECT_EQ(strip_decorations("ERROR: Unexpected bus error"), "ERROR: Unexpected bus error");
}

TEST(ContinuesPhrase, JoinsOnlyWhereAKeyPhraseIsCut) {
  EXPECT_TRUE(continues_phrase("Execution of replica 0 failed: Resource exhausted: Out",
                               "of memory while trying to allocate 5520758552 bytes."));
  EXPECT_TRUE(continues_phrase("RuntimeError: CUDA error: an illegal memory acc", "ess was encountered"));
  EXPECT_FALSE(continues_phrase("epoch 1 loss 0.5", "step 2 loss 0.4"));
  EXPECT_FALSE(continues_phrase("RuntimeError: CUDA error: an illegal memory access was encountered",
                                "CUDA kernel errors might be asynchronously reported"));
}

TEST(ScanLog, JoinsAPhraseWrappedAcrossLinesAndKeepsTheLineNumbers) {
  const LogScan scan = scan_log(
      "starting\n"
      "[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/local_client.cc:672] Execution of replica 0 "
      "failed: Resource exhausted: Out \n"
      "of memory while trying to allocate 5520758552 bytes.\n"
      "Killed\n");
  EXPECT_EQ(scan.lines, 4u);
  ASSERT_EQ(scan.jax_oom.size(), 1u);
  EXPECT_EQ(scan.jax_oom.first_line(), 2u);
  EXPECT_DOUBLE_EQ(*scan.jax_requested_bytes, 5520758552.0);
  EXPECT_EQ(scan.host_oom.first_line(), 4u);
  EXPECT_EQ(check_log(scan, RunContext{}).front().id, "log-jax-oom");
}

TEST(ScanLog, JoinsAWordCutByTheTerminal) {
  const LogScan scan = scan_log("RuntimeError: CUDA error: an illegal memory acc\ness was encountered\n");
  EXPECT_EQ(scan.illegal_address.size(), 1u);
}

TEST(ScanLog, SplitsATracebackFlattenedWithLiteralNewlines) {
  const LogScan scan = scan_log(
      R"({"error": "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n)"
      R"(RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be reported later\n"})");
  EXPECT_EQ(scan.lines, 1u);
  ASSERT_EQ(scan.device_assert.size(), 1u);
  EXPECT_EQ(scan.device_assert.front().text, "RuntimeError: CUDA error: device-side assert triggered");
}

TEST(ScanLog, ReadsAMessageGluedToAProgressBar) {
  const LogScan scan = scan_log(
      "Epoch 3:  45%|████▌     | 450/1000 [00:10<00:12, 44.9it/s]RuntimeError: CUDA error: an illegal memory "
      "access was encountered\n");
  ASSERT_EQ(scan.illegal_address.size(), 1u);
  EXPECT_EQ(scan.illegal_address.front().text,
            "RuntimeError: CUDA error: an illegal memory access was encountered");
}

TEST(ScanLog, SplitsCarriageReturnRedrawsAndStripsPrefixesBeforeWholeLineChecks) {
  EXPECT_EQ(scan_log("  0%|          | 0/10 [00:00<?, ?it/s]\r 50%|#####     | 5/10 [00:01<00:01]\rKilled\n")
                .host_oom.size(),
            1u);
  EXPECT_EQ(scan_log("[rank0]: Killed\n").host_oom.size(), 1u);
  EXPECT_EQ(scan_log("node-17: Killed\n").host_oom.size(), 1u);
}

TEST(ScanLog, AGlogPrefixedLineIsReadLikeThePlainOne) {
  const LogScan scan = scan_log(
      "E0303 05:59:07.961540      41 cuda_dnn.cc:454] Loaded runtime CuDNN library: 9.5.1 but source was "
      "compiled with: 9.8.0.  CuDNN library needs to have matching major version\n");
  ASSERT_EQ(scan.cudnn_version.size(), 1u);
  EXPECT_EQ(*scan.cudnn_loaded, "9.5.1");
  EXPECT_EQ(*scan.cudnn_compiled, "9.8.0");
}

TEST(ScanLog, JoinsStayBoundedOnEndlessContinuations) {
  // Every line continues the one before: at most four are joined, so the held line stays small.
  std::string text = "RuntimeError: Resource exhausted: Out\n";
  for (int i = 0; i < 10000; ++i) text += "of memory while trying to allocate 10 bytes. Resource exhausted: Out\n";
  const LogScan scan = scan_log(text);
  EXPECT_EQ(scan.lines, 10001u);
  EXPECT_LE(scan.jax_oom.kept().size(), Matches::kKept);
  for (const auto& line : scan.jax_oom.kept()) EXPECT_LE(line.text.size(), 400u);
  EXPECT_GE(scan.jax_oom.size(), 2000u);  // one per joined group of five lines
}

TEST(ScanLog, ChunkedNormalisationGivesTheSameScan) {
  const std::string text =
      "[rank0]: step 1\r[rank0]: RuntimeError: CUDA error: an illegal memory acc\n"
      "ess was encountered\nE0303 05:59:07.961540 41 x.cc:4] Killed\n";
  const LogScan whole = scan_log(text);
  LogScanner scanner;
  for (char c : text) scanner.feed_text(std::string_view(&c, 1));
  scanner.finish();
  EXPECT_EQ(scanner.scan().illegal_address.size(), whole.illegal_address.size());
  EXPECT_EQ(scanner.scan().illegal_address.first_line(), 1u);
  EXPECT_EQ(scanner.scan().host_oom.first_line(), 3u);
  EXPECT_EQ(whole.lines, 3u);
}

}  // namespace
}  // namespace gpusage::diagnose
