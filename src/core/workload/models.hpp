// Internal to the workload module: the model builders behind build() and from_hf_config().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/workload/layers.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::workload::detail {

// ---- Vision (vision.cpp), following torchvision's model code ----
struct VisionShape {
  int resolution = 224;
  int num_classes = 1000;
  bool flash_attention = true;
};
// torchvision's ResNet(block, layers, groups, width_per_group): the bottleneck's 3x3 conv has
// int(planes * width_per_group / 64) * groups channels. resnet50: {3,4,6,3}, groups 1, width 64;
// wide_resnet50_2: width 128; resnext50_32x4d: groups 32, width 4.
struct ResNetSpec {
  bool bottleneck = true;
  std::array<int, 4> blocks{3, 4, 6, 3};
  std::int64_t groups = 1;
  std::int64_t width_per_group = 64;
};
std::vector<Layer> resnet(const ResNetSpec& spec, const VisionShape& shape);

// torchvision's VGG cfgs "A" (vgg11), "B" (vgg13), "D" (vgg16), "E" (vgg19): convs per stage.
struct VggSpec {
  std::array<int, 5> convs{2, 2, 3, 3, 3};
  bool batch_norm = false;
};
std::vector<Layer> vgg(const VggSpec& spec, const VisionShape& shape);
std::vector<Layer> mobilenet_v2(const VisionShape& shape);
std::vector<Layer> efficientnet_b0(const VisionShape& shape);

struct VitSpec {
  int patch = 16;
  std::int64_t hidden = 768;
  std::int64_t mlp = 3072;
  int layers = 12;
  std::int64_t heads = 12;
};
std::vector<Layer> vit(const VitSpec& spec, const VisionShape& shape);

// ---- Language (transformer.cpp), following Hugging Face's modeling code ----
enum class Family {
  llama,
  mistral,
  qwen2,
  qwen3,
  gemma,
  gemma2,
  gemma3,
  phi3,
  phi,
  stablelm,
  falcon,
  mixtral,  // mixture of experts
  qwen2_moe,
  qwen3_moe,
  gpt2,
  bert
};
const char* to_string(Family f);
const char* hf_class(Family f);  // "LlamaForCausalLM", ...

// Norms over each head's features of q and k, by how many weights they hold: one RMSNorm weight of
// head_dim shared by the heads (Qwen3, Gemma 3 q_norm/k_norm), one LayerNorm of head_dim shared
// (Phi's qk_layernorm), or a LayerNorm without bias per head (StableLM's qk_layernorm).
enum class QkNorm { none, rms_shared, layer_shared, layer_per_head };

// Everything the builders need from a config.json, with HF's defaults filled in by hf_config.cpp.
struct TransformerConfig {
  Family family = Family::llama;
  std::string name;  // display name, e.g. "meta-llama/Llama-2-7b-hf"
  std::int64_t hidden = 0;
  std::int64_t intermediate = 0;
  int layers = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;
  std::int64_t type_vocab = 0;  // bert token types
  bool tie_embeddings = false;
  bool qkv_bias = false;  // qwen2: true; llama attention_bias
  bool o_bias = false;
  bool mlp_bias = false;
  std::int64_t sliding_window = 0;  // mistral v0.1: 4096; 0 = full attention
  double hidden_dropout = 0;        // gpt2 resid_pdrop / bert hidden_dropout_prob
  double attention_dropout = 0;     // gpt2 attn_pdrop / bert attention_probs_dropout_prob
  double embedding_dropout = 0;     // gpt2 embd_pdrop / bert hidden_dropout_prob
  bool learned_positions = false;   // gpt2 and bert: seq_len is capped by max_positions
  int default_seq_len = 0;
  // Decoder variants (decoder.cpp); the defaults are Llama's.
  bool layer_norm = false;           // LayerNorm with bias (phi, stablelm, falcon), not RMSNorm
  bool gelu_mlp = false;             // GELU (gemma's GeGLU, phi, falcon), not SiLU
  bool gated_mlp = true;             // down(act(gate(x)) * up(x)); false: fc2(act(fc1(x))) (phi, falcon)
  bool fused_qkv = false;            // one q/k/v projection (phi3 qkv_proj, falcon query_key_value)
  bool fused_gate_up = false;        // one gate/up projection (phi3 gate_up_proj)
  QkNorm qk_norm = QkNorm::none;     // a norm over each head of q and k
  bool sandwich_norms = false;       // gemma2/3: a norm after attention and around the MLP too
  bool parallel_block = false;       // x + attn(ln(x)) + mlp(ln(x)) (phi, falcon, stablelm parallel)
  bool parallel_two_norms = false;   // falcon's new decoder: ln_attn and ln_mlp
  bool rotary = true;                // false: ALiBi (falcon alibi), a bias on the scores
  bool lm_head_bias = false;         // phi
  std::vector<bool> sliding_layers;  // per layer, whether sliding_window applies; empty: every layer
  // Mixture of experts (mixtral, qwen2_moe, qwen3_moe); experts == 0 is a dense MLP everywhere.
  std::int64_t experts = 0;                     // routed experts in an MoE layer
  std::int64_t experts_per_token = 0;           // top-k
  std::int64_t expert_intermediate = 0;         // each routed expert's MLP width
  std::int64_t shared_expert_intermediate = 0;  // qwen2_moe: an always-on expert behind a sigmoid gate
  std::vector<bool> moe_layers;                 // per layer, whether it is MoE; empty: every layer
};

// The attention core's shape for a language model (sliding_window from the config).
AttentionSpec attention_spec(const TransformerConfig& c, int seq_len, bool causal, bool flash);

// The decoder-only families (decoder.cpp): every Family but gpt2 and bert.
void decoder(Graph& g, const TransformerConfig& config, int seq_len, bool flash_attention);

// head: BERT only (pre-training heads or the question-answering span head).
std::vector<Layer> transformer(const TransformerConfig& config, int seq_len, bool flash_attention,
                               Head head = Head::pretraining);

// Parses a config.json (hf_config.cpp). Throws InputError naming the bad field.
TransformerConfig parse_hf_config(const std::string& json_text);

// The zoo's language models as config.json texts (zoo_configs.cpp), built through parse_hf_config so
// that importer and zoo share one code path.
const std::string& zoo_hf_config(const std::string& id);

}  // namespace gpusage::workload::detail
