// Mixtures of experts (mixtral, qwen2_moe, qwen3_moe): weights of every expert, FLOPs of the chosen ones,
// the router, and the layers a config keeps dense.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

using ::testing::HasSubstr;
using testing::input_error_of;
using testing::layer;
using testing::read_fixture;

double relative(double measured, double published) { return std::abs(measured - published) / published; }

// Total and active parameters as published: Mixtral 8x7B 46.7B / 12.9B (Mistral AI, "Mixtral of experts",
// 2023-12-11), Qwen3-30B-A3B 30.5B / 3.3B and Qwen1.5-MoE-A2.7B 14.3B / 2.7B (their model cards). The active
// figures are rounded to 0.1B, hence 3% there. A token's forward GEMMs do 2 FLOPs per active parameter
// outside the embedding (a lookup).
TEST(HfMoe, TotalParametersAndActiveGemmFlopsMatchThePublishedCounts) {
  struct Case {
    const char* fixture;
    double total;
    double active;
  };
  for (const Case& c :
       {Case{"mixtral-8x7b.config.json", 46.7e9, 12.9e9}, Case{"qwen3-30b-a3b.config.json", 30.5e9, 3.3e9},
        Case{"qwen1.5-moe-a2.7b.config.json", 14.3e9, 2.7e9}}) {
    const Workload w = from_hf_config(read_fixture(c.fixture));
    EXPECT_LT(relative(static_cast<double>(w.params()), c.total), 0.01) << c.fixture << ": " << w.params();
    double gemm = 0;
    for (const Layer& l : w.layers)
      if (l.op == OpClass::matmul) gemm += l.forward_flops;
    const double embedding = static_cast<double>(layer(w, "model.embed_tokens").params);
    EXPECT_LT(relative(gemm / (2.0 * w.seq_len) + embedding, c.active), 0.03) << c.fixture;
  }
}

TEST(HfMoe, MixtralRoutesEachTokenToTwoOfEightExperts) {
  WorkloadOptions o;
  o.seq_len = 1024;
  const Workload w = from_hf_config(read_fixture("mixtral-8x7b.config.json"), o);
  EXPECT_EQ(w.id, "hf:mixtral");
  EXPECT_EQ(layer(w, "model.layers.0.block_sparse_moe.gate").params, 4096 * 8);
  const Layer w1 = layer(w, "model.layers.0.block_sparse_moe.experts.w1");
  EXPECT_EQ(w1.params, 8LL * 4096 * 14336);
  EXPECT_DOUBLE_EQ(w1.forward_flops, 2.0 * 2 * 1024 * 4096 * 14336);  // two experts per token
  ASSERT_EQ(w1.lora_targets.size(), 1u);
  EXPECT_EQ(w1.lora_targets[0].copies, 8);  // LoRA adapts each expert
  EXPECT_EQ(layer(w, "model.layers.0.block_sparse_moe.dispatch").output_shape,
            (std::vector<std::int64_t>{2 * 1024, 4096}));
  EXPECT_EQ(layer(w, "model.layers.0.block_sparse_moe.combine").output_shape,
            (std::vector<std::int64_t>{1024, 4096}));
}

TEST(HfMoe, QwenKeepsTheMlpOnlyLayersDenseAndAddsItsSharedExpert) {
  const Workload w =
      from_hf_config(R"({"model_type": "qwen3_moe", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 64, "mlp_only_layers": [0]})");
  EXPECT_EQ(layer(w, "model.layers.0.mlp.gate_proj").params, 256 * 512);
  EXPECT_EQ(layer(w, "model.layers.1.mlp.experts.gate_proj").params, 4 * 256 * 64);
  EXPECT_EQ(layer(w, "model.layers.1.self_attn.q_norm").params, 128);
  const Workload q2 = from_hf_config(read_fixture("qwen1.5-moe-a2.7b.config.json"));
  EXPECT_EQ(layer(q2, "model.layers.0.mlp.shared_expert.gate_proj").params, 2048 * 5632);
  EXPECT_EQ(layer(q2, "model.layers.0.mlp.shared_expert_gate").params, 2048);
  EXPECT_EQ(layer(q2, "model.layers.0.self_attn.q_proj").params, 2048 * 2048 + 2048);  // Qwen2's biases
}

TEST(HfMoeErrors, BadRoutingFieldsAreNamed) {
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "mixtral", "hidden_size": 256, "intermediate_size": 512,
                                 "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
                                 "num_local_experts": 2, "num_experts_per_tok": 3})");
              }),
              HasSubstr("'num_experts_per_tok' 3 is more than the 2 experts"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "qwen2_moe", "hidden_size": 256, "intermediate_size": 512,
                                 "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
                                 "mlp_only_layers": [2]})");
              }),
              HasSubstr("'mlp_only_layers' entry 2 is not a layer index from 0 to 1"));
}

}  // namespace
}  // namespace gpusage::workload
