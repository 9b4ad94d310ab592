// The zoo's language models as the config.json each checkpoint ships on the Hugging Face Hub (the
// fields the builders read; tokenizer ids and initialisation settings left out). build() parses these
// with the same importer as from_hf_config(), so the zoo also tests the importer.
#include <map>
#include <stdexcept>
#include <string>

#include "core/workload/models.hpp"

namespace gpusage::workload::detail {

namespace {

// https://huggingface.co/google-bert/bert-base-uncased/blob/main/config.json
constexpr const char* kBertBase = R"json({
  "_name_or_path": "google-bert/bert-base-uncased", "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
  "hidden_size": 768, "intermediate_size": 3072, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 12, "num_hidden_layers": 12, "type_vocab_size": 2, "vocab_size": 30522
})json";

// https://huggingface.co/google-bert/bert-large-uncased/blob/main/config.json
constexpr const char* kBertLarge = R"json({
  "_name_or_path": "google-bert/bert-large-uncased", "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
  "hidden_size": 1024, "intermediate_size": 4096, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 16, "num_hidden_layers": 24, "type_vocab_size": 2, "vocab_size": 30522
})json";

// https://huggingface.co/openai-community/gpt2/blob/main/config.json (and -medium, -large, -xl)
constexpr const char* kGpt2 = R"json({
  "_name_or_path": "openai-community/gpt2", "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "embd_pdrop": 0.1, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1,
  "vocab_size": 50257
})json";
constexpr const char* kGpt2Medium = R"json({
  "_name_or_path": "openai-community/gpt2-medium", "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "embd_pdrop": 0.1, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 1024, "n_head": 16, "n_layer": 24, "n_positions": 1024, "resid_pdrop": 0.1,
  "vocab_size": 50257
})json";
constexpr const char* kGpt2Large = R"json({
  "_name_or_path": "openai-community/gpt2-large", "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "embd_pdrop": 0.1, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 1280, "n_head": 20, "n_layer": 36, "n_positions": 1024, "resid_pdrop": 0.1,
  "vocab_size": 50257
})json";
constexpr const char* kGpt2Xl = R"json({
  "_name_or_path": "openai-community/gpt2-xl", "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "embd_pdrop": 0.1, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 1600, "n_head": 25, "n_layer": 48, "n_positions": 1024, "resid_pdrop": 0.1,
  "vocab_size": 50257
})json";

// https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
constexpr const char* kLlama2_7b = R"json({
  "_name_or_path": "meta-llama/Llama-2-7b-hf", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "vocab_size": 32000
})json";

// https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json
constexpr const char* kLlama2_13b = R"json({
  "_name_or_path": "meta-llama/Llama-2-13b-hf", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 5120, "intermediate_size": 13824, "max_position_embeddings": 4096, "model_type": "llama",
  "num_attention_heads": 40, "num_hidden_layers": 40, "num_key_value_heads": 40, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "vocab_size": 32000
})json";

// https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json
constexpr const char* kLlama3_8b = R"json({
  "_name_or_path": "meta-llama/Meta-Llama-3-8B", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 128256
})json";

// https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
constexpr const char* kMistral7b = R"json({
  "_name_or_path": "mistralai/Mistral-7B-v0.1", "architectures": ["MistralForCausalLM"], "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false, "vocab_size": 32000
})json";

// https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json (rope_scaling left out: it changes
// positions, not shapes)
constexpr const char* kLlama31_8b = R"json({
  "_name_or_path": "meta-llama/Llama-3.1-8B", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 128256
})json";

// https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json
constexpr const char* kLlama32_1b = R"json({
  "_name_or_path": "meta-llama/Llama-3.2-1B", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 2048, "head_dim": 64, "intermediate_size": 8192, "max_position_embeddings": 131072,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": true, "vocab_size": 128256
})json";

// https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json
constexpr const char* kLlama32_3b = R"json({
  "_name_or_path": "meta-llama/Llama-3.2-3B", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
  "hidden_size": 3072, "head_dim": 128, "intermediate_size": 8192, "max_position_embeddings": 131072,
  "model_type": "llama", "num_attention_heads": 24, "num_hidden_layers": 28, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": true, "vocab_size": 128256
})json";

// https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json
constexpr const char* kQwen25_7b = R"json({
  "_name_or_path": "Qwen/Qwen2.5-7B", "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu",
  "hidden_size": 3584, "intermediate_size": 18944, "max_position_embeddings": 131072, "model_type": "qwen2",
  "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 152064
})json";

// https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json
constexpr const char* kQwen25_14b = R"json({
  "_name_or_path": "Qwen/Qwen2.5-14B", "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu",
  "hidden_size": 5120, "intermediate_size": 13824, "max_position_embeddings": 131072, "model_type": "qwen2",
  "num_attention_heads": 40, "num_hidden_layers": 48, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0, "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 152064
})json";

// https://huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json
constexpr const char* kMistral7bV03 = R"json({
  "_name_or_path": "mistralai/Mistral-7B-v0.3", "architectures": ["MistralForCausalLM"], "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0, "sliding_window": null, "tie_word_embeddings": false, "vocab_size": 32768
})json";

// https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json
constexpr const char* kQwen3_8b = R"json({
  "_name_or_path": "Qwen/Qwen3-8B", "architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 12288, "max_position_embeddings": 40960, "model_type": "qwen3", "num_attention_heads": 32,
  "num_hidden_layers": 36, "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000,
  "sliding_window": null, "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 151936
})json";

// https://huggingface.co/google/gemma-2-2b/blob/main/config.json (soft-capping kept: the builder
// leaves it out, decoder.cpp says why)
constexpr const char* kGemma2_2b = R"json({
  "_name_or_path": "google/gemma-2-2b", "architectures": ["Gemma2ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304, "intermediate_size": 9216,
  "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26,
  "num_key_value_heads": 4, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
  "sliding_window": 4096, "vocab_size": 256000
})json";

// https://huggingface.co/google/gemma-2-9b/blob/main/config.json
constexpr const char* kGemma2_9b = R"json({
  "_name_or_path": "google/gemma-2-9b", "architectures": ["Gemma2ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584, "intermediate_size": 14336,
  "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 16, "num_hidden_layers": 42,
  "num_key_value_heads": 8, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
  "sliding_window": 4096, "vocab_size": 256000
})json";

// https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json
constexpr const char* kPhi3Mini = R"json({
  "_name_or_path": "microsoft/Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"],
  "attention_bias": false, "attention_dropout": 0.0, "embd_pdrop": 0.0, "hidden_act": "silu", "hidden_size": 3072,
  "intermediate_size": 8192, "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
  "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0, "sliding_window": 2047,
  "tie_word_embeddings": false, "vocab_size": 32064
})json";

// https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0/blob/main/config.json
constexpr const char* kTinyLlama = R"json({
  "_name_or_path": "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "architectures": ["LlamaForCausalLM"],
  "attention_bias": false, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 5632,
  "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 22,
  "num_key_value_heads": 4, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": false,
  "vocab_size": 32000
})json";

// https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json
constexpr const char* kQwen25_05b = R"json({
  "_name_or_path": "Qwen/Qwen2.5-0.5B", "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu",
  "hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768, "model_type": "qwen2",
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 151936
})json";

// https://huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json
constexpr const char* kQwen25_15b = R"json({
  "_name_or_path": "Qwen/Qwen2.5-1.5B", "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu",
  "hidden_size": 1536, "intermediate_size": 8960, "max_position_embeddings": 131072, "model_type": "qwen2",
  "num_attention_heads": 12, "num_hidden_layers": 28, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 151936
})json";

// https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json
constexpr const char* kQwen25_3b = R"json({
  "_name_or_path": "Qwen/Qwen2.5-3B", "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu",
  "hidden_size": 2048, "intermediate_size": 11008, "max_position_embeddings": 32768, "model_type": "qwen2",
  "num_attention_heads": 16, "num_hidden_layers": 36, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 151936
})json";

}  // namespace

const std::string& zoo_hf_config(const std::string& id) {
  static const std::map<std::string, std::string> configs = {
      {"bert-base", kBertBase},           {"bert-large", kBertLarge},    {"gpt2", kGpt2},
      {"gpt2-medium", kGpt2Medium},       {"gpt2-large", kGpt2Large},    {"gpt2-xl", kGpt2Xl},
      {"llama2-7b", kLlama2_7b},          {"llama2-13b", kLlama2_13b},   {"llama3-8b", kLlama3_8b},
      {"mistral-7b", kMistral7b},         {"llama3.1-8b", kLlama31_8b},  {"llama3.2-1b", kLlama32_1b},
      {"llama3.2-3b", kLlama32_3b},       {"qwen2.5-7b", kQwen25_7b},    {"qwen2.5-14b", kQwen25_14b},
      {"mistral-7b-v0.3", kMistral7bV03}, {"qwen3-8b", kQwen3_8b},       {"gemma2-2b", kGemma2_2b},
      {"gemma2-9b", kGemma2_9b},          {"phi3-mini", kPhi3Mini},      {"tinyllama-1.1b", kTinyLlama},
      {"qwen2.5-0.5b", kQwen25_05b},      {"qwen2.5-1.5b", kQwen25_15b}, {"qwen2.5-3b", kQwen25_3b},
  };
  const auto it = configs.find(id);
  if (it == configs.end()) throw std::logic_error("no config.json for zoo model " + id);
  return it->second;
}

}  // namespace gpusage::workload::detail
