// FLOPs: forward against torchvision's published figures and Kaplan et al.'s transformer count;
// backward rules per layer.
#include <gtest/gtest.h>

#include <cmath>

#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

// FLOPs of the layer classes a FLOP counter sees as multiply-accumulates (conv, matmul, attention).
double mac_counted_flops(const Workload& w) {
  double flops = 0;
  for (const Layer& l : w.layers) {
    if (l.op == OpClass::conv || l.op == OpClass::matmul || l.op == OpClass::attention)
      flops += l.forward_flops;
  }
  return flops;
}

// Convention: forward_flops counts a multiply-add as 2 FLOPs. torchvision's "GFLOPS" (model metadata
// "_ops", pytorch/vision PR #6936) are counted with a torch-dispatch counter that sees only
// convolution, mm/addmm and bmm and counts each multiply-accumulate once: they are GMACs of those
// ops. So forward_flops / 2 of the conv, matmul and attention layers must agree within 2% (the
// published figures have 2 decimals: MobileNetV2's 0.30 alone spans +-1.7%).
TEST(Flops, ForwardFlopsOverTwoMatchTorchvisionGflopsWithin2Percent) {
  for (const ZooEntry& e : zoo()) {
    if (!e.reference_gflops) continue;
    const Workload w = build(e.id);
    const double gmacs = mac_counted_flops(w) / 2 / 1e9;
    EXPECT_NEAR(gmacs / *e.reference_gflops, 1.0, 0.02)
        << e.id << ": " << gmacs << " vs " << *e.reference_gflops;
  }
}

// The memory-bound layers (BN, activations, pools, adds) add FLOPs torchvision leaves out; they stay a
// small share even for the depthwise networks, where the convolutions are cheapest.
TEST(Flops, MemoryBoundLayersAddOnlyAFewPercent) {
  for (const ZooEntry& e : zoo()) {
    const Workload w = build(e.id);
    const double share = w.forward_flops() / mac_counted_flops(w) - 1;
    EXPECT_GT(share, 0) << e.id;
    EXPECT_LT(share, e.id == "efficientnet_b0" || e.id == "mobilenet_v2" ? 0.06 : 0.01) << e.id;
  }
}

// torchvision ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1 at 384 px: _ops 55.484 GMACs.
TEST(Flops, VitAt384PixelsMatchesTorchvisionSwagWeights) {
  const Workload w = build("vit_b_16", testing::at_resolution(384));
  EXPECT_NEAR(mac_counted_flops(w) / 2 / 1e9 / 55.484, 1.0, 0.02);
}

TEST(Flops, CnnFlopsScaleWithThePixelCount) {
  const double base = build("resnet50").forward_flops();
  const double big = build("resnet50", testing::at_resolution(448)).forward_flops();
  EXPECT_NEAR(big / base, 4.0, 0.01);
}

// Kaplan et al. 2020 ("Scaling Laws for Neural Language Models", Table 1): forward FLOPs per token
// C = 2N + 2 n_layer n_ctx d_attn with N the non-embedding parameters, plus 2 d_model n_vocab for the
// de-embedding (lm_head). Their attention term is the causal half of QK^T and AV, which a causal FlashAttention
// kernel computes, plus the masked half of the 128-query blocks the diagonal cuts (63.5 keys a query, 4 FLOPs a key
// and hidden unit).
TEST(Flops, TransformerForwardMatchesKaplanPerTokenCount) {
  const Workload w = build("gpt2");
  const double h = 768, layers = 12, s = 1024, vocab = 50257;
  const double n_non_embedding = 12 * layers * h * h;
  const double kaplan = 2 * n_non_embedding + 2 * layers * s * h + 2 * h * vocab + layers * 4 * 63.5 * h;
  EXPECT_NEAR(w.forward_flops() / s / kaplan, 1.0, 0.01);

  // Llama 2 7B: every parameter outside the token embedding sits in a matmul (norms aside).
  const Workload l = build("llama2-7b");
  const double lh = 4096, ll = 32, ls = 4096, lv = 32000;
  const double matmul_params = static_cast<double>(l.params()) - lv * lh;
  EXPECT_NEAR(l.forward_flops() / ls / (2 * matmul_params + 2 * ll * ls * lh), 1.0, 0.01);
}

// The attention s^2 terms: QK^T and AV, 2 x s x s x head_dim each per head. An unfused kernel computes
// every score; causal FlashAttention skips the masked half.
TEST(Flops, AttentionCountsTheSquareTerms) {
  WorkloadOptions unfused;
  unfused.flash_attention = false;
  const Layer& core = testing::layer(build("gpt2", unfused), "transformer.h.0.attn.core");
  EXPECT_DOUBLE_EQ(core.forward_flops, 4.0 * 1024 * 1024 * 768);
  const Layer& flash = testing::layer(build("gpt2"), "transformer.h.0.attn.core");
  // Causal: the pairs below the diagonal, and the masked half of the 128-query blocks the diagonal cuts, which the
  // kernel computes whole (63.5 keys a query).
  EXPECT_DOUBLE_EQ(flash.forward_flops, 4.0 * (1024.0 * 1025 / 2 + 1024 * 63.5) * 768);
  // BERT's bidirectional attention has no mask to skip.
  EXPECT_DOUBLE_EQ(
      testing::layer(build("bert-base"), "bert.encoder.layer.0.attention.self.core").forward_flops,
      4.0 * 512 * 512 * 768);
}

// Mistral 7B v0.1 attends to the last 4096 positions only (sliding_window in its config.json).
TEST(Flops, MistralSlidingWindowLimitsTheKeysPerQuery) {
  const Layer& core = testing::layer(build("mistral-7b"), "model.layers.0.self_attn.core");
  const double s = 8192, w = 4096;
  // ... plus the masked halves of the 128-query blocks cut by the window's two edges (the far one only past w).
  const double pairs = w * (w + 1) / 2 + (s - w) * w + s * 63.5 + (s - w) * 63.5;
  EXPECT_DOUBLE_EQ(core.forward_flops, 4.0 * pairs * 4096);
}

TEST(Flops, BackwardIsTwiceForwardForConvAndMatmulExceptTheFirstConv) {
  for (const std::string id : {"resnet50", "vgg16", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "gpt2",
                               "bert-base", "llama3-8b"}) {
    const Workload w = build(id);
    bool first_conv = true;
    for (const Layer& l : w.layers) {
      if (l.op != OpClass::conv && l.op != OpClass::matmul) continue;
      const double expected = (l.op == OpClass::conv && first_conv) ? 1.0 : 2.0;
      EXPECT_DOUBLE_EQ(l.backward_flops, expected * l.forward_flops) << id << " " << l.name;
      if (l.op == OpClass::conv) first_conv = false;
    }
  }
  EXPECT_DOUBLE_EQ(testing::layer(build("vit_b_16"), "conv_proj").backward_flops,
                   testing::layer(build("vit_b_16"), "conv_proj").forward_flops);
}

// FlashAttention's backward recomputes QK^T: 5 matmuls against the forward's 2. Unfused: 4.
TEST(Flops, AttentionBackwardDependsOnTheKernel) {
  const Layer& flash = testing::layer(build("gpt2"), "transformer.h.3.attn.core");
  EXPECT_DOUBLE_EQ(flash.backward_flops, 2.5 * flash.forward_flops);
  WorkloadOptions unfused;
  unfused.flash_attention = false;
  const Layer& eager = testing::layer(build("gpt2", unfused), "transformer.h.3.attn.core");
  EXPECT_DOUBLE_EQ(eager.backward_flops, 2.0 * eager.forward_flops);
}

TEST(Flops, MemoryBoundLayersCostAboutTheirForwardInBackward) {
  const Workload w = build("resnet50");
  for (const Layer& l : w.layers) {
    if (l.op == OpClass::normalization || l.op == OpClass::elementwise) {
      EXPECT_DOUBLE_EQ(l.backward_flops, l.forward_flops) << l.name;
    }
  }
  const double ratio = w.backward_flops() / w.forward_flops();
  EXPECT_GT(ratio, 1.9);
  EXPECT_LT(ratio, 2.0);
}

}  // namespace
}  // namespace gpusage::workload
