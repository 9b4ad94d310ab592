// The decoder families beyond Llama's (Qwen3, Gemma 1/2/3, Phi-3, Phi-2, StableLM, Falcon): each Hub
// config.json (fixtures/) gives the published parameter count within 1%, and each family's departures
// from Llama are where HF's modeling code puts them.
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

// |params - published| / published.
double relative_miss(const Workload& w, double published) {
  return std::abs(static_cast<double>(w.params()) - published) / published;
}

// Published totals, each the Hub model card's safetensors "Model size" or the paper's table.
TEST(HfFamilies, ParameterCountsMatchThePublishedOnes) {
  struct Case {
    const char* fixture;
    double published;
  };
  for (const Case& c : {
           Case{"qwen3-8b.config.json", 8.19e9},                // Qwen3-8B model card: 8.2B (8.19B)
           Case{"gemma-2-9b.config.json", 9.24e9},              // google/gemma-2-9b: 9.24B
           Case{"gemma-7b.config.json", 8.54e9},                // google/gemma-7b: 8.54B
           Case{"gemma-3-1b.config.json", 1.0e9},               // Gemma 3 report, Table 1: 302M + 698M
           Case{"phi-3-mini-4k-instruct.config.json", 3.82e9},  // Phi-3-mini-4k-instruct: 3.82B
           Case{"phi-2.config.json", 2.78e9},                   // microsoft/phi-2: 2.78B
           Case{"stablelm-2-1_6b.config.json", 1.64e9},         // stabilityai/stablelm-2-1_6b: 1.64B
           Case{"falcon-7b-minimal.config.json", 6.92e9},       // tiiuae/falcon-7b: 6.92B
       }) {
    const Workload w = from_hf_config(read_fixture(c.fixture));
    EXPECT_LT(relative_miss(w, c.published), 0.01) << c.fixture << ": " << w.params();
  }
}

// Gemma 3 4B's config nests the language model under text_config and leaves its head counts and vocabulary
// at Gemma3TextConfig's defaults. Gemma 3 report, Table 1: 3,209M non-embedding parameters (the 417M
// vision encoder is not planned).
TEST(HfFamilies, Gemma3MultimodalConfigPlansItsTextModel) {
  const Workload w = from_hf_config(read_fixture("gemma-3-4b.config.json"));
  const double embedding = static_cast<double>(layer(w, "model.embed_tokens").params);
  EXPECT_EQ(embedding, 262208.0 * 2560);
  EXPECT_LT(std::abs(static_cast<double>(w.params()) - embedding - 3.209e9) / 3.209e9, 0.01) << w.params();
  EXPECT_EQ(w.id, "hf:gemma3_text");
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.q_proj").output_shape.back(), 8 * 256);
  EXPECT_THAT(input_error_of([] { from_hf_config(R"({"model_type": "gemma3"})"); }),
              HasSubstr("no 'text_config' object"));
}

// What HF's eager Python adds beyond one fused kernel (--kernels eager): RMSNorm seven fp32 accesses and two at
// the activation's width per element, in seven more kernels; the rotary embedding eight accesses per element of
// q and k, in nine more. Causal language models say so (Workload::causal_lm); BERT does not.
TEST(HfFamilies, RmsNormAndRotaryCarryWhatTheirEagerCodeAdds) {
  const Workload w = from_hf_config(read_fixture("qwen3-8b.config.json"));
  EXPECT_TRUE(w.causal_lm);
  const Layer& norm = layer(w, "model.layers.0.input_layernorm");
  EXPECT_DOUBLE_EQ(norm.eager_extra_fp32_elements, 7 * norm.output_elements());
  EXPECT_DOUBLE_EQ(norm.eager_extra_elements, 2 * norm.output_elements());
  EXPECT_EQ(norm.eager_extra_kernels, 7);
  const Layer& q_norm = layer(w, "model.layers.0.self_attn.q_norm");  // a per-head RMSNorm, the same code
  EXPECT_EQ(q_norm.eager_extra_kernels, 7);
  const Layer& rotary = layer(w, "model.layers.0.self_attn.rotary");
  EXPECT_DOUBLE_EQ(rotary.eager_extra_elements, 8 * rotary.output_elements());
  EXPECT_EQ(rotary.eager_extra_kernels, 9);
  EXPECT_FALSE(build("bert-base").causal_lm);
}

TEST(HfFamilies, Qwen3NormsEachHeadOfQAndKAndHasNoBiases) {
  const Workload w = from_hf_config(read_fixture("qwen3-8b.config.json"));
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.q_norm").params, 128);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_norm").params, 128);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.q_proj").params, 4096LL * 4096);
  EXPECT_EQ(w.seq_len, 8192);  // 40,960 positions, default capped at 8,192 tokens
  // Qwen3Config's head_dim defaults to 128 whatever hidden / heads is.
  const Workload small =
      from_hf_config(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 8, "vocab_size": 1000})");
  EXPECT_EQ(layer(small, "model.layers.0.self_attn.q_proj").output_shape.back(), 16 * 128);
}

TEST(HfFamilies, Gemma2HasFourNormsATiedHeadAndAlternatingWindows) {
  WorkloadOptions o;
  o.seq_len = 8192;
  const Workload w = from_hf_config(read_fixture("gemma-2-9b.config.json"), o);
  for (const char* norm : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                           "post_feedforward_layernorm"})
    EXPECT_EQ(layer(w, std::string("model.layers.0.") + norm).params, 3584) << norm;
  EXPECT_EQ(layer(w, "lm_head").params, 0);
  EXPECT_EQ(layer(w, "model.layers.0.mlp.act_fn").forward_flops,
            layer(w, "model.layers.0.mlp.up_proj").output_shape.back() * 8192.0 * 8);  // GELU
  // Layer 0 is local (4,096-token window), layer 1 global: at 8,192 tokens layer 0's core does less.
  EXPECT_LT(layer(w, "model.layers.0.self_attn.core").forward_flops,
            layer(w, "model.layers.1.self_attn.core").forward_flops);
}

TEST(HfFamilies, Gemma3HasFiveLocalLayersToOneGlobal) {
  WorkloadOptions o;
  o.seq_len = 4096;
  const Workload w = from_hf_config(read_fixture("gemma-3-1b.config.json"), o);
  const double local = layer(w, "model.layers.0.self_attn.core").forward_flops;
  EXPECT_EQ(layer(w, "model.layers.4.self_attn.core").forward_flops, local);
  EXPECT_GT(layer(w, "model.layers.5.self_attn.core").forward_flops, local);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.q_norm").params, 256);
}

// Phi-3's fused qkv_proj and gate_up_proj do the work of Llama's split projections.
TEST(HfFamilies, Phi3FusedProjectionsCostWhatLlamasSplitOnesDo) {
  const std::string sizes = R"("hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 4,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 2048})";
  const Workload phi3 = from_hf_config(R"({"model_type": "phi3", )" + sizes);
  const Workload llama = from_hf_config(R"({"model_type": "llama", )" + sizes);
  EXPECT_EQ(phi3.params(), llama.params());
  EXPECT_DOUBLE_EQ(phi3.forward_flops(), llama.forward_flops());
  EXPECT_DOUBLE_EQ(phi3.backward_flops(), llama.backward_flops());
  EXPECT_EQ(layer(phi3, "model.layers.0.self_attn.qkv_proj").output_shape.back(), 3 * 3072);
  EXPECT_EQ(layer(phi3, "model.layers.0.mlp.gate_up_proj").output_shape.back(), 2 * 8192);
}

TEST(HfFamilies, PhiRunsAttentionAndItsGeluMlpInParallelWithBiases) {
  const Workload w = from_hf_config(read_fixture("phi-2.config.json"));
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.dense").params, 2560LL * 2560 + 2560);
  EXPECT_EQ(layer(w, "model.layers.0.mlp.fc1").params, 2560LL * 10240 + 10240);
  EXPECT_EQ(layer(w, "model.layers.0.input_layernorm").params, 2 * 2560);
  EXPECT_EQ(layer(w, "lm_head").params, 51200LL * 2560 + 51200);
  for (const Layer& l : w.layers) EXPECT_THAT(l.name, ::testing::Not(HasSubstr("post_attention_layernorm")));
  EXPECT_EQ(w.seq_len, 2048);
}

TEST(HfFamilies, FalconSevenBIsMultiQueryWithOneFusedProjection) {
  const Workload w = from_hf_config(read_fixture("falcon-7b-minimal.config.json"));
  // 71 query heads and one key/value head of 64.
  EXPECT_EQ(layer(w, "transformer.h.0.self_attention.query_key_value").output_shape.back(), (71 + 2) * 64);
  EXPECT_EQ(layer(w, "transformer.h.0.mlp.dense_h_to_4h").output_shape.back(), 4 * 4544);
  EXPECT_EQ(layer(w, "lm_head").params, 0);  // tied to transformer.word_embeddings
}

TEST(HfFamilies, FalconNewDecoderHasTwoNormsAndGroupedKeys) {
  const Workload w = from_hf_config(R"({"model_type": "falcon", "hidden_size": 1024, "num_hidden_layers": 2,
    "num_attention_heads": 16, "num_kv_heads": 4, "new_decoder_architecture": true, "vocab_size": 1000})");
  EXPECT_EQ(layer(w, "transformer.h.0.ln_attn").params, 2 * 1024);
  EXPECT_EQ(layer(w, "transformer.h.0.ln_mlp").params, 2 * 1024);
  EXPECT_EQ(layer(w, "transformer.h.0.self_attention.query_key_value").output_shape.back(),
            (16 + 2 * 4) * 64);
}

TEST(HfFamilies, StableLmQkLayerNormHasAWeightPerHead) {
  const Workload w =
      from_hf_config(R"({"model_type": "stablelm", "hidden_size": 512, "intermediate_size": 1024,
    "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
    "qk_layernorm": true, "use_qkv_bias": true})");
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.q_layernorm").params, 8 * 64);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_layernorm").params, 2 * 64);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_proj").params, 512 * 128 + 128);
}

TEST(HfFamiliesErrors, MissingKeysAndBadLayerTypesAreNamed) {
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32,
                                 "num_attention_heads": 32, "vocab_size": 32064})");
              }),
              HasSubstr("(model_type 'phi3') has no 'intermediate_size'"));
  EXPECT_THAT(input_error_of([] { from_hf_config(R"({"model_type": "falcon", "hidden_size": 4544})"); }),
              HasSubstr("has no 'num_hidden_layers'"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "gemma2", "hidden_size": 256, "intermediate_size": 512,
                                 "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 100,
                                 "layer_types": ["sliding_attention"]})");
              }),
              HasSubstr("'layer_types' is not a list of 2 entries"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "gemma3_text", "hidden_size": 256, "intermediate_size": 512,
                                 "num_hidden_layers": 1, "layer_types": ["local"]})");
              }),
              HasSubstr("'layer_types' entry 0 is \"local\""));
}

}  // namespace
}  // namespace gpusage::workload
