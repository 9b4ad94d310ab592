// from_hf_config: the importer on real config.json files (fixtures/), and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

using ::testing::HasSubstr;
using testing::input_error_of;
using testing::layer;
using testing::read_fixture;

TEST(HfConfig, Llama2_7bGivesTheExactParameterCount) {
  const Workload w = from_hf_config(read_fixture("llama-2-7b-hf.config.json"));
  EXPECT_EQ(w.params(), 6'738'415'616);
  EXPECT_EQ(w.id, "hf:llama");
  EXPECT_EQ(w.display_name, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(w.domain, Domain::language);
  EXPECT_EQ(w.seq_len, 4096);  // max_position_embeddings
  EXPECT_THAT(w.architecture_source, HasSubstr("LlamaForCausalLM"));
}

TEST(HfConfig, ImportedConfigsBuildTheSameGraphAsTheZoo) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"llama-2-7b-hf.config.json", "llama2-7b"},     {"meta-llama-3-8b.config.json", "llama3-8b"},
      {"mistral-7b-v0.1.config.json", "mistral-7b"},  {"gpt2.config.json", "gpt2"},
      {"bert-base-uncased.config.json", "bert-base"}, {"qwen3-8b.config.json", "qwen3-8b"},
      {"gemma-2-9b.config.json", "gemma2-9b"},        {"phi-3-mini-4k-instruct.config.json", "phi3-mini"},
  };
  for (const auto& [fixture, id] : pairs) {
    const Workload imported = from_hf_config(read_fixture(fixture));
    const Workload zoo_model = build(id);
    EXPECT_EQ(imported.params(), zoo_model.params()) << fixture;
    EXPECT_EQ(imported.seq_len, zoo_model.seq_len) << fixture;
    EXPECT_DOUBLE_EQ(imported.forward_flops(), zoo_model.forward_flops()) << fixture;
    EXPECT_DOUBLE_EQ(imported.saved_elements(), zoo_model.saved_elements()) << fixture;
    EXPECT_EQ(imported.layers.size(), zoo_model.layers.size()) << fixture;
  }
}

// Qwen2 (Hub safetensors totals): 0.5B ties lm_head to the embeddings, 7B does not; both have biases
// on q, k and v only.
TEST(HfConfig, Qwen2HasQkvBiasesAndOptionalTying) {
  const Workload small = from_hf_config(read_fixture("qwen2-0.5b.config.json"));
  EXPECT_EQ(small.params(), 494'032'768);
  EXPECT_EQ(small.id, "hf:qwen2");
  EXPECT_EQ(layer(small, "model.layers.0.self_attn.q_proj").params, 896 * 896 + 896);
  EXPECT_EQ(layer(small, "model.layers.0.self_attn.k_proj").params, 896 * 128 + 128);
  EXPECT_EQ(layer(small, "model.layers.0.self_attn.o_proj").params, 896 * 896);
  EXPECT_EQ(layer(small, "lm_head").params, 0);
  EXPECT_EQ(small.seq_len, 8192);  // 131,072 positions, default capped at 8,192 tokens
  const Workload big = from_hf_config(read_fixture("qwen2-7b.config.json"));
  EXPECT_EQ(big.params(), 7'615'616'512);
  EXPECT_EQ(layer(big, "lm_head").params, 152064LL * 3584);
}

// Llama 3.2 1B (Hub: 1,235,814,400 parameters): lm_head tied to the embeddings, explicit head_dim.
TEST(HfConfig, TiedLlamaWithExplicitHeadDim) {
  const Workload w = from_hf_config(read_fixture("llama-3.2-1b.config.json"));
  EXPECT_EQ(w.params(), 1'235'814'400);
  EXPECT_EQ(layer(w, "lm_head").params, 0);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_proj").output_shape,
            (std::vector<std::int64_t>{8192, 8 * 64}));
  EXPECT_EQ(w.seq_len, 8192);  // 131,072 positions, default capped at 8,192 tokens
}

TEST(HfConfig, MissingKeyValueHeadsMeansMultiHeadAttention) {
  const std::string config = R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000})";
  const Workload w = from_hf_config(config);
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_proj").params, 256 * 256);
  EXPECT_EQ(w.seq_len, 2048);  // LlamaConfig's default max_position_embeddings
  EXPECT_EQ(w.display_name, "llama (2 layers, hidden 256)");
}

TEST(HfConfig, OptionsApplyToImportedModels) {
  WorkloadOptions o;
  o.seq_len = 512;
  EXPECT_EQ(from_hf_config(read_fixture("llama-2-7b-hf.config.json"), o).seq_len, 512);
  o.seq_len = 4096;
  EXPECT_THAT(input_error_of([&] { from_hf_config(read_fixture("gpt2.config.json"), o); }),
              HasSubstr("1 to 1024"));
}

TEST(HfConfigErrors, UnknownModelTypeListsTheSupportedTypes) {
  const std::string message =
      input_error_of([] { from_hf_config(read_fixture("unsupported-mamba.config.json")); });
  EXPECT_THAT(message, HasSubstr("model_type 'mamba' is not supported"));
  EXPECT_THAT(message,
              HasSubstr("bert, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, llama, mistral, mixtral, phi, "
                        "phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, stablelm"));
}

TEST(HfConfigErrors, MissingFieldIsNamed) {
  const std::string message =
      input_error_of([] { from_hf_config(read_fixture("llama-missing-intermediate.config.json")); });
  EXPECT_THAT(message, HasSubstr("'intermediate_size'"));
  EXPECT_THAT(message, HasSubstr("supported model_type values: bert, falcon"));
  EXPECT_THAT(input_error_of([] { from_hf_config(R"({"model_type": "gpt2", "n_embd": 768})"); }),
              HasSubstr("'n_layer'"));
  EXPECT_THAT(input_error_of([] { from_hf_config(R"({"hidden_size": 768})"); }),
              HasSubstr("no 'model_type'"));
}

TEST(HfConfigErrors, BadValuesAreNamed) {
  EXPECT_THAT(input_error_of([] { from_hf_config("{not json"); }), HasSubstr("not valid JSON"));
  // Found by fuzz/hf_config: a number beyond a double was an internal error (nlohmann's out_of_range).
  EXPECT_THAT(input_error_of([] { from_hf_config(R"({"model_type": "llama", "hidden_size": 1e999})"); }),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(input_error_of([] { from_hf_config("[1, 2]"); }), HasSubstr("must be a JSON object"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "gpt2", "n_embd": "768", "n_layer": 12, "n_head": 12,
                                 "vocab_size": 50257, "n_positions": 1024})");
              }),
              HasSubstr("'n_embd' is \"768\"; expected an integer from 1 to 131072"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
                                 "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 5,
                                 "vocab_size": 32000})");
              }),
              HasSubstr("'num_key_value_heads' 5"));
  EXPECT_THAT(input_error_of([] {
                from_hf_config(R"({"model_type": "bert", "hidden_size": 100, "intermediate_size": 400,
                                 "num_hidden_layers": 2, "num_attention_heads": 12, "vocab_size": 100,
                                 "max_position_embeddings": 64})");
              }),
              HasSubstr("not divisible"));
}

}  // namespace
}  // namespace gpusage::workload
