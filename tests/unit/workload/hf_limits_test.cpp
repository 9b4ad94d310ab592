// Every bounded config.json field (hf_limits.hpp) at its bound, just inside and just outside, and the
// values that are never sizes (0, negative, fractional, past int64). Outside: one error naming the field,
// the value and the accepted range.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/hf_limits.hpp"
#include "core/workload/models.hpp"

namespace gpusage::workload {
namespace {

using nlohmann::json;

// A valid config of a model_type that reads `field`, with that field set to `value`. head_dim is given
// (llama) or the head count is 1 (gpt2), so a hidden size at its bound still divides into heads.
json config_with(std::string_view field, const json& value) {
  static const std::map<std::string, json, std::less<>> bases = {
      {"llama", {{"model_type", "llama"}, {"hidden_size", 4096}, {"intermediate_size", 11008},
                 {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"head_dim", 128},
                 {"vocab_size", 32000}, {"max_position_embeddings", 4096}}},
      {"gpt2", {{"model_type", "gpt2"}, {"n_embd", 768}, {"n_layer", 12}, {"n_head", 1}, {"vocab_size", 50257},
                {"n_positions", 1024}}},
      {"bert", {{"model_type", "bert"}, {"hidden_size", 768}, {"intermediate_size", 3072},
                {"num_hidden_layers", 12}, {"num_attention_heads", 12}, {"vocab_size", 30522},
                {"max_position_embeddings", 512}, {"type_vocab_size", 2}}},
      {"mistral", {{"model_type", "mistral"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                   {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                   {"vocab_size", 32000}, {"sliding_window", 4096}}},
      {"falcon", {{"model_type", "falcon"}, {"hidden_size", 4096}, {"num_hidden_layers", 2},
                  {"num_attention_heads", 32}, {"num_kv_heads", 8}, {"new_decoder_architecture", true},
                  {"vocab_size", 1000}}},
      {"mixtral", {{"model_type", "mixtral"}, {"hidden_size", 64}, {"intermediate_size", 64},
                   {"num_hidden_layers", 2}, {"num_attention_heads", 1}, {"vocab_size", 10},
                   {"num_experts_per_tok", 1}}},
      {"qwen2_moe", {{"model_type", "qwen2_moe"}, {"hidden_size", 64}, {"intermediate_size", 64},
                     {"num_hidden_layers", 2}, {"num_attention_heads", 1}, {"vocab_size", 10},
                     {"num_experts", 4096}, {"num_experts_per_tok", 1}, {"moe_intermediate_size", 8},
                     {"shared_expert_intermediate_size", 8}}},
      {"gemma3_text", {{"model_type", "gemma3_text"}, {"hidden_size", 256}, {"intermediate_size", 512},
                       {"num_hidden_layers", 2}, {"sliding_window_pattern", 6}}},
  };
  std::string type = "llama";
  if (field.starts_with("n_")) type = "gpt2";
  if (field == "type_vocab_size") type = "bert";
  if (field == "sliding_window") type = "mistral";
  if (field == "num_kv_heads" || field == "ffn_hidden_size" || field == "num_ln_in_parallel_attn") type = "falcon";
  if (field == "sliding_window_pattern") type = "gemma3_text";
  if (field == "num_local_experts") type = "mixtral";
  if (field == "num_experts" || field == "num_experts_per_tok" || field == "moe_intermediate_size" ||
      field == "shared_expert_intermediate_size" || field == "decoder_sparse_step")
    type = "qwen2_moe";
  json j = bases.find(type)->second;
  j[std::string(field)] = value;
  // The key/value heads must divide the attention heads; the gpt2 heads must divide n_embd.
  const bool in_range = value.is_number_integer() && value.get<std::int64_t>() >= 1 && value.get<std::int64_t>() <= 4096;
  if (field == "num_key_value_heads" && in_range) j["num_attention_heads"] = value;
  if (field == "num_kv_heads" && in_range) {  // falcon has no head_dim: the hidden size must divide too
    j["num_attention_heads"] = value;
    j["hidden_size"] = value.get<std::int64_t>() * 32;
  }
  if (field == "n_head" && in_range) j["n_embd"] = value;
  return j;
}

std::string error_of(const json& config) {
  try {
    detail::parse_hf_config(config.dump());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfigLimits, EveryBoundIsAcceptedAndOnePastItIsRefusedWithTheRange) {
  ASSERT_GE(hf_config_limits().size(), 15u);
  for (const HfConfigLimit& limit : hf_config_limits()) {
    SCOPED_TRACE(std::string(limit.field));
    for (std::int64_t accepted : {std::int64_t{1}, limit.max - 1, limit.max})
      EXPECT_EQ(error_of(config_with(limit.field, accepted)), "") << accepted;
    const std::string range = "; expected an integer from 1 to " + std::to_string(limit.max);
    for (const json& refused : {json(limit.max + 1), json(0), json(-1), json(1.5), json(1e30),
                                json(std::numeric_limits<std::uint64_t>::max()), json("8")}) {
      EXPECT_EQ(error_of(config_with(limit.field, refused)),
                "config.json field '" + std::string(limit.field) + "' is " + refused.dump() + range);
    }
  }
}

TEST(HfConfigLimits, ABillionLayersIsRefusedBeforeAnyLayerIsBuilt) {
  json j = config_with("num_hidden_layers", 1'000'000'000);
  EXPECT_EQ(error_of(j), "config.json field 'num_hidden_layers' is 1000000000; expected an integer from 1 to 1024");
}

TEST(HfConfigLimits, AConfigAtEveryBoundAtOnceBuildsAWorkload) {
  // The largest llama config accepted: every product of its sizes is computed without overflow.
  json j = {{"model_type", "llama"}, {"hidden_size", 131072}, {"intermediate_size", 1048576},
            {"num_hidden_layers", 1024}, {"num_attention_heads", 4096}, {"num_key_value_heads", 4096},
            {"head_dim", 16384}, {"vocab_size", 16777216}, {"max_position_embeddings", 16777216}};
  const Workload w = from_hf_config(j.dump());
  EXPECT_GT(w.params(), 0);
  EXPECT_GT(w.forward_flops(), 0);
  EXPECT_EQ(w.seq_len, 8192);  // RoPE: the context capped at 8,192 tokens by default
}

}  // namespace
}  // namespace gpusage::workload
