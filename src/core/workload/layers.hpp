// Internal to the workload module: one helper per PyTorch op, each recording what the op costs and,
// above all, what autograd keeps for backward in training mode (the rules are documented on each
// helper in layers.cpp). Models in vision.cpp and transformer.cpp are written only with these.
//
// Shapes are per sample: {C, H, W} for images, {S, F} for sequences (features last), {F} for vectors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/workload/graph.hpp"

namespace gpusage::workload::detail {

// "prefix" + "." + "name", tolerating an empty prefix.
std::string join_name(const std::string& prefix, const std::string& name);

// A view (reshape, permute, flatten, select of a contiguous block): same storage, new shape. Autograd
// keeps the base storage alive when a view is saved, which is what sharing the tensor id models.
Tensor view(const Tensor& x, std::vector<std::int64_t> shape);

// A strided view of part of base (x[:, 0]): its own shape, but saving it keeps all of base alive.
Tensor select(const Tensor& base, std::vector<std::int64_t> shape);

// ---- Convolutional networks ----
struct ConvSpec {
  std::int64_t out_channels = 0;
  int kernel = 1;
  int stride = 1;
  int padding = 0;
  std::int64_t groups = 1;
  bool bias = false;
  bool input_needs_grad = true;  // false for the first conv: its input is the image
};
Tensor conv2d(Graph& g, const std::string& name, const Tensor& x, const ConvSpec& c);
Tensor batch_norm(Graph& g, const std::string& name, const Tensor& x);

enum class Activation { none, relu, relu6, silu, gelu, sigmoid, tanh };
Tensor activation(Graph& g, const std::string& name, const Tensor& x, Activation act);

// torchvision's Conv2dNormActivation: "<prefix>.0" conv (no bias), "<prefix>.1" BN, "<prefix>.2" act.
Tensor conv_bn_act(Graph& g, const std::string& prefix, const Tensor& x, const ConvSpec& c, Activation act);

Tensor max_pool2d(Graph& g, const std::string& name, const Tensor& x, int kernel, int stride, int padding);
Tensor adaptive_avg_pool2d(Graph& g, const std::string& name, const Tensor& x, std::int64_t out_side);

Tensor add(Graph& g, const std::string& name, const Tensor& a, const Tensor& b);
// An add into a transformer's residual stream (fp32 under autocast: Layer::autocast_extra_io_bytes).
Tensor residual_add(Graph& g, const std::string& name, const Tensor& stream, const Tensor& block_output);
Tensor mul(Graph& g, const std::string& name, const Tensor& a, const Tensor& b);  // b may broadcast
Tensor dropout(Graph& g, const std::string& name, const Tensor& x, double p);     // p == 0: no layer

// ---- Sequence models ----
struct LinearSpec {
  std::int64_t out_features = 0;
  bool bias = true;
  bool weight_tied = false;  // weight shared with an embedding (GPT-2 lm_head, BERT MLM decoder)
  bool lora = false;         // a matrix LoRA may adapt
  bool attention = false;    // … and it is an attention projection (not an MLP matrix)
  bool input_needs_grad = true;
  std::int64_t experts = 1;  // a mixture-of-experts matrix: `experts` weights, each row through one of them
};
Tensor linear(Graph& g, const std::string& name, const Tensor& x, const LinearSpec& l);
// Matrices LoRA may adapt, tagged by block for --lora-targets.
inline LinearSpec lora_mlp(std::int64_t out, bool bias) { return LinearSpec{out, bias, false, true}; }
inline LinearSpec lora_attention(std::int64_t out, bool bias) { return LinearSpec{out, bias, false, true, true}; }
Tensor layer_norm(Graph& g, const std::string& name, const Tensor& x);
Tensor rms_norm(Graph& g, const std::string& name, const Tensor& x);
// A norm over each head's head_dim features of q or k {S, heads * head_dim} (Qwen3's q_norm, Phi's and
// StableLM's qk_layernorm): RMSNorm or LayerNorm, holding `params` weights.
Tensor head_norm(Graph& g, const std::string& name, const Tensor& x, std::int64_t head_dim, std::int64_t params,
                 bool layer_norm);

// A table lookup producing {seq, dim}. per_sample_indices: the index tensor is per sample (token ids,
// token type ids) rather than one broadcast row (position ids).
Tensor embedding(Graph& g, const std::string& name, std::int64_t seq, std::int64_t rows, std::int64_t dim,
                 bool per_sample_indices);
// A learned tensor added to (or concatenated with) the activations, e.g. ViT's class token and
// position embedding: params only, saves nothing.
Tensor add_parameter(Graph& g, const std::string& name, const Tensor& x, std::vector<std::int64_t> out_shape,
                     std::int64_t params);

// Rotary position embedding applied to q and k (HF apply_rotary_pos_emb): one output holding the
// rotated q and k side by side, {S, (heads + kv_heads) * head_dim}.
Tensor rotary(Graph& g, const std::string& name, const Tensor& q, const Tensor& k);

struct AttentionSpec {
  std::int64_t seq = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool causal = false;
  double dropout = 0;
  std::int64_t sliding_window = 0;  // 0: none
  bool flash = true;
  // Unfused kernels add a mask to the scores in their own pass: an attention mask (BERT's padding mask,
  // added whatever the batch) or the causal mask.
  bool additive_mask = false;
};
// softmax(QK^T / sqrt(d)) V over q {S, heads*d}, k and v {S, kv_heads*d}. qkv: the tensors that hold
// them, however the model splits them: one fused projection (GPT-2, ViT), rotated q+k and v (Llama),
// or q, k and v (BERT).
Tensor attention(Graph& g, const std::string& name, const std::vector<Tensor>& qkv, const AttentionSpec& a);
// Key positions one query attends to, summed over queries, in the kernel that runs.
double attention_pairs(const AttentionSpec& a);

// ---- Mixture of experts (HF's eager MoE blocks: Mixtral, Qwen2-MoE, Qwen3-MoE) ----
// Each token's hidden state copied once per expert it is routed to ({active * S, h}, grouped by expert):
// index_select, which keeps only the int64 indices for backward.
Tensor expert_dispatch(Graph& g, const std::string& name, const Tensor& x, std::int64_t active);
// The routed outputs scaled by their routing weights and summed back per token ({S, h}): the multiply
// keeps both factors, index_add_ nothing.
Tensor expert_combine(Graph& g, const std::string& name, const Tensor& y, const Tensor& weights, std::int64_t tokens);

// Softmax cross-entropy over the last dimension of logits ({classes} or {S, vocab}).
void cross_entropy(Graph& g, const std::string& name, const Tensor& logits);

}  // namespace gpusage::workload::detail
