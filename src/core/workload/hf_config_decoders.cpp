// config.json -> TransformerConfig for the decoder families beyond Llama's: Gemma 1/2/3, Phi-3, Phi-2
// ("phi"), StableLM and Falcon. Optional fields take the defaults of the transformers Config class of
// each (GemmaConfig, Gemma2Config, Gemma3TextConfig, Phi3Config, PhiConfig, StableLmConfig,
// FalconConfig); what each reads is what decides a shape.
#include <algorithm>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/hf_fields.hpp"

namespace gpusage::workload::detail {

namespace {

using nlohmann::json;

void finish_rope_decoder(TransformerConfig& c) {
  c.learned_positions = false;
  c.default_seq_len = static_cast<int>(std::min(c.max_positions, kRopeDefaultSeqCap));
}

// Which layers use the sliding window. A layer_types list (transformers >= 4.53 writes one) wins;
// otherwise every pattern-th layer is global: Gemma 2 alternates (pattern 2: even layers local),
// Gemma 3 has five local layers to one global (sliding_window_pattern 6).
std::vector<bool> sliding_layers(const Fields& f, const json& j, int layers, std::int64_t default_pattern) {
  std::vector<bool> sliding(static_cast<std::size_t>(layers));
  const auto types = j.find("layer_types");
  if (types != j.end() && !types->is_null()) {
    if (!types->is_array() || types->size() != sliding.size()) {
      throw InputError("config.json field 'layer_types' is not a list of " + std::to_string(layers) +
                       " entries (one per layer, 'sliding_attention' or 'full_attention')");
    }
    for (std::size_t i = 0; i < sliding.size(); ++i) {
      const json& t = (*types)[i];
      if (t != "sliding_attention" && t != "full_attention") {
        throw InputError("config.json 'layer_types' entry " + std::to_string(i) + " is " + t.dump() +
                         "; expected \"sliding_attention\" or \"full_attention\"");
      }
      sliding[i] = t == "sliding_attention";
    }
    return sliding;
  }
  const std::int64_t pattern = f.optional("sliding_window_pattern", default_pattern);
  for (std::size_t i = 0; i < sliding.size(); ++i) sliding[i] = (static_cast<std::int64_t>(i) + 1) % pattern != 0;
  return sliding;
}

// Sizes, head_dim = hidden / heads, and tying, as the families without a head_dim field read them.
void read_mha_decoder(const Fields& f, TransformerConfig& c, bool tie_default) {
  read_decoder_sizes(f, c);
  check_heads(c, "hidden_size", "num_attention_heads", false);
  c.tie_embeddings = f.flag("tie_word_embeddings", tie_default);
}

// PhiConfig's and Phi3Config's dropouts, all 0 by default (Phi-2's checkpoint sets resid_pdrop 0.1).
void read_phi_dropouts(const Fields& f, TransformerConfig& c) {
  c.hidden_dropout = f.probability("resid_pdrop", 0.0);
  c.embedding_dropout = f.probability("embd_pdrop", 0.0);
  c.attention_dropout = f.probability("attention_dropout", 0.0);
}

}  // namespace

void read_decoder_sizes(const Fields& f, TransformerConfig& c) {
  c.hidden = f.required("hidden_size");
  c.intermediate = f.required("intermediate_size");
  c.layers = static_cast<int>(f.required("num_hidden_layers"));
  c.heads = f.required("num_attention_heads");
  c.vocab = f.required("vocab_size");
  c.kv_heads = f.optional("num_key_value_heads", c.heads);  // HF: None means multi-head attention
}

// GemmaForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM: Llama's block with a GeGLU MLP
// (gelu_pytorch_tanh), head_dim 256 whatever the hidden size, and the lm_head tied to the embeddings.
// Gemma 2 and 3 add a norm after attention and around the MLP (four per layer) and alternate local
// (sliding-window) and global layers; Gemma 3 norms q and k per head. Gemma 3's text_config often
// leaves the head counts and vocabulary at Gemma3TextConfig's defaults, so only the sizes that
// differ between releases are required there.
void parse_gemma_family(const Fields& f, const json& j, TransformerConfig& c) {
  if (c.family == Family::gemma3) {
    c.hidden = f.required("hidden_size");
    c.intermediate = f.required("intermediate_size");
    c.layers = static_cast<int>(f.required("num_hidden_layers"));
    c.heads = f.optional("num_attention_heads", 8);
    c.kv_heads = f.optional("num_key_value_heads", 4);
    c.vocab = f.optional("vocab_size", 262208);
  } else {
    read_decoder_sizes(f, c);
  }
  c.head_dim = f.optional("head_dim", 256);
  check_heads(c, "hidden_size", "num_attention_heads", true);
  c.tie_embeddings = f.flag("tie_word_embeddings", true);
  c.qkv_bias = c.o_bias = f.flag("attention_bias", false);
  c.attention_dropout = f.probability("attention_dropout", 0.0);
  c.gelu_mlp = true;
  c.max_positions = f.optional("max_position_embeddings", c.family == Family::gemma3 ? 131072 : 8192);
  if (c.family != Family::gemma) {
    c.sandwich_norms = true;
    c.sliding_window = f.optional("sliding_window", 4096);
    c.sliding_layers = sliding_layers(f, j, c.layers, c.family == Family::gemma2 ? 2 : 6);
  }
  if (c.family == Family::gemma3) c.qk_norm = QkNorm::rms_shared;
  finish_rope_decoder(c);
}

// Phi3ForCausalLM (Phi-3, Phi-3.5, Phi-4-mini): Llama's block with q/k/v in one qkv_proj and gate/up in
// one gate_up_proj. The fused GEMMs do the same FLOPs as the split ones; LoRA adapts the fused
// matrices, as PEFT's Phi-3 target modules name them.
void parse_phi3(const Fields& f, TransformerConfig& c) {
  read_mha_decoder(f, c, false);
  c.fused_qkv = c.fused_gate_up = true;
  c.max_positions = f.optional("max_position_embeddings", 4096);
  c.sliding_window = f.optional("sliding_window", 0);  // Phi-3-mini-4k: 2047
  read_phi_dropouts(f, c);
  finish_rope_decoder(c);
}

// PhiForCausalLM (Phi-1, Phi-1.5, Phi-2): one LayerNorm feeding attention and a GELU MLP in parallel,
// biases on every projection and on lm_head, partial rotary (partial_rotary_factor).
void parse_phi(const Fields& f, TransformerConfig& c) {
  read_mha_decoder(f, c, false);
  c.layer_norm = c.parallel_block = true;
  c.gated_mlp = false;
  c.gelu_mlp = true;  // gelu_new
  c.qkv_bias = c.o_bias = c.mlp_bias = c.lm_head_bias = true;
  // PhiAttention's optional q/k LayerNorm: one LayerNorm(head_dim) shared by the heads.
  if (f.flag("qk_layernorm", false)) c.qk_norm = QkNorm::layer_shared;
  c.max_positions = f.optional("max_position_embeddings", 2048);
  read_phi_dropouts(f, c);
  finish_rope_decoder(c);
}

// StableLmForCausalLM (StableLM-3B-4E1T, StableLM 2): Llama's block with LayerNorms, partial rotary,
// optional q/k/v biases (use_qkv_bias), optional per-head q/k LayerNorms (qk_layernorm, one LayerNorm
// without bias per head) and an optional parallel residual (use_parallel_residual).
void parse_stablelm(const Fields& f, TransformerConfig& c) {
  read_mha_decoder(f, c, false);
  c.layer_norm = true;
  c.qkv_bias = f.flag("use_qkv_bias", false);
  if (f.flag("qk_layernorm", false)) c.qk_norm = QkNorm::layer_per_head;
  c.parallel_block = f.flag("use_parallel_residual", false);
  c.max_positions = f.optional("max_position_embeddings", 4096);
  c.hidden_dropout = f.probability("hidden_dropout", 0.0);
  c.attention_dropout = f.probability("attention_dropout", 0.0);
  finish_rope_decoder(c);
}

// FalconForCausalLM: a fused query_key_value GEMM, a GELU MLP (ffn_hidden_size, 4h by default), LayerNorms,
// rotary positions unless alibi. The original decoder (Falcon-7B) runs attention and MLP in parallel off
// one LayerNorm with multi-query attention; the new decoder (Falcon-40B/180B) has num_kv_heads key/value
// heads and, by default, a LayerNorm per branch (ln_attn, ln_mlp).
void parse_falcon(const Fields& f, TransformerConfig& c) {
  c.hidden = f.required("hidden_size");
  c.layers = static_cast<int>(f.required("num_hidden_layers"));
  c.heads = f.required("num_attention_heads");
  c.vocab = f.required("vocab_size");
  c.intermediate = f.optional("ffn_hidden_size", 4 * c.hidden);
  const bool new_decoder = f.flag("new_decoder_architecture", false);
  if (new_decoder) {
    c.kv_heads = f.optional("num_kv_heads", c.heads);
  } else {
    c.kv_heads = f.flag("multi_query", true) ? 1 : c.heads;
  }
  check_heads(c, "hidden_size", "num_attention_heads", false);
  c.tie_embeddings = f.flag("tie_word_embeddings", true);
  c.layer_norm = c.fused_qkv = c.gelu_mlp = true;
  c.gated_mlp = false;
  c.qkv_bias = c.o_bias = c.mlp_bias = f.flag("bias", false);
  c.rotary = !f.flag("alibi", false);
  c.parallel_block = new_decoder || f.flag("parallel_attn", true);
  c.parallel_two_norms = new_decoder && f.optional("num_ln_in_parallel_attn", 2) == 2;
  c.max_positions = f.optional("max_position_embeddings", 2048);
  c.hidden_dropout = f.probability("hidden_dropout", 0.0);
  c.attention_dropout = f.probability("attention_dropout", 0.0);
  finish_rope_decoder(c);
}

// MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM: the MLP of an MoE layer is a router (one
// logit per expert, softmax, top-k) and `experts` expert MLPs, of which each token runs experts_per_token.
// Mixtral's experts are intermediate_size wide and every layer is MoE; Qwen's are moe_intermediate_size
// wide, every decoder_sparse_step-th layer not in mlp_only_layers is MoE (the others a dense MLP of
// intermediate_size), and Qwen2-MoE adds a shared expert. Defaults: MixtralConfig, Qwen2MoeConfig,
// Qwen3MoeConfig.
void parse_moe(const Fields& f, const json& j, TransformerConfig& c) {
  if (c.family == Family::mixtral) {
    c.experts = f.optional("num_local_experts", 8);
    c.experts_per_token = f.optional("num_experts_per_tok", 2);
    c.expert_intermediate = c.intermediate;
  } else {
    const bool qwen2 = c.family == Family::qwen2_moe;
    c.experts = f.optional("num_experts", qwen2 ? 60 : 128);
    c.experts_per_token = f.optional("num_experts_per_tok", qwen2 ? 4 : 8);
    c.expert_intermediate = f.optional("moe_intermediate_size", qwen2 ? 1408 : 768);
    if (qwen2) c.shared_expert_intermediate = f.optional("shared_expert_intermediate_size", 5632);
    const std::int64_t step = f.optional("decoder_sparse_step", 1);
    c.moe_layers.assign(static_cast<std::size_t>(c.layers), false);
    for (int i = 0; i < c.layers; ++i) c.moe_layers[static_cast<std::size_t>(i)] = (i + 1) % step == 0;
    const auto dense = j.find("mlp_only_layers");
    if (dense != j.end() && !dense->is_null()) {
      if (!dense->is_array()) {
        throw InputError("config.json field 'mlp_only_layers' is " + dense->dump() +
                         "; expected a list of layer indices");
      }
      for (const json& v : *dense) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= c.layers) {
          throw InputError("config.json 'mlp_only_layers' entry " + v.dump() + " is not a layer index from 0 to " +
                           std::to_string(c.layers - 1));
        }
        c.moe_layers[v.get<std::size_t>()] = false;
      }
    }
  }
  if (c.experts_per_token > c.experts) {
    throw InputError("config.json 'num_experts_per_tok' " + std::to_string(c.experts_per_token) + " is more than the " +
                     std::to_string(c.experts) + " experts");
  }
}

}  // namespace gpusage::workload::detail
