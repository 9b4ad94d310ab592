// FP8 as Transformer Engine, torchao float8 and llm.q run it (issue 56; docs/MODEL.md, "FP8 as it runs"): only the
// blocks' linear layers run in FP8, and each adds its scaling kernels.
#include "core/estimate/fp8_linears.hpp"

#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;

TrainingConfig fp8(Fp8Recipe recipe = Fp8Recipe::delayed) {
  TrainingConfig c;
  c.batch_per_gpu = 2;
  c.precision = Precision::fp8;
  c.optimizer = Optimizer::adamw;
  c.eager_kernels = false;
  c.fp8_recipe = recipe;
  return c;
}

const workload::Layer& layer_named(const workload::Workload& w, const std::string& name) {
  for (const auto& l : w.layers) {
    if (l.name == name) return l;
  }
  throw std::runtime_error("no layer " + name);
}

TEST(Fp8Linears, OnlyTheBlocksLinearLayersRunInFp8) {
  const auto w = workload::build("llama3-8b");
  const auto& q = layer_named(w, "model.layers.0.self_attn.q_proj");
  EXPECT_TRUE(detail::runs_in_fp8(fp8(), q));
  EXPECT_FALSE(detail::runs_in_fp8(fp8(), layer_named(w, "lm_head")));
  int attention = 0;
  for (const auto& l : w.layers) {
    if (l.op == workload::OpClass::attention) {
      ++attention;
      EXPECT_FALSE(detail::runs_in_fp8(fp8(), l)) << l.name;
    }
  }
  EXPECT_EQ(attention, 32);
  TrainingConfig bf16 = fp8();
  bf16.precision = Precision::bf16;
  EXPECT_FALSE(detail::runs_in_fp8(bf16, q));
}

// Per sample, q_proj of Llama 3 8B reads 8,192 x 4,096 input elements and writes as many outputs. Delayed scaling
// (TE's cast-transpose): read 2 B, write the FP8 tensor and its transpose, each way. Tensorwise (torchao): an amax
// read and a cast each way, the transposes of the output gradient and of the saved input in passes of their own.
TEST(Fp8Linears, ScalingMovesTheBytesOfItsPasses) {
  const auto w = workload::build("llama3-8b");
  const auto& q = layer_named(w, "model.layers.0.self_attn.q_proj");
  const double x = 8192.0 * 4096;
  const double params = 4096.0 * 4096;
  const auto delayed = detail::fp8_scaling_traffic(fp8(), q, 2, 2);
  EXPECT_DOUBLE_EQ(delayed.forward_activation_bytes, 4 * x);
  EXPECT_DOUBLE_EQ(delayed.backward_activation_bytes, 4 * x);
  EXPECT_DOUBLE_EQ(delayed.weight_bytes, 4 * params);
  const auto tensorwise = detail::fp8_scaling_traffic(fp8(Fp8Recipe::tensorwise), q, 2, 2);
  EXPECT_DOUBLE_EQ(tensorwise.forward_activation_bytes, 5 * x);
  EXPECT_DOUBLE_EQ(tensorwise.backward_activation_bytes, 7 * x + 2 * x);
  EXPECT_DOUBLE_EQ(tensorwise.weight_bytes, 7 * params);
  EXPECT_DOUBLE_EQ(detail::fp8_scaling_traffic(fp8(), layer_named(w, "lm_head"), 2, 2).forward_activation_bytes, 0);
}

// Llama 3 8B, two sequences on one H100 SXM: with the FP8 peak twice the bf16 one, the step gains a fifth to a
// quarter (attention, lm_head and the memory-bound ops stay 16-bit; the scaling passes add bytes), where every layer
// at the FP8 peak gave 1.6x; torchtitan measures 1.28x on 8 H100s (docs/MODEL.md). Tensorwise scaling moves more
// bytes than delayed, so it is slower.
TEST(Fp8Linears, SpeedUpOverBf16IsWellBelowThePeakRatio) {
  const auto w = workload::build("llama3-8b");
  const catalog::Gpu& h100 = *catalog::Catalog::active().find("h100-sxm5-80gb");
  TrainingConfig bf16 = fp8();
  bf16.precision = Precision::bf16;
  const double bf16_s = estimate_step_time(w, bf16, h100).step_s;
  const double delayed_s = estimate_step_time(w, fp8(), h100).step_s;
  const double tensorwise_s = estimate_step_time(w, fp8(Fp8Recipe::tensorwise), h100).step_s;
  EXPECT_NEAR(bf16_s / delayed_s, 1.23, 0.01);
  EXPECT_NEAR(bf16_s / tensorwise_s, 1.17, 0.01);
  EXPECT_LT(delayed_s, tensorwise_s);
}

TEST(Fp8Linears, RecipeNamesRoundTrip) {
  for (const char* name : {"delayed", "tensorwise"}) {
    ASSERT_TRUE(parse_fp8_recipe(name)) << name;
    EXPECT_STREQ(to_string(*parse_fp8_recipe(name)), name);
  }
  EXPECT_FALSE(parse_fp8_recipe("rowwise"));
}

}  // namespace
}  // namespace gpusage::estimate
