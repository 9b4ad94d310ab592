// Transformers: torchvision 0.14's vision_transformer.py (vit_b_16) and Hugging Face's GPT-2
// (modeling_gpt2.py, tied input/output embeddings), plus make_model, the zoo's dispatcher.
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <limits>

#include "bench/model_catalog.hpp"
#include "bench/torch_models.hpp"
#include "core/common/error.hpp"

namespace gpusage::bench {
namespace {

namespace nn = torch::nn;

// [B, S, H] -> [B, heads, S, H/heads]
torch::Tensor split_heads(const torch::Tensor& x, std::int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}
torch::Tensor merge_heads(const torch::Tensor& x) {
  return x.transpose(1, 2).contiguous().view({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

// ---- ViT (Dosovitskiy et al. 2020; torchvision VisionTransformer) ----

// torch.nn.MultiheadAttention's parameters: in_proj_weight [3H, H], in_proj_bias [3H], out_proj.
struct SelfAttentionImpl : nn::Module {
  torch::Tensor in_proj_weight, in_proj_bias;
  nn::Linear out_proj{nullptr};
  std::int64_t heads;
  double dropout;
  SelfAttentionImpl(std::int64_t hidden, std::int64_t num_heads, double attention_dropout)
      : heads(num_heads), dropout(attention_dropout) {
    in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * hidden, hidden}));
    in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * hidden}));
    out_proj = register_module("out_proj", nn::Linear(hidden, hidden));
    nn::init::xavier_uniform_(in_proj_weight);
    nn::init::zeros_(out_proj->bias);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto qkv = torch::nn::functional::linear(x, in_proj_weight, in_proj_bias).chunk(3, -1);
    auto y = attention(split_heads(qkv[0], heads), split_heads(qkv[1], heads), split_heads(qkv[2], heads),
                       /*causal=*/false, dropout, is_training());
    return out_proj(merge_heads(y));
  }
};
TORCH_MODULE(SelfAttention);

struct EncoderBlockImpl : nn::Module {
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  SelfAttention self_attention{nullptr};
  nn::Dropout dropout{nullptr};
  nn::Sequential mlp{nullptr};
  EncoderBlockImpl(const VitConfig& c) {
    ln_1 = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({c.hidden_dim}).eps(1e-6)));
    self_attention = register_module("self_attention", SelfAttention(c.hidden_dim, c.num_heads, 0.0));
    dropout = register_module("dropout", nn::Dropout(c.dropout));
    ln_2 = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({c.hidden_dim}).eps(1e-6)));
    mlp = register_module("mlp", nn::Sequential(nn::Linear(c.hidden_dim, c.mlp_dim), nn::GELU(), nn::Dropout(c.dropout),
                                                nn::Linear(c.mlp_dim, c.hidden_dim), nn::Dropout(c.dropout)));
    for (auto& m : mlp->modules(false)) {
      if (auto* l = m->as<nn::Linear>()) {
        nn::init::xavier_uniform_(l->weight);
        nn::init::normal_(l->bias, 0.0, 1e-6);
      }
    }
  }
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor x = input + dropout(self_attention(ln_1(input)));
    return x + mlp->forward(ln_2(x));
  }
};
TORCH_MODULE(EncoderBlock);

struct EncoderImpl : nn::Module {
  torch::Tensor pos_embedding;
  nn::Dropout dropout{nullptr};
  nn::Sequential layers{nullptr};
  nn::LayerNorm ln{nullptr};
  EncoderImpl(const VitConfig& c, std::int64_t seq_length) {
    pos_embedding = register_parameter("pos_embedding", torch::empty({1, seq_length, c.hidden_dim}).normal_(0, 0.02));
    dropout = register_module("dropout", nn::Dropout(c.dropout));
    layers = register_module("layers", nn::Sequential());
    for (std::int64_t i = 0; i < c.num_layers; ++i)
      layers->push_back("encoder_layer_" + std::to_string(i), EncoderBlock(c));
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({c.hidden_dim}).eps(1e-6)));
  }
  torch::Tensor forward(const torch::Tensor& x) { return ln(layers->forward(dropout(x + pos_embedding))); }
};
TORCH_MODULE(Encoder);

class VitImpl : public BenchModelImpl {
 public:
  explicit VitImpl(const VitConfig& c) : patch_(c.patch_size), hidden_(c.hidden_dim) {
    const std::int64_t patches_per_side = c.image_size / c.patch_size;
    conv_proj_ =
        register_module("conv_proj", nn::Conv2d(nn::Conv2dOptions(3, c.hidden_dim, c.patch_size).stride(c.patch_size)));
    const double fan_in = 3.0 * static_cast<double>(c.patch_size * c.patch_size);
    // torchvision: trunc_normal_(std=sqrt(1/fan_in)), truncated at ±2 std (LibTorch 1.13 has no trunc_normal_).
    const double std_dev = std::sqrt(1.0 / fan_in);
    {
      torch::NoGradGuard no_grad;
      conv_proj_->weight.normal_(0.0, std_dev).clamp_(-2 * std_dev, 2 * std_dev);
    }
    nn::init::zeros_(conv_proj_->bias);
    class_token_ = register_parameter("class_token", torch::zeros({1, 1, c.hidden_dim}));
    encoder_ = register_module("encoder", Encoder(c, patches_per_side * patches_per_side + 1));
    heads_ = register_module("heads", nn::Sequential());
    auto head = nn::Linear(c.hidden_dim, c.num_classes);
    nn::init::zeros_(head->weight);
    nn::init::zeros_(head->bias);
    heads_->push_back("head", head);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    const auto n = input.size(0);
    torch::Tensor x = conv_proj_(input).reshape({n, hidden_, -1}).permute({0, 2, 1});
    x = torch::cat({class_token_.expand({n, -1, -1}), x}, 1);
    x = encoder_(x);
    return heads_->forward(x.select(1, 0));
  }

 private:
  std::int64_t patch_, hidden_;
  nn::Conv2d conv_proj_{nullptr};
  torch::Tensor class_token_;
  Encoder encoder_{nullptr};
  nn::Sequential heads_{nullptr};
};

// ---- GPT-2 (Radford et al. 2019; Hugging Face GPT2LMHeadModel, pre-LayerNorm decoder) ----

struct Gpt2AttentionImpl : nn::Module {
  nn::Linear c_attn{nullptr}, c_proj{nullptr};
  nn::Dropout resid_dropout{nullptr};
  std::int64_t heads;
  double dropout;
  explicit Gpt2AttentionImpl(const Gpt2Config& c) : heads(c.n_head), dropout(c.dropout) {
    c_attn = register_module("c_attn", nn::Linear(c.n_embd, 3 * c.n_embd));
    c_proj = register_module("c_proj", nn::Linear(c.n_embd, c.n_embd));
    resid_dropout = register_module("resid_dropout", nn::Dropout(c.dropout));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto qkv = c_attn(x).chunk(3, -1);
    auto y = attention(split_heads(qkv[0], heads), split_heads(qkv[1], heads), split_heads(qkv[2], heads),
                       /*causal=*/true, dropout, is_training());
    return resid_dropout(c_proj(merge_heads(y)));
  }
};
TORCH_MODULE(Gpt2Attention);

struct Gpt2MlpImpl : nn::Module {
  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::Dropout dropout{nullptr};
  explicit Gpt2MlpImpl(const Gpt2Config& c) {
    c_fc = register_module("c_fc", nn::Linear(c.n_embd, 4 * c.n_embd));
    c_proj = register_module("c_proj", nn::Linear(4 * c.n_embd, c.n_embd));
    dropout = register_module("dropout", nn::Dropout(c.dropout));
  }
  // "gelu_new": the tanh approximation of GELU.
  torch::Tensor forward(const torch::Tensor& x) { return dropout(c_proj(torch::gelu(c_fc(x), "tanh"))); }
};
TORCH_MODULE(Gpt2Mlp);

struct Gpt2BlockImpl : nn::Module {
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  Gpt2Attention attn{nullptr};
  Gpt2Mlp mlp{nullptr};
  explicit Gpt2BlockImpl(const Gpt2Config& c) {
    ln_1 = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({c.n_embd}).eps(1e-5)));
    attn = register_module("attn", Gpt2Attention(c));
    ln_2 = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({c.n_embd}).eps(1e-5)));
    mlp = register_module("mlp", Gpt2Mlp(c));
  }
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor x = input + attn(ln_1(input));
    return x + mlp(ln_2(x));
  }
};
TORCH_MODULE(Gpt2Block);

class Gpt2Impl : public BenchModelImpl {
 public:
  explicit Gpt2Impl(const Gpt2Config& c) {
    wte_ = register_module("wte", nn::Embedding(c.vocab_size, c.n_embd));
    wpe_ = register_module("wpe", nn::Embedding(c.n_positions, c.n_embd));
    drop_ = register_module("drop", nn::Dropout(c.dropout));
    h_ = register_module("h", nn::ModuleList());
    for (std::int64_t i = 0; i < c.n_layer; ++i) h_->push_back(Gpt2Block(c));
    ln_f_ = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({c.n_embd}).eps(1e-5)));
    // GPT2PreTrainedModel._init_weights: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer).
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      if (name.ends_with(".bias") && name.find("ln_") == std::string::npos)
        item.value().zero_();
      else if (name.ends_with("c_proj.weight"))
        item.value().normal_(0, 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer)));
      else if (name.find("ln_") == std::string::npos)
        item.value().normal_(0, 0.02);
    }
  }

  torch::Tensor forward(const torch::Tensor& tokens) override {
    auto positions = torch::arange(tokens.size(1), tokens.options().dtype(torch::kLong));
    torch::Tensor x = drop_(wte_(tokens) + wpe_(positions));
    for (const auto& block : *h_) x = block->as<Gpt2Block>()->forward(x);
    x = ln_f_(x);
    return torch::matmul(x, wte_->weight.t());  // lm_head tied to wte
  }

 private:
  nn::Embedding wte_{nullptr}, wpe_{nullptr};
  nn::Dropout drop_{nullptr};
  nn::ModuleList h_{nullptr};
  nn::LayerNorm ln_f_{nullptr};
};

}  // namespace

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                        double dropout, bool training) {
  const double p = training ? dropout : 0.0;
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, p, causal);
#else
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) {
    const auto s = q.size(-2);
    auto mask = torch::ones({s, s}, q.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
  }
  torch::Tensor probs = torch::softmax(scores, -1);
  if (p > 0) probs = torch::dropout(probs, p, training);
  return torch::matmul(probs, v);
#endif
}

std::shared_ptr<BenchModelImpl> make_gpt2(const Gpt2Config& config) { return std::make_shared<Gpt2Impl>(config); }
std::shared_ptr<BenchModelImpl> make_vit(const VitConfig& config) { return std::make_shared<VitImpl>(config); }

std::shared_ptr<BenchModelImpl> make_model(const std::string& id, const ModelShape& shape) {
  const ModelInfo& info = model_info(id);  // throws InputError for unknown ids
  if (info.family == ModelFamily::resnet) return make_resnet(info.depth, shape.num_classes);
  if (info.family == ModelFamily::mobilenet) return make_mobilenet_v2(shape.num_classes);
  if (info.family == ModelFamily::vit) {
    VitConfig c;
    if (shape.resolution % c.patch_size != 0)
      throw InputError("--resolution " + std::to_string(shape.resolution) + ": " + id +
                       " needs a multiple of its patch size 16");
    c.image_size = shape.resolution;
    c.num_classes = shape.num_classes;
    return make_vit(c);
  }
  Gpt2Config c;
  c.n_layer = info.depth;
  c.n_embd = info.width;
  c.n_head = info.heads;
  c.n_positions = std::max<std::int64_t>(1024, shape.seq_len);
  return make_gpt2(c);
}

}  // namespace gpusage::bench
