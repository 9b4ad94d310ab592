// Internal to the config.json importer (hf_config.cpp, hf_config_decoders.cpp): typed reads of one
// config.json object, each failing with an InputError that names the key, the value and what is accepted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/workload/models.hpp"

namespace gpusage::workload::detail {

// "supported model_type values: bert, falcon, ...", for the errors.
std::string hf_supported_list();

class Fields {
 public:
  Fields(const nlohmann::json& j, std::string model_type) : j_(j), type_(std::move(model_type)) {}

  bool has(const char* key) const;  // present and not null
  // A size: an integer from 1 to the field's limit (hf_limits.hpp).
  std::int64_t required(const char* key) const;
  std::int64_t optional(const char* key, std::int64_t fallback) const;
  bool flag(const char* key, bool fallback) const;
  double probability(const char* key, double fallback) const;

 private:
  std::int64_t positive(const char* key, const nlohmann::json& v) const;

  const nlohmann::json& j_;
  std::string type_;
};

// Sets head_dim from hidden / heads unless the config gave it, and checks the key/value heads divide
// the heads.
void check_heads(TransformerConfig& c, const char* hidden_key, const char* heads_key, bool head_dim_given);

// hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, vocab_size (required) and
// num_key_value_heads (default: the attention heads).
void read_decoder_sizes(const Fields& f, TransformerConfig& c);

// The new decoder families (hf_config_decoders.cpp); c.family is already set.
void parse_gemma_family(const Fields& f, const nlohmann::json& j, TransformerConfig& c);
void parse_phi3(const Fields& f, TransformerConfig& c);
void parse_phi(const Fields& f, TransformerConfig& c);
void parse_stablelm(const Fields& f, TransformerConfig& c);
void parse_falcon(const Fields& f, TransformerConfig& c);
// The mixture-of-experts fields of mixtral, qwen2_moe and qwen3_moe (after parse_llama_family's).
void parse_moe(const Fields& f, const nlohmann::json& j, TransformerConfig& c);

// RoPE models train at many lengths; the default is the config's context capped at 8,192 tokens,
// the pretraining length of Llama 3 and Mistral 7B (Llama 2's 4,096 stays 4,096).
inline constexpr std::int64_t kRopeDefaultSeqCap = 8192;

}  // namespace gpusage::workload::detail
