// Language models, layer by layer as Hugging Face's modeling code runs them in training mode
// (gpt2/modeling_gpt2.py, bert/modeling_bert.py; the rotary decoders are in decoder.cpp). Layer names
// are the HF module paths; the attention core, which has no module of its own, is
// "<attention module>.core".
#include <stdexcept>
#include <string>

#include "core/workload/layers.hpp"
#include "core/workload/models.hpp"

namespace gpusage::workload::detail {

const char* to_string(Family f) {
  switch (f) {
    case Family::llama: return "llama";
    case Family::mistral: return "mistral";
    case Family::qwen2: return "qwen2";
    case Family::qwen3: return "qwen3";
    case Family::gemma: return "gemma";
    case Family::gemma2: return "gemma2";
    case Family::gemma3: return "gemma3_text";
    case Family::phi3: return "phi3";
    case Family::phi: return "phi";
    case Family::stablelm: return "stablelm";
    case Family::falcon: return "falcon";
    case Family::mixtral: return "mixtral";
    case Family::qwen2_moe: return "qwen2_moe";
    case Family::qwen3_moe: return "qwen3_moe";
    case Family::gpt2: return "gpt2";
    case Family::bert: return "bert";
  }
  return "?";
}

// The transformers class that runs a config.json of this family for causal LM (pre-training for BERT).
const char* hf_class(Family f) {
  switch (f) {
    case Family::llama: return "LlamaForCausalLM";
    case Family::mistral: return "MistralForCausalLM";
    case Family::qwen2: return "Qwen2ForCausalLM";
    case Family::qwen3: return "Qwen3ForCausalLM";
    case Family::gemma: return "GemmaForCausalLM";
    case Family::gemma2: return "Gemma2ForCausalLM";
    case Family::gemma3: return "Gemma3ForCausalLM";
    case Family::phi3: return "Phi3ForCausalLM";
    case Family::phi: return "PhiForCausalLM";
    case Family::stablelm: return "StableLmForCausalLM";
    case Family::falcon: return "FalconForCausalLM";
    case Family::mixtral: return "MixtralForCausalLM";
    case Family::qwen2_moe: return "Qwen2MoeForCausalLM";
    case Family::qwen3_moe: return "Qwen3MoeForCausalLM";
    case Family::gpt2: return "GPT2LMHeadModel";
    case Family::bert: return "BertForPreTraining";
  }
  return "?";
}

AttentionSpec attention_spec(const TransformerConfig& c, int seq_len, bool causal, bool flash) {
  AttentionSpec a;
  a.seq = seq_len;
  a.heads = c.heads;
  a.kv_heads = c.kv_heads;
  a.head_dim = c.head_dim;
  a.causal = causal;
  a.dropout = c.attention_dropout;
  a.sliding_window = c.sliding_window;
  a.flash = flash;
  return a;
}

namespace {

// GPT2LMHeadModel: token + learned position embeddings, dropout, pre-LN blocks with a fused c_attn
// (Conv1D h -> 3h), causal attention with attn_pdrop, resid dropout, GELU MLP, ln_f, lm_head tied to
// wte. GPT-2's "gelu_new" is counted as one fused GELU that keeps its input (HF's NewGELUActivation
// is a Python expression that, unfused, keeps about four 4h tensors instead of one).
void gpt2(Graph& g, const TransformerConfig& c, int seq, bool flash) {
  const std::int64_t h = c.hidden;
  Tensor x = embedding(g, "transformer.wte", seq, c.vocab, h, true);
  Tensor pos = embedding(g, "transformer.wpe", seq, c.max_positions, h, false);
  x = residual_add(g, "transformer.add", x, pos);
  x = dropout(g, "transformer.drop", x, c.embedding_dropout);
  const AttentionSpec attn = attention_spec(c, seq, true, flash);
  for (int i = 0; i < c.layers; ++i) {
    g.set_segment(i);
    const std::string p = "transformer.h." + std::to_string(i);
    Tensor y = layer_norm(g, p + ".ln_1", x);
    Tensor qkv = linear(g, p + ".attn.c_attn", y, lora_attention(3 * h, true));
    y = attention(g, p + ".attn.core", {qkv}, attn);
    y = linear(g, p + ".attn.c_proj", y, lora_attention(h, true));
    y = dropout(g, p + ".attn.resid_dropout", y, c.hidden_dropout);
    x = residual_add(g, p + ".add", y, x);
    y = layer_norm(g, p + ".ln_2", x);
    y = linear(g, p + ".mlp.c_fc", y, lora_mlp(c.intermediate, true));
    y = activation(g, p + ".mlp.act", y, Activation::gelu);
    y = linear(g, p + ".mlp.c_proj", y, lora_mlp(h, true));
    y = dropout(g, p + ".mlp.dropout", y, c.hidden_dropout);
    x = residual_add(g, p + ".add#2", y, x);
  }
  g.set_segment(-1);
  x = layer_norm(g, "transformer.ln_f", x);
  x = linear(g, "lm_head", x, LinearSpec{c.vocab, false, c.tie_embeddings});
  cross_entropy(g, "loss", x);
}

// BertForPreTraining: the encoder (BertModel with pooler) plus both pre-training heads, the masked-LM
// head (dense, GELU, LayerNorm, decoder tied to the word embeddings with its own bias) and the
// next-sentence head on the pooled [CLS]; the MLM loss runs over every position (HF computes the
// log-softmax of all rows, ignoring labels of -100 only in the sum). Post-LN encoder layers.
// With the question-answering head (BertForQuestionAnswering, SQuAD fine-tuning) there is no pooler and
// no pre-training head: qa_outputs maps each position to start/end logits (h -> 2), and the loss is a
// cross-entropy over the sequence for each.
void bert(Graph& g, const TransformerConfig& c, int seq, bool flash, Head head) {
  const std::int64_t h = c.hidden;
  Tensor x = embedding(g, "bert.embeddings.word_embeddings", seq, c.vocab, h, true);
  Tensor tt = embedding(g, "bert.embeddings.token_type_embeddings", seq, c.type_vocab, h, true);
  Tensor pos = embedding(g, "bert.embeddings.position_embeddings", seq, c.max_positions, h, false);
  x = residual_add(g, "bert.embeddings.add", x, tt);
  x = residual_add(g, "bert.embeddings.add#2", x, pos);
  x = layer_norm(g, "bert.embeddings.LayerNorm", x);
  x = dropout(g, "bert.embeddings.dropout", x, c.embedding_dropout);
  AttentionSpec attn = attention_spec(c, seq, false, flash);
  attn.additive_mask = true;  // BertSelfAttention adds the extended attention mask to the scores
  for (int i = 0; i < c.layers; ++i) {
    g.set_segment(i);
    const std::string p = "bert.encoder.layer." + std::to_string(i);
    Tensor q = linear(g, p + ".attention.self.query", x, lora_attention(h, true));
    Tensor k = linear(g, p + ".attention.self.key", x, lora_attention(h, true));
    Tensor v = linear(g, p + ".attention.self.value", x, lora_attention(h, true));
    Tensor y = attention(g, p + ".attention.self.core", {q, k, v}, attn);
    y = linear(g, p + ".attention.output.dense", y, lora_attention(h, true));
    y = dropout(g, p + ".attention.output.dropout", y, c.hidden_dropout);
    y = residual_add(g, p + ".attention.output.add", y, x);
    const Tensor attended = layer_norm(g, p + ".attention.output.LayerNorm", y);
    y = linear(g, p + ".intermediate.dense", attended, lora_mlp(c.intermediate, true));
    y = activation(g, p + ".intermediate.intermediate_act_fn", y, Activation::gelu);
    y = linear(g, p + ".output.dense", y, lora_mlp(h, true));
    y = dropout(g, p + ".output.dropout", y, c.hidden_dropout);
    y = residual_add(g, p + ".output.add", y, attended);
    x = layer_norm(g, p + ".output.LayerNorm", y);
  }
  g.set_segment(-1);
  if (head == Head::question_answering) {
    Tensor logits = linear(g, "qa_outputs", x, LinearSpec{2, true});
    cross_entropy(g, "qa_loss", logits);
    return;
  }
  // hidden_states[:, 0] is a strided view: the pooler's saved input keeps the last hidden state
  // (already kept by the MLM head) alive.
  Tensor pooled = linear(g, "bert.pooler.dense", select(x, {h}), LinearSpec{h, true});
  pooled = activation(g, "bert.pooler.activation", pooled, Activation::tanh);
  Tensor t = linear(g, "cls.predictions.transform.dense", x, LinearSpec{h, true});
  t = activation(g, "cls.predictions.transform.transform_act_fn", t, Activation::gelu);
  t = layer_norm(g, "cls.predictions.transform.LayerNorm", t);
  t = linear(g, "cls.predictions.decoder", t, LinearSpec{c.vocab, true, c.tie_embeddings});
  cross_entropy(g, "mlm_loss", t);
  Tensor nsp = linear(g, "cls.seq_relationship", pooled, LinearSpec{2, true});
  cross_entropy(g, "nsp_loss", nsp);
}

}  // namespace

std::vector<Layer> transformer(const TransformerConfig& config, int seq_len, bool flash_attention, Head head) {
  Graph g;
  switch (config.family) {
    case Family::gpt2: gpt2(g, config, seq_len, flash_attention); break;
    case Family::bert: bert(g, config, seq_len, flash_attention, head); break;
    default: decoder(g, config, seq_len, flash_attention); break;
  }
  return g.finish();
}

}  // namespace gpusage::workload::detail
