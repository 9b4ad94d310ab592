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

std::size_t index_of(const workload::Workload& w, const std::string& name) {
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].name == name) return i;
  }
  throw std::runtime_error("no layer " + name);
}

// Megatron's LayerNormLinear: q, k, v and gate, up read a norm's output (k, v and up the tensor q and gate read);
// o_proj reads attention's output and down_proj the gated product, each cast in a pass of its own.
TEST(Fp8Linears, InputSourcesFollowTheBlock) {
  const auto w = workload::build("llama3-8b");
  const std::string p = "model.layers.3.";
  auto source = [&](const std::string& name) { return detail::fp8_input_source(w.layers, index_of(w, p + name)); };
  for (const char* name : {"self_attn.q_proj", "mlp.gate_proj"}) {
    EXPECT_TRUE(source(name).from_norm) << name;
    EXPECT_FALSE(source(name).shared) << name;
  }
  for (const char* name : {"self_attn.k_proj", "self_attn.v_proj", "mlp.up_proj"}) {
    EXPECT_TRUE(source(name).from_norm) << name;
    EXPECT_TRUE(source(name).shared) << name;
  }
  for (const char* name : {"self_attn.o_proj", "mlp.down_proj"}) {
    EXPECT_FALSE(source(name).from_norm) << name;
    EXPECT_FALSE(source(name).shared) << name;
  }
}

// Per sample, q_proj of Llama 3 8B (x = y = 8,192 x 4,096). Under Transformer Engine the norm writes q's input in FP8
// (nothing forward); backward casts the output gradient (read 2 B, write 1 B and its 1 B transpose) and transposes the
// saved FP8 input (read and write a byte). k_proj shares q's input: only its gradient's cast. A frozen LoRA base
// needs no transposed copies: read 2 B, write 1 B.
TEST(Fp8Linears, TransformerEngineFusesTheNormsCasts) {
  const auto w = workload::build("llama3-8b");
  const auto& q = layer_named(w, "model.layers.0.self_attn.q_proj");
  const auto& k = layer_named(w, "model.layers.0.self_attn.k_proj");
  const double x = 8192.0 * 4096;
  const double k_out = 8192.0 * 1024;
  const detail::Fp8InputSource norm{true, false}, shared{true, true};
  const auto q_full = detail::fp8_scaling_traffic(fp8(), q, 2, 2, norm);
  EXPECT_DOUBLE_EQ(q_full.forward_activation_bytes, 0);
  EXPECT_DOUBLE_EQ(q_full.backward_activation_bytes, 4 * x + 2 * x);
  EXPECT_DOUBLE_EQ(q_full.forward_kernels, 1);  // the weight's cast-transpose
  EXPECT_DOUBLE_EQ(q_full.backward_kernels, 2);
  const auto k_full = detail::fp8_scaling_traffic(fp8(), k, 2, 2, shared);
  EXPECT_DOUBLE_EQ(k_full.forward_activation_bytes, 0);
  EXPECT_DOUBLE_EQ(k_full.backward_activation_bytes, 4 * k_out);
  const auto q_lora = detail::fp8_scaling_traffic(fp8(), q, 2, 2, norm, false);
  EXPECT_DOUBLE_EQ(q_lora.backward_activation_bytes, 3 * x);
  // llm.q casts every input in a pass of its own, the norm's output too.
  const auto q_llmq = detail::fp8_scaling_traffic(fp8(Fp8Recipe::producer_amax), q, 2, 2, norm);
  EXPECT_DOUBLE_EQ(q_llmq.forward_activation_bytes, 4 * x);
  EXPECT_DOUBLE_EQ(q_llmq.backward_activation_bytes, 4 * x);
}

// Llama 3 8B, two sequences on one H100 SXM: with the FP8 peak twice the bf16 one, the step gains about a fifth
// (attention, lm_head and the memory-bound ops stay 16-bit; the scaling passes add bytes), where every layer
// at the FP8 peak gave 1.6x; torchtitan measures 1.28x on 8 H100s (docs/MODEL.md). Tensorwise scaling moves more
// bytes than llm.q's cast passes, which move more than Transformer Engine's (its norms write FP8 themselves).
TEST(Fp8Linears, SpeedUpOverBf16IsWellBelowThePeakRatio) {
  const auto w = workload::build("llama3-8b");
  const catalog::Gpu& h100 = *catalog::Catalog::active().find("h100-sxm5-80gb");
  TrainingConfig bf16 = fp8();
  bf16.precision = Precision::bf16;
  const double bf16_s = estimate_step_time(w, bf16, h100).step_s;
  const double delayed_s = estimate_step_time(w, fp8(), h100).step_s;
  const double tensorwise_s = estimate_step_time(w, fp8(Fp8Recipe::tensorwise), h100).step_s;
  const double producer_amax_s = estimate_step_time(w, fp8(Fp8Recipe::producer_amax), h100).step_s;
  EXPECT_NEAR(bf16_s / delayed_s, 1.23, 0.01);  // 1.25 before FA2's mma.sync rate on sm90
  EXPECT_NEAR(bf16_s / producer_amax_s, 1.22, 0.01);
  EXPECT_NEAR(bf16_s / tensorwise_s, 1.17, 0.01);
  EXPECT_LT(delayed_s, producer_amax_s);
  EXPECT_LT(producer_amax_s, tensorwise_s);
}

TEST(Fp8Linears, RecipeNamesRoundTrip) {
  for (const char* name : {"delayed", "tensorwise", "producer-amax"}) {
    ASSERT_TRUE(parse_fp8_recipe(name)) << name;
    EXPECT_STREQ(to_string(*parse_fp8_recipe(name)), name);
  }
  EXPECT_FALSE(parse_fp8_recipe("rowwise"));
}

}  // namespace
}  // namespace gpusage::estimate
