// The benchmark's models, built in LibTorch with the exact architecture of their reference
// implementations: torchvision 0.14 (resnet*, mobilenet_v2, vit_b_16) and Hugging Face GPT-2.
// Module and parameter names follow the references, so a state_dict maps one to one.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

namespace gpusage::bench {

// One interface for every model: vision models take images [B, 3, R, R] and return logits [B, classes];
// language models take token ids [B, S] and return next-token logits [B, S, vocab].
class BenchModelImpl : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
};

struct ModelShape {
  int resolution = 224;  // vision input side in pixels
  int seq_len = 1024;    // language: tokens per sample
  int num_classes = 1000;
};

// Builds a model of the zoo (ids in model_catalog.hpp). Throws InputError for an unknown id.
std::shared_ptr<BenchModelImpl> make_model(const std::string& id, const ModelShape& shape);

// GPT-2 hyper-parameters (Hugging Face GPT2Config names), exposed so tests can build tiny decoders.
struct Gpt2Config {
  std::int64_t vocab_size = 50257;
  std::int64_t n_positions = 1024;
  std::int64_t n_embd = 768;
  std::int64_t n_layer = 12;
  std::int64_t n_head = 12;
  double dropout = 0.1;  // embd_pdrop = attn_pdrop = resid_pdrop
};
std::shared_ptr<BenchModelImpl> make_gpt2(const Gpt2Config& config);

// ViT hyper-parameters (torchvision VisionTransformer names), for tiny test models.
struct VitConfig {
  std::int64_t image_size = 224;
  std::int64_t patch_size = 16;
  std::int64_t num_layers = 12;
  std::int64_t num_heads = 12;
  std::int64_t hidden_dim = 768;
  std::int64_t mlp_dim = 3072;
  std::int64_t num_classes = 1000;
  double dropout = 0.0;
};
std::shared_ptr<BenchModelImpl> make_vit(const VitConfig& config);

std::shared_ptr<BenchModelImpl> make_resnet(int depth, std::int64_t num_classes);  // 18, 34, 50, 101, 152
std::shared_ptr<BenchModelImpl> make_mobilenet_v2(std::int64_t num_classes);

std::int64_t count_parameters(torch::nn::Module& module);

// Attention core shared by ViT and GPT-2: q, k, v are [B, heads, S, head_dim]. Uses the fused
// scaled_dot_product_attention of LibTorch 2.x (FlashAttention / memory-efficient kernels on CUDA, as
// PyTorch's own modules do) and the explicit softmax(QK^T/sqrt(d))V on 1.13.
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                        double dropout, bool training);

}  // namespace gpusage::bench
