// Hugging Face config.json -> TransformerConfig. Optional fields take the defaults of the matching
// transformers Config class (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config, GPT2Config,
// BertConfig; the Gemma, Phi, StableLM and Falcon configs in hf_config_decoders.cpp); the size fields
// have no sensible default and are required.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/workload/hf_fields.hpp"
#include "core/workload/hf_limits.hpp"
#include "core/workload/models.hpp"

namespace gpusage::workload {

// Largest released configs, for scale: Llama 3.1 405B has 126 layers, hidden 16384, intermediate 53248,
// 128 heads; Gemma's vocabulary is 256,000 tokens; Llama 4 Scout's context is 10,485,760 positions.
const std::vector<HfConfigLimit>& hf_config_limits() {
  static const std::vector<HfConfigLimit> limits = {
      {"num_hidden_layers", 1024},
      {"n_layer", 1024},
      {"hidden_size", 131072},
      {"n_embd", 131072},
      {"intermediate_size", 1048576},
      {"n_inner", 1048576},
      {"num_attention_heads", 4096},
      {"n_head", 4096},
      {"num_key_value_heads", 4096},
      {"head_dim", 16384},
      {"vocab_size", 16777216},
      {"type_vocab_size", 65536},
      {"max_position_embeddings", 16777216},
      {"n_positions", 16777216},
      {"sliding_window", 16777216},
      {"sliding_window_pattern", 1024},
      {"num_kv_heads", 4096},
      {"ffn_hidden_size", 1048576},
      {"num_ln_in_parallel_attn", 2},
      {"num_local_experts", 4096},
      {"num_experts", 4096},
      {"num_experts_per_tok", 4096},
      {"moe_intermediate_size", 1048576},
      {"shared_expert_intermediate_size", 1048576},
      {"decoder_sparse_step", 1024},
  };
  return limits;
}

}  // namespace gpusage::workload

namespace gpusage::workload::detail {

namespace {

using nlohmann::json;

std::int64_t limit_of(std::string_view key) {
  for (const auto& l : hf_config_limits())
    if (l.field == key) return l.max;
  throw std::logic_error("config.json field '" + std::string(key) + "' has no limit in hf_config_limits()");
}

const std::vector<std::string>& supported_types() {
  static const std::vector<std::string> types = {"bert",  "falcon",    "gemma",   "gemma2",    "gemma3",  "gemma3_text",
                                                 "gpt2",  "llama",     "mistral", "mixtral",   "phi",     "phi3",
                                                 "qwen2", "qwen2_moe", "qwen3",   "qwen3_moe", "stablelm"};
  return types;
}

}  // namespace

std::string hf_supported_list() { return "supported model_type values: " + text::join(supported_types()); }

bool Fields::has(const char* key) const {
  const auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

std::int64_t Fields::required(const char* key) const {
  if (!has(key)) {
    throw InputError("config.json (model_type '" + type_ + "') has no '" + key + "', which " + type_ +
                     " models need; " + hf_supported_list());
  }
  return positive(key, j_.at(key));
}

std::int64_t Fields::optional(const char* key, std::int64_t fallback) const {
  return has(key) ? positive(key, j_.at(key)) : fallback;
}

bool Fields::flag(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_boolean()) {
    throw InputError("config.json field '" + std::string(key) + "' is " + v.dump() + "; expected true or false");
  }
  return v.get<bool>();
}

double Fields::probability(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1) {
    throw InputError("config.json field '" + std::string(key) + "' is " + v.dump() +
                     "; expected a dropout probability in [0, 1)");
  }
  return v.get<double>();
}

// An integer from 1 to the field's limit (hf_limits.hpp). Unsigned values past int64 and floats are
// refused before any conversion.
std::int64_t Fields::positive(const char* key, const json& v) const {
  const std::int64_t max = limit_of(key);
  bool in_range = false;
  if (v.is_number_unsigned())
    in_range = v.get<std::uint64_t>() >= 1 && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(max);
  else if (v.is_number_integer())
    in_range = v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= max;
  if (!in_range) {
    throw InputError("config.json field '" + std::string(key) + "' is " + v.dump() +
                     "; expected an integer from 1 to " + std::to_string(max));
  }
  return v.get<std::int64_t>();
}

void check_heads(TransformerConfig& c, const char* hidden_key, const char* heads_key, bool head_dim_given) {
  if (!head_dim_given) {
    if (c.hidden % c.heads != 0) {
      throw InputError("config.json '" + std::string(hidden_key) + "' " + std::to_string(c.hidden) +
                       " is not divisible by '" + heads_key + "' " + std::to_string(c.heads) +
                       "; give 'head_dim' or fix the sizes");
    }
    c.head_dim = c.hidden / c.heads;
  }
  if (c.heads % c.kv_heads != 0) {
    throw InputError("config.json 'num_key_value_heads' " + std::to_string(c.kv_heads) +
                     " does not divide 'num_attention_heads' " + std::to_string(c.heads));
  }
}

namespace {

void parse_llama_family(const Fields& f, TransformerConfig& c) {
  read_decoder_sizes(f, c);
  // Qwen3Config's head_dim defaults to 128 (not hidden / heads): Qwen3-0.6B's 16 heads x 128 exceed its
  // hidden size of 1024.
  const bool head_dim_given = f.has("head_dim") || c.family == Family::qwen3 || c.family == Family::qwen3_moe;
  if (head_dim_given) c.head_dim = f.optional("head_dim", 128);
  check_heads(c, "hidden_size", "num_attention_heads", head_dim_given);
  c.tie_embeddings = f.flag("tie_word_embeddings", false);
  c.attention_dropout = f.probability("attention_dropout", 0.0);
  switch (c.family) {
    case Family::llama:
      c.max_positions = f.optional("max_position_embeddings", 2048);
      c.qkv_bias = c.o_bias = f.flag("attention_bias", false);
      c.mlp_bias = f.flag("mlp_bias", false);
      break;
    case Family::mistral:
    case Family::mixtral:  // MixtralConfig: Mistral's attention and defaults
      c.max_positions = f.optional("max_position_embeddings", 4096 * 32);
      c.sliding_window = f.optional("sliding_window", 0);  // null in v0.2+: full attention
      break;
    case Family::qwen2:
    case Family::qwen2_moe:
      c.max_positions = f.optional("max_position_embeddings", 32768);
      c.qkv_bias = true;  // Qwen2Attention: q/k/v projections with bias, o_proj without
      // Qwen2 applies its window only with use_sliding_window (off in released checkpoints); when on,
      // it is applied to every layer here (HF leaves the first max_window_layers full).
      if (f.flag("use_sliding_window", false)) c.sliding_window = f.optional("sliding_window", 4096);
      break;
    case Family::qwen3:
    case Family::qwen3_moe:
      // Qwen3: Qwen2's layout without the q/k/v biases, and an RMSNorm over each head of q and k.
      c.max_positions = f.optional("max_position_embeddings", 32768);
      c.qkv_bias = c.o_bias = f.flag("attention_bias", false);
      c.qk_norm = QkNorm::rms_shared;
      if (f.flag("use_sliding_window", false)) c.sliding_window = f.optional("sliding_window", 4096);
      break;
    default: break;
  }
  c.learned_positions = false;
  c.default_seq_len = static_cast<int>(std::min(c.max_positions, kRopeDefaultSeqCap));
}

void parse_gpt2(const Fields& f, TransformerConfig& c) {
  c.hidden = f.required("n_embd");
  c.layers = static_cast<int>(f.required("n_layer"));
  c.heads = f.required("n_head");
  c.vocab = f.required("vocab_size");
  c.max_positions = f.required("n_positions");
  c.intermediate = f.optional("n_inner", 4 * c.hidden);  // GPT2MLP: n_inner or 4 * n_embd
  c.kv_heads = c.heads;
  check_heads(c, "n_embd", "n_head", false);
  c.tie_embeddings = f.flag("tie_word_embeddings", true);
  c.hidden_dropout = f.probability("resid_pdrop", 0.1);
  c.embedding_dropout = f.probability("embd_pdrop", 0.1);
  c.attention_dropout = f.probability("attn_pdrop", 0.1);
  c.learned_positions = true;
  c.default_seq_len = static_cast<int>(c.max_positions);
}

void parse_bert(const Fields& f, TransformerConfig& c) {
  read_decoder_sizes(f, c);
  c.max_positions = f.required("max_position_embeddings");
  c.type_vocab = f.optional("type_vocab_size", 2);
  c.kv_heads = c.heads;
  check_heads(c, "hidden_size", "num_attention_heads", false);
  c.tie_embeddings = f.flag("tie_word_embeddings", true);
  c.hidden_dropout = f.probability("hidden_dropout_prob", 0.1);
  c.embedding_dropout = c.hidden_dropout;
  c.attention_dropout = f.probability("attention_probs_dropout_prob", 0.1);
  c.learned_positions = true;
  c.default_seq_len = static_cast<int>(c.max_positions);
}

}  // namespace

TransformerConfig parse_hf_config(const std::string& json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double (1e999)
    throw InputError(std::string("config.json is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("config.json must be a JSON object; got " + std::string(j.type_name()));
  const auto type_it = j.find("model_type");
  if (type_it == j.end() || !type_it->is_string()) {
    throw InputError("config.json has no 'model_type' string; " + hf_supported_list());
  }
  const std::string type = type_it->get<std::string>();
  static const std::map<std::string, Family, std::less<>> families = {
      {"llama", Family::llama},     {"mistral", Family::mistral},     {"qwen2", Family::qwen2},
      {"qwen3", Family::qwen3},     {"gemma", Family::gemma},         {"gemma2", Family::gemma2},
      {"gemma3", Family::gemma3},   {"gemma3_text", Family::gemma3},  {"phi3", Family::phi3},
      {"phi", Family::phi},         {"stablelm", Family::stablelm},   {"falcon", Family::falcon},
      {"mixtral", Family::mixtral}, {"qwen2_moe", Family::qwen2_moe}, {"qwen3_moe", Family::qwen3_moe},
      {"gpt2", Family::gpt2},       {"bert", Family::bert},
  };
  const auto family_it = families.find(type);
  if (family_it == families.end()) {
    throw InputError("config.json model_type '" + type + "' is not supported; " + hf_supported_list());
  }
  TransformerConfig c;
  c.family = family_it->second;
  // A Gemma 3 checkpoint with vision (Gemma3ForConditionalGeneration, 4B and up) nests its language model
  // under text_config; that model is what is planned (the SigLIP vision tower is left out).
  const json* model = &j;
  if (type == "gemma3") {
    const auto text_it = j.find("text_config");
    if (text_it == j.end() || !text_it->is_object()) {
      throw InputError(
          "config.json (model_type 'gemma3') has no 'text_config' object, which holds the "
          "language model's sizes; give the text model's config (model_type 'gemma3_text')");
    }
    model = &*text_it;
  }
  const Fields f(*model, type == "gemma3" ? "gemma3_text" : type);
  switch (c.family) {
    case Family::gpt2: parse_gpt2(f, c); break;
    case Family::bert: parse_bert(f, c); break;
    case Family::gemma:
    case Family::gemma2:
    case Family::gemma3: parse_gemma_family(f, *model, c); break;
    case Family::phi3: parse_phi3(f, c); break;
    case Family::phi: parse_phi(f, c); break;
    case Family::stablelm: parse_stablelm(f, c); break;
    case Family::falcon: parse_falcon(f, c); break;
    default:
      parse_llama_family(f, c);
      if (c.family == Family::mixtral || c.family == Family::qwen2_moe || c.family == Family::qwen3_moe)
        parse_moe(f, *model, c);
      break;
  }
  const auto name_it = j.find("_name_or_path");
  if (name_it != j.end() && name_it->is_string() && !name_it->get<std::string>().empty()) {
    c.name = name_it->get<std::string>();
  } else {
    c.name = type + " (" + std::to_string(c.layers) + " layers, hidden " + std::to_string(c.hidden) + ")";
  }
  return c;
}

}  // namespace gpusage::workload::detail
