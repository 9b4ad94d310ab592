// The scanner's hand parsers and the prefilter's second look (issue 54's speed): the loss scale a line names
// (once a std::regex), whether "nan"/"inf" stand as values, and which groups a line keeps. Lines from the
// trainers' own messages (apex, fairseq, DeepSpeed, Keras, PyTorch).
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_text.hpp"
#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {
namespace {

using scan_text::loss_scale_in;

TEST(LossScaleIn, ReadsEachTrainersPhrase) {
  EXPECT_EQ(loss_scale_in("gradient overflow.  skipping step, reducing loss scale to 0.03125"), 0.03125);  // apex
  EXPECT_EQ(loss_scale_in("| warning | fairseq.trainer | setting loss scale to: 0.25"), 0.25);
  EXPECT_EQ(loss_scale_in("setting loss scale to 16.0"), 16.0);
  EXPECT_EQ(loss_scale_in("| epoch 001 | loss 9.127 | loss_scale 0.000 | wps 1234"), 0.0);
  EXPECT_EQ(loss_scale_in("train | loss_scale=0.062 | gnorm=1.5"), 0.062);
  EXPECT_EQ(loss_scale_in("loss scale: 65536.0"), 65536.0);
}

TEST(LossScaleIn, TakesTheLastScaleOfALine) {
  // DeepSpeed: the scale tried, then the one it falls back to.
  EXPECT_EQ(loss_scale_in("[deepspeed] overflow! rank 0 skipping step. attempted loss scale: 64, reducing to 32"), 32.0);
  EXPECT_EQ(loss_scale_in("loss_scale 65536.0 ... reducing to 32768"), 32768.0);
}

TEST(LossScaleIn, ReadsScientificNotationAndStopsAtWhatIsNotANumber) {
  EXPECT_EQ(loss_scale_in("loss_scale=1e+30"), 1e30);
  EXPECT_EQ(loss_scale_in("loss scale: 6.5536e4"), 65536.0);
  EXPECT_EQ(loss_scale_in("loss_scale=2.5e-05"), 2.5e-05);
  EXPECT_EQ(loss_scale_in("loss_scale=5."), 5.0);
  EXPECT_EQ(loss_scale_in("loss_scale 1e"), 1.0);        // an exponent needs a digit
  EXPECT_EQ(loss_scale_in("loss_scale=1,024"), 1.0);     // no thousands separators (the regex had none)
  EXPECT_EQ(loss_scale_in("setting loss scale to:   8"), 8.0);
  EXPECT_EQ(loss_scale_in("loss_scale=0x10"), 0.0);      // decimal only: not read as hexadecimal
}

TEST(LossScaleIn, FindsNothingWithoutAPhraseAndANumber) {
  EXPECT_EQ(loss_scale_in("loss_scale: 5"), std::nullopt);  // fairseq's key takes a space or '='
  EXPECT_EQ(loss_scale_in("loss_scale=nan"), std::nullopt);
  EXPECT_EQ(loss_scale_in("loss_scale=inf"), std::nullopt);
  EXPECT_EQ(loss_scale_in("loss_scale=-4"), std::nullopt);
  EXPECT_EQ(loss_scale_in("setting loss scale to:x"), std::nullopt);
  EXPECT_EQ(loss_scale_in("scaled_dot_product_attention 8"), std::nullopt);
  EXPECT_EQ(loss_scale_in(""), std::nullopt);
}

TEST(NonFiniteWord, IsAValueOnlyWhenNoLetterFollows) {
  using scan_text::non_finite_word_ends_at;
  EXPECT_TRUE(non_finite_word_ends_at("loss: nan", 9));
  EXPECT_TRUE(non_finite_word_ends_at("loss: NaN,", 9));
  EXPECT_TRUE(non_finite_word_ends_at("grad_norm: -inf\n", 15));
  EXPECT_TRUE(non_finite_word_ends_at("Infinity", 3));     // "inity" follows
  EXPECT_FALSE(non_finite_word_ends_at("INFO: step", 3));  // a letter follows
  EXPECT_FALSE(non_finite_word_ends_at("Infinite", 3));
  EXPECT_FALSE(non_finite_word_ends_at("nanoseconds", 3));
  EXPECT_TRUE(non_finite_word_ends_at("is non-finite", 13));  // the group's longer words count where they end
  EXPECT_TRUE(non_finite_word_ends_at("loss 1e+30", 10));     // not "nan"/"inf": nothing to decide
}

TEST(NonFiniteWord, ALineMayNameNonFiniteValuesInAnyCase) {
  using scan_text::may_name_non_finite;
  EXPECT_TRUE(may_name_non_finite("Epoch 3: loss=NaN"));
  EXPECT_TRUE(may_name_non_finite("grad_norm: -inf"));
  EXPECT_TRUE(may_name_non_finite("loss: inf\r"));
  EXPECT_TRUE(may_name_non_finite("tensor(nan, device='cuda:0')"));
  EXPECT_TRUE(may_name_non_finite("Loss became infinite or NaN at iteration=12!"));
  EXPECT_TRUE(may_name_non_finite("The total norm of gradients is non-finite, so it cannot be clipped"));
  EXPECT_TRUE(may_name_non_finite("value: Infinity"));
  EXPECT_FALSE(may_name_non_finite("INFO:root:step 10 loss 2.31"));
  EXPECT_FALSE(may_name_non_finite("an infinite loop; 12 nanoseconds"));
  EXPECT_FALSE(may_name_non_finite(""));
}

TEST(ConfirmGroups, KeepsTheCudaCodesOnlyWithAFailureWord) {
  using scan_text::confirm_groups;
  const std::uint64_t cuda = gate::bit(gate::codes_cuda);
  const std::uint64_t words = gate::bit(gate::cuda_code_words);
  const std::uint64_t memory = gate::bit(gate::memory);
  EXPECT_EQ(confirm_groups(cuda), 0u);                        // "Using CUDA device 0"
  EXPECT_EQ(confirm_groups(cuda | words), cuda);              // "CUDA error: …"
  EXPECT_EQ(confirm_groups(words), 0u);                       // "error" alone wakes nothing
  EXPECT_EQ(confirm_groups(cuda | memory), memory);           // the other groups stay
  EXPECT_EQ(confirm_groups(LineNormalizer::kJoined), LineNormalizer::kJoined & ~words);
}

// What the narrower words let through, through the whole scanner, against every rule on every line.
TEST(ConfirmGroups, TheScannerFindsTheSameWithAndWithoutThePrefilter) {
  for (const char* line : {"INFO: loss=nan", "2024-01-01 12:00:00 INFO:root:Loss: inf", "[INFO] loss became infinite",
                           "Loss became infinite or NaN at iteration=12!", "step 7 | loss: -inf | grad_norm: 3.1",
                           "Using CUDA device 0 (NVIDIA A100)", "CUDA error 700", "RuntimeError: CUDA error: an "
                           "illegal memory access was encountered", "cuda warning: driver shutting down",
                           "check failed: error == cudaSuccess (803 vs. 0)", "{'loss': 1.2, 'grad_norm': 3.5}",
                           "LayerNorm((768,), eps=1e-05)", "INFO value Infinity"}) {
    const LogScan on = scan_log(line, Prefilter::on);
    const LogScan off = scan_log(line, Prefilter::off);
    EXPECT_EQ(on.non_finite.size(), off.non_finite.size()) << line;
    EXPECT_EQ(on.codes.size(), off.codes.size()) << line;
    EXPECT_EQ(on.grad_norm_count, off.grad_norm_count) << line;
  }
  EXPECT_EQ(scan_log("step 7 | loss: -inf | grad_norm: 3.1").non_finite.size(), 1u);
  EXPECT_TRUE(scan_log("INFO: step 7 loss 2.3").non_finite.empty());
  EXPECT_EQ(scan_log("{'loss': 1.2, 'grad_norm': 3.5}").grad_norm_count, 1u);
  EXPECT_EQ(scan_log("CUDA error 700").codes.size(), 1u);
  EXPECT_TRUE(scan_log("Using CUDA device 0").codes.empty());
}

// The scanner's line splitting: every place of the newline around the 16-byte rounds, marks before and after it.
TEST(LineEnd, FindsTheNewlineAndTheMarksBeforeItOnly) {
  for (std::size_t at = 0; at < 40; ++at) {
    for (std::size_t mark = 0; mark < 42; ++mark) {
      for (char c : {'\r', '\\'}) {
        std::string text(41, 'x');
        text[at] = '\n';
        text.back() = '\n';
        if (mark < 40 && mark != at) text[mark] = c;
        bool may_split = true;
        const char* end = line_end(text.data(), text.data() + text.size(), may_split);
        ASSERT_EQ(static_cast<std::size_t>(end - text.data()), at) << at << " " << mark;
        ASSERT_EQ(may_split, mark < at) << at << " " << mark;
      }
    }
  }
}

}  // namespace
}  // namespace gpusage::diagnose
