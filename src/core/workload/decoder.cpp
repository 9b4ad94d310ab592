// Decoder-only language models with rotary positions, layer by layer as Hugging Face's modeling code
// runs them in training mode: Llama, Mistral, Qwen2/Qwen3 (transformers/models/<type>/modeling_<type>.py),
// Gemma 1/2/3, Phi-3, Phi-2 ("phi"), StableLM, Falcon, and the mixtures of experts Mixtral, Qwen2-MoE and
// Qwen3-MoE. One builder covers them; TransformerConfig's
// decoder fields (models.hpp) say where each departs from Llama. Layer names are the HF module paths.
#include <string>

#include "core/workload/layers.hpp"
#include "core/workload/models.hpp"

namespace gpusage::workload::detail {

namespace {

// The module paths that differ from Llama's.
struct DecoderNames {
  std::string embed = "model.embed_tokens";
  std::string layers = "model.layers";
  std::string final_norm = "model.norm";
  std::string attn = "self_attn";
  std::string qkv = "qkv_proj";  // fused q/k/v (phi3)
  std::string o = "o_proj";
  std::string fc_in = "fc1";  // non-gated MLP (phi)
  std::string fc_out = "fc2";
};

DecoderNames decoder_names(Family f) {
  DecoderNames n;
  if (f == Family::phi) {
    n.o = "dense";
    n.final_norm = "model.final_layernorm";
  } else if (f == Family::falcon) {
    n.embed = "transformer.word_embeddings";
    n.layers = "transformer.h";
    n.final_norm = "transformer.ln_f";
    n.attn = "self_attention";
    n.qkv = "query_key_value";
    n.o = "dense";
    n.fc_in = "dense_h_to_4h";
    n.fc_out = "dense_4h_to_h";
  }
  return n;
}

Tensor decoder_norm(Graph& g, const TransformerConfig& c, const std::string& name, const Tensor& x) {
  return c.layer_norm ? layer_norm(g, name, x) : rms_norm(g, name, x);
}

// Self-attention up to and including the output projection. Fused projections (phi3, falcon) are one
// GEMM whose output q, k and v are slices of: saving a slice keeps the whole output alive (select()).
Tensor decoder_attention_block(Graph& g, const TransformerConfig& c, const DecoderNames& n, const std::string& p,
                               const Tensor& y, const AttentionSpec& spec) {
  const std::int64_t seq = y.shape.at(0);
  const std::int64_t q_dim = c.heads * c.head_dim;
  const std::int64_t kv_dim = c.kv_heads * c.head_dim;
  const std::string a = p + "." + n.attn;
  Tensor q, k, v;
  if (c.fused_qkv) {
    const Tensor qkv = linear(g, a + "." + n.qkv, y, lora_attention(q_dim + 2 * kv_dim, c.qkv_bias));
    q = select(qkv, {seq, q_dim});
    k = select(qkv, {seq, kv_dim});
    v = select(qkv, {seq, kv_dim});
  } else {
    q = linear(g, a + ".q_proj", y, lora_attention(q_dim, c.qkv_bias));
    k = linear(g, a + ".k_proj", y, lora_attention(kv_dim, c.qkv_bias));
    v = linear(g, a + ".v_proj", y, lora_attention(kv_dim, c.qkv_bias));
  }
  if (c.qk_norm != QkNorm::none) {
    const bool ln = c.qk_norm != QkNorm::rms_shared;
    const std::string suffix = ln ? "_layernorm" : "_norm";
    const std::int64_t per_head = c.qk_norm == QkNorm::layer_shared ? 2 * c.head_dim : c.head_dim;
    const bool each_head = c.qk_norm == QkNorm::layer_per_head;
    q = head_norm(g, a + ".q" + suffix, q, c.head_dim, each_head ? q_dim : per_head, ln);
    k = head_norm(g, a + ".k" + suffix, k, c.head_dim, each_head ? kv_dim : per_head, ln);
  }
  // Partial rotary (phi, stablelm) rotates part of each head and concatenates the rest back: the output
  // is as large as full rotary's, and the few elementwise FLOPs saved are left out.
  Tensor out = c.rotary ? attention(g, a + ".core", {rotary(g, a + ".rotary", q, k), v}, spec)
                        : attention(g, a + ".core", {q, k, v}, spec);
  return linear(g, a + "." + n.o, out, lora_attention(c.hidden, c.o_bias));
}

// The MLP module `m` of `width`: gated (down(act(gate(x)) * up(x))) or not (fc2(act(fc1(x)))). `experts` > 1:
// the matrices of a mixture-of-experts layer, whose input rows are the dispatched tokens.
Tensor decoder_mlp_block(Graph& g, const TransformerConfig& c, const DecoderNames& n, const std::string& m,
                         const Tensor& y, std::int64_t width, std::int64_t experts = 1) {
  const Activation act = c.gelu_mlp ? Activation::gelu : Activation::silu;
  const auto spec = [&](std::int64_t out) {
    LinearSpec s = lora_mlp(out, c.mlp_bias);
    s.experts = experts;
    return s;
  };
  const bool mixtral = experts > 1 && c.family == Family::mixtral;  // Mixtral names them w1 (gate), w3, w2
  if (!c.gated_mlp) {
    Tensor h = linear(g, m + "." + n.fc_in, y, spec(width));
    h = activation(g, m + ".act", h, act);
    return linear(g, m + "." + n.fc_out, h, spec(c.hidden));
  }
  Tensor gate, up;
  if (c.fused_gate_up) {
    const Tensor gate_up = linear(g, m + ".gate_up_proj", y, spec(2 * width));
    gate = activation(g, m + ".act_fn", select(gate_up, {y.shape.at(0), width}), act);
    up = select(gate_up, {y.shape.at(0), width});
  } else {
    gate = linear(g, m + (mixtral ? ".w1" : ".gate_proj"), y, spec(width));
    gate = activation(g, m + ".act_fn", gate, act);
    up = linear(g, m + (mixtral ? ".w3" : ".up_proj"), y, spec(width));
  }
  const Tensor h = mul(g, m + ".mul", gate, up);
  return linear(g, m + (mixtral ? ".w2" : ".down_proj"), h, spec(c.hidden));
}

// A mixture-of-experts MLP as HF runs it in eager mode: the router (a GEMM to one logit per expert; its
// softmax, like a sigmoid, keeps its output for backward), each token's hidden state dispatched to its
// top-k experts, the experts' GEMMs over the dispatched rows (weights of every expert, FLOPs of the
// chosen ones), and the outputs scaled by their routing weights and summed back. Qwen2-MoE adds a shared
// expert scaled by sigmoid(shared_expert_gate(x)). Expert parallelism is not modelled: every GPU holds
// every expert (or its FSDP shard).
Tensor decoder_moe_block(Graph& g, const TransformerConfig& c, const DecoderNames& n, const std::string& p,
                         const Tensor& y) {
  const std::string m = p + (c.family == Family::mixtral ? ".block_sparse_moe" : ".mlp");
  const std::int64_t seq = y.shape.at(0);
  Tensor probs = linear(g, m + ".gate", y, LinearSpec{c.experts, false});
  probs = activation(g, m + ".router_softmax", probs, Activation::sigmoid);
  const Tensor tokens = expert_dispatch(g, m + ".dispatch", y, c.experts_per_token);
  const Tensor routed = decoder_mlp_block(g, c, n, m + ".experts", tokens, c.expert_intermediate, c.experts);
  Tensor out = expert_combine(g, m + ".combine", routed, select(probs, {seq, c.experts_per_token}), seq);
  if (c.shared_expert_intermediate > 0) {
    Tensor shared = decoder_mlp_block(g, c, n, m + ".shared_expert", y, c.shared_expert_intermediate);
    Tensor gate = linear(g, m + ".shared_expert_gate", y, LinearSpec{1, false});
    gate = activation(g, m + ".shared_expert_gate.act", gate, Activation::sigmoid);
    shared = mul(g, m + ".shared_expert.scale", shared, gate);
    out = add(g, m + ".add_shared", out, shared);
  }
  return out;
}

// One decoder layer. Sequential (Llama): x += attn(norm(x)); x += mlp(norm(x)). Gemma 2/3 also norm
// each block's output before the residual add. Parallel (phi, falcon, stablelm's
// use_parallel_residual): x += attn(norm(x)) + mlp(norm(x)), with falcon's new decoder norming the
// two branches separately (ln_attn, ln_mlp).
Tensor decoder_layer(Graph& g, const TransformerConfig& c, const DecoderNames& n, const std::string& p, Tensor x,
                     const AttentionSpec& spec, bool moe) {
  const auto mlp = [&](const Tensor& y) {
    return moe ? decoder_moe_block(g, c, n, p, y) : decoder_mlp_block(g, c, n, p + ".mlp", y, c.intermediate);
  };
  if (c.parallel_block) {
    const Tensor y_attn = decoder_norm(g, c, p + (c.parallel_two_norms ? ".ln_attn" : ".input_layernorm"), x);
    const Tensor y_mlp = c.parallel_two_norms ? decoder_norm(g, c, p + ".ln_mlp", x) : y_attn;
    Tensor a = decoder_attention_block(g, c, n, p, y_attn, spec);
    a = dropout(g, p + ".resid_dropout", a, c.hidden_dropout);
    Tensor m = mlp(y_mlp);
    m = dropout(g, p + ".resid_dropout#2", m, c.hidden_dropout);
    return residual_add(g, p + ".add#2", residual_add(g, p + ".add", a, m), x);
  }
  Tensor y = decoder_norm(g, c, p + ".input_layernorm", x);
  y = decoder_attention_block(g, c, n, p, y, spec);
  if (c.sandwich_norms) y = decoder_norm(g, c, p + ".post_attention_layernorm", y);
  y = dropout(g, p + ".resid_attn_dropout", y, c.hidden_dropout);
  x = residual_add(g, p + ".add", y, x);
  y = decoder_norm(g, c, p + (c.sandwich_norms ? ".pre_feedforward_layernorm" : ".post_attention_layernorm"), x);
  y = mlp(y);
  if (c.sandwich_norms) y = decoder_norm(g, c, p + ".post_feedforward_layernorm", y);
  y = dropout(g, p + ".resid_mlp_dropout", y, c.hidden_dropout);
  return residual_add(g, p + ".add#2", y, x);
}

}  // namespace

// Gemma multiplies the embeddings by sqrt(hidden_size) (a constant: nothing saved, one elementwise
// pass left out). Gemma 2's attention and final-logit soft-capping (tanh(x / cap) * cap) are
// elementwise too: FLOPs under 0.1% of a step. The final-logit cap is left out of memory as well,
// because chunked and fused losses (Liger, Unsloth) apply it inside their kernel; the plain HF loss
// path keeps one more vocab-wide tensor for its tanh.
void decoder(Graph& g, const TransformerConfig& c, int seq, bool flash) {
  const DecoderNames n = decoder_names(c.family);
  Tensor x = embedding(g, n.embed, seq, c.vocab, c.hidden, true);
  x = dropout(g, "model.embed_dropout", x, c.embedding_dropout);
  const AttentionSpec spec = attention_spec(c, seq, true, flash);
  for (int i = 0; i < c.layers; ++i) {
    g.set_segment(i);
    AttentionSpec layer_spec = spec;
    const bool sliding = c.sliding_layers.empty() || c.sliding_layers.at(static_cast<std::size_t>(i));
    layer_spec.sliding_window = sliding ? c.sliding_window : 0;
    const bool moe = c.experts > 0 && (c.moe_layers.empty() || c.moe_layers.at(static_cast<std::size_t>(i)));
    x = decoder_layer(g, c, n, n.layers + "." + std::to_string(i), x, layer_spec, moe);
  }
  g.set_segment(-1);
  x = decoder_norm(g, c, n.final_norm, x);
  x = linear(g, "lm_head", x, LinearSpec{c.vocab, c.lm_head_bias, c.tie_embeddings});
  cross_entropy(g, "loss", x);
}

}  // namespace gpusage::workload::detail
