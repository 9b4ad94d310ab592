// What each layer keeps for backward (saved tensors counted once, on their producer), segments,
// shapes, I/O and LoRA targets.
#include <gtest/gtest.h>

#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

using testing::layer;
using testing::segment_saved_bytes;

constexpr double kHalf = 2;  // bytes per element in 16-bit training

WorkloadOptions unfused() {
  WorkloadOptions o;
  o.flash_attention = false;
  return o;
}

// ResNet-50 stem at 224 px: conv1 keeps the image (it is the weight gradient's input) and its own
// output (bn1's saved input); bn1's output is overwritten by the in-place ReLU, whose output is saved
// once although both the ReLU and the max pool keep it.
TEST(SavedTensors, ResNetStemFollowsAutogradAndCountsEachTensorOnce) {
  const Workload w = build("resnet50");
  EXPECT_DOUBLE_EQ(layer(w, "conv1").saved_elements, 3.0 * 224 * 224 + 64.0 * 112 * 112);
  EXPECT_DOUBLE_EQ(layer(w, "bn1").saved_elements, 0);
  EXPECT_DOUBLE_EQ(layer(w, "relu").saved_elements, 64.0 * 112 * 112);
  // The pool's output is kept by layer1.0.conv1 and layer1.0.downsample.0: once. Its int64 indices
  // are 8 bytes per output element.
  EXPECT_DOUBLE_EQ(layer(w, "maxpool").saved_elements, 64.0 * 56 * 56);
  EXPECT_DOUBLE_EQ(layer(w, "maxpool").saved_fixed_bytes, 8.0 * 64 * 56 * 56);
  EXPECT_DOUBLE_EQ(layer(w, "layer1.0.add").saved_elements, 0);  // residual add keeps nothing
}

TEST(SavedTensors, ResNetHeadKeepsPooledFeaturesAndFp32LogProbabilities) {
  const Workload w = build("resnet50");
  EXPECT_DOUBLE_EQ(layer(w, "avgpool").saved_elements, 2048);  // fc's input; the mean itself keeps nothing
  EXPECT_DOUBLE_EQ(layer(w, "fc").saved_elements, 0);          // logits are not kept by log_softmax
  EXPECT_DOUBLE_EQ(layer(w, "loss").saved_fixed_bytes, 4.0 * 1000);
}

TEST(SavedTensors, VggDropoutKeepsAOneByteMask) {
  const Workload w = build("vgg16");
  EXPECT_DOUBLE_EQ(layer(w, "classifier.2").saved_fixed_bytes, 4096);
  EXPECT_DOUBLE_EQ(layer(w, "classifier.2").saved_elements, 4096);  // its output is classifier.3's input
}

// Squeeze-excitation: x * sigmoid(fc2(silu(fc1(mean(x))))) keeps both factors of the product, SiLU its
// input and Sigmoid its output.
TEST(SavedTensors, EfficientNetSqueezeExcitationKeepsBothFactors) {
  const Workload w = build("efficientnet_b0");
  const std::string se = "features.2.0.block.2";
  // fc1 output (4 channels = 16 / 4) is SiLU's saved input; fc2's output is not kept by Sigmoid.
  EXPECT_DOUBLE_EQ(layer(w, se + ".fc1").saved_elements, 4);
  EXPECT_DOUBLE_EQ(layer(w, se + ".fc2").saved_elements, 0);
  EXPECT_DOUBLE_EQ(layer(w, se + ".scale_activation").saved_elements, 96);
  // The depthwise activation output (96 x 56 x 56) is kept by the SE product, counted on the SiLU.
  EXPECT_DOUBLE_EQ(layer(w, "features.2.0.block.1.2").saved_elements, 96.0 * 56 * 56);
}

// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", sec. 4.1):
// one GPT block in 16-bit with dropout and unfused attention keeps 34*s*b*h + 5*a*s^2*b bytes. Here
// b = 1. The graph also keeps the LayerNorm statistics (2 LayerNorms x mean and rstd x 4 bytes x s),
// which the paper leaves out: +16*s bytes, 0.06% of GPT-2's block. (Both assume a 2-byte softmax
// output; HF's eager softmax under autocast is fp32, 2*a*s^2 bytes more, which elements cannot express.)
TEST(SavedTensors, Gpt2BlockWithoutFlashMatchesKorthikanti) {
  const Workload w = build("gpt2", unfused());
  const double s = 1024, h = 768, a = 12;
  const double paper = 34 * s * h + 5 * a * s * s;
  const double ours = segment_saved_bytes(w, 5, kHalf);
  EXPECT_NEAR(ours / paper, 1.0, 0.10);
  EXPECT_DOUBLE_EQ(ours - paper, 16 * s);
}

// FlashAttention drops the 5*a*s^2 term and keeps the fp32 logsumexp (4 bytes x heads x s) instead.
TEST(SavedTensors, Gpt2BlockWithFlashKeepsNoSquareTerm) {
  const Workload w = build("gpt2");
  const double s = 1024, h = 768, a = 12;
  EXPECT_DOUBLE_EQ(segment_saved_bytes(w, 5, kHalf), 34 * s * h + 4 * a * s + 16 * s);
}

// Unfused attention keeps the softmax output; with dropout also the mask and the dropped copy.
TEST(SavedTensors, UnfusedAttentionKeepsTheProbabilities) {
  const double s = 1024, a = 12;
  const Layer& flash = layer(build("gpt2"), "transformer.h.0.attn.core");
  const Layer& eager = layer(build("gpt2", unfused()), "transformer.h.0.attn.core");
  EXPECT_DOUBLE_EQ(eager.saved_elements - flash.saved_elements, 2 * a * s * s);
  EXPECT_DOUBLE_EQ(eager.saved_fixed_bytes, a * s * s);
  EXPECT_DOUBLE_EQ(flash.saved_fixed_bytes, 4 * a * s);
  // ViT has attention_dropout 0: the softmax output alone, shared by softmax and the PV matmul.
  const double vs = 197, va = 12;
  EXPECT_DOUBLE_EQ(
      layer(build("vit_b_16", unfused()), "encoder.layers.encoder_layer_0.self_attention.core")
              .saved_elements -
          layer(build("vit_b_16"), "encoder.layers.encoder_layer_0.self_attention.core").saved_elements,
      va * vs * vs);
}

// A Llama block keeps, per token: the two RMSNorm outputs, v, the rotated q and k, the attention
// output, the residual sum, and SwiGLU's gate, silu(gate), up and product (4 x intermediate), plus the
// block's output (kept by the next block).
TEST(SavedTensors, LlamaBlockKeepsSwiGluIntermediates) {
  const Workload w = build("llama2-7b");
  const double h = 4096, i = 11008, s = 4096;
  double elements = 0;
  for (const Layer& l : w.layers) {
    if (l.segment == 3) elements += l.saved_elements;
  }
  const double norms = 2 * h, v = h, rotated_qk = 2 * h, attention_out = h, residual = h, block_out = h;
  EXPECT_DOUBLE_EQ(elements / s, norms + v + rotated_qk + attention_out + residual + 4 * i + block_out);
  EXPECT_DOUBLE_EQ(elements / s, 76'800);
}

// Grouped-query attention: k and v are 8 heads of 128 in Llama 3 8B and Mistral 7B.
TEST(SavedTensors, GroupedQueryAttentionKeepsSmallKeysAndValues) {
  const Workload w = build("llama3-8b");
  EXPECT_EQ(layer(w, "model.layers.0.self_attn.k_proj").output_shape,
            (std::vector<std::int64_t>{8192, 1024}));
  EXPECT_DOUBLE_EQ(layer(w, "model.layers.0.self_attn.v_proj").saved_elements, 8192.0 * 1024);
  EXPECT_DOUBLE_EQ(layer(w, "model.layers.0.self_attn.rotary").saved_elements, 8192.0 * (4096 + 1024));
  EXPECT_DOUBLE_EQ(layer(w, "model.layers.0.self_attn.q_proj").saved_elements, 0);  // RoPE keeps only cos/sin
}

TEST(SavedTensors, LanguageModelFixedBytes) {
  const Workload w = build("gpt2");
  EXPECT_DOUBLE_EQ(layer(w, "transformer.wte").saved_fixed_bytes, 8.0 * 1024);  // int64 token ids
  EXPECT_DOUBLE_EQ(layer(w, "transformer.wpe").saved_fixed_bytes, 0);           // position ids are shared
  EXPECT_DOUBLE_EQ(layer(w, "transformer.drop").saved_fixed_bytes, 1024.0 * 768);
  EXPECT_DOUBLE_EQ(layer(w, "loss").saved_fixed_bytes, 4.0 * 50257 * 1024);  // fp32 log-probabilities
  const Workload b = build("bert-base");
  EXPECT_DOUBLE_EQ(layer(b, "mlm_loss").saved_fixed_bytes, 4.0 * 30522 * 512);
}

TEST(Segments, BlocksAreSegmentsAndStemAndHeadAreOutside) {
  EXPECT_EQ(build("resnet18").segment_count(), 8);
  EXPECT_EQ(build("resnet50").segment_count(), 16);
  EXPECT_EQ(build("resnet152").segment_count(), 50);
  EXPECT_EQ(build("vgg16").segment_count(), 5);
  EXPECT_EQ(build("mobilenet_v2").segment_count(), 17);
  EXPECT_EQ(build("efficientnet_b0").segment_count(), 16);
  EXPECT_EQ(build("vit_l_16").segment_count(), 24);
  EXPECT_EQ(build("bert-large").segment_count(), 24);
  EXPECT_EQ(build("gpt2-xl").segment_count(), 48);
  EXPECT_EQ(build("llama2-13b").segment_count(), 40);
  const Workload r = build("resnet50");
  EXPECT_EQ(layer(r, "conv1").segment, -1);
  EXPECT_EQ(layer(r, "maxpool").segment, -1);
  EXPECT_EQ(layer(r, "layer1.0.conv1").segment, 0);
  EXPECT_EQ(layer(r, "layer4.2.relu#3").segment, 15);
  EXPECT_EQ(layer(r, "fc").segment, -1);
  const Workload g = build("gpt2");
  EXPECT_EQ(layer(g, "transformer.wte").segment, -1);
  EXPECT_EQ(layer(g, "transformer.h.11.add#2").segment, 11);
  EXPECT_EQ(layer(g, "lm_head").segment, -1);
}

// What a checkpointed segment keeps: the input of its first layer.
TEST(Segments, FirstLayerInputIsTheSegmentInput) {
  const Workload g = build("gpt2");
  for (int block = 0; block < 12; ++block) {
    const Layer* first = nullptr;
    for (const Layer& l : g.layers) {
      if (l.segment == block) {
        first = &l;
        break;
      }
    }
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->name, "transformer.h." + std::to_string(block) + ".ln_1");
    EXPECT_DOUBLE_EQ(first->input_elements, 1024.0 * 768);
  }
  EXPECT_DOUBLE_EQ(layer(build("resnet50"), "layer2.0.conv1").input_elements, 256.0 * 56 * 56);
  EXPECT_DOUBLE_EQ(layer(g, "transformer.add").input_elements, 2 * 1024.0 * 768);
}

TEST(Shapes, OutputShapesArePerSample) {
  const Workload r = build("resnet50");
  EXPECT_EQ(layer(r, "conv1").output_shape, (std::vector<std::int64_t>{64, 112, 112}));
  EXPECT_EQ(layer(r, "layer2.0.conv2").output_shape,
            (std::vector<std::int64_t>{128, 28, 28}));  // v1.5 stride
  EXPECT_EQ(layer(r, "layer2.0.conv1").output_shape, (std::vector<std::int64_t>{128, 56, 56}));
  EXPECT_EQ(layer(r, "layer4.2.relu#3").output_shape, (std::vector<std::int64_t>{2048, 7, 7}));
  EXPECT_EQ(layer(r, "fc").output_shape, (std::vector<std::int64_t>{1000}));
  const Workload g = build("gpt2");
  EXPECT_EQ(layer(g, "transformer.h.0.attn.c_attn").output_shape, (std::vector<std::int64_t>{1024, 2304}));
  EXPECT_EQ(layer(g, "lm_head").output_shape, (std::vector<std::int64_t>{1024, 50257}));
  EXPECT_EQ(layer(build("vgg16"), "avgpool").output_shape, (std::vector<std::int64_t>{512, 7, 7}));
}

TEST(ForwardIo, ReadsPlusWritesOfTheKernel) {
  const Workload r = build("resnet50");
  EXPECT_DOUBLE_EQ(layer(r, "conv1").forward_io_elements, 3.0 * 224 * 224 + 64.0 * 112 * 112);
  EXPECT_DOUBLE_EQ(layer(r, "relu").forward_io_elements, 2 * 64.0 * 112 * 112);
  EXPECT_DOUBLE_EQ(layer(r, "bn1").forward_io_elements, 3 * 64.0 * 112 * 112);  // statistics pass + normalise
  const Workload g = build("gpt2");
  const double s = 1024, h = 768, a = 12;
  EXPECT_DOUBLE_EQ(layer(g, "transformer.h.0.attn.core").forward_io_elements, 3 * s * h + s * h);
  // Unfused: the matmuls write the scores and read the probabilities; scale, causal mask, softmax and
  // dropout are four serial kernels of their own, each reading and writing every score, plus the cast.
  const Layer& eager = layer(build("gpt2", unfused()), "transformer.h.0.attn.core");
  EXPECT_DOUBLE_EQ(eager.forward_io_elements, 4 * s * h + 2 * a * s * s);
  EXPECT_DOUBLE_EQ(eager.serial_io_elements, 8 * a * s * s);
  EXPECT_DOUBLE_EQ(eager.serial_kernels, 5);
}

// PEFT's print_trainable_parameters() for LoRA r = 8 (widely reproduced figures): Llama-2-7b on
// q_proj and v_proj 4,194,304; on all seven linear layers 19,988,480; GPT-2 on c_attn 294,912.
TEST(Lora, TargetsGiveThePeftTrainableCounts) {
  auto lora_params = [](const Workload& w, int rank, const std::vector<std::string>& suffixes) {
    std::int64_t total = 0;
    for (const Layer& l : w.layers) {
      bool wanted = suffixes.empty();
      for (const std::string& s : suffixes) {
        wanted = wanted ||
                 (l.name.size() >= s.size() && l.name.compare(l.name.size() - s.size(), s.size(), s) == 0);
      }
      if (!wanted) continue;
      for (const Matrix& m : l.lora_targets) total += rank * (m.in + m.out);
    }
    return total;
  };
  const Workload llama = build("llama2-7b");
  EXPECT_EQ(lora_params(llama, 8, {"q_proj", "v_proj"}), 4'194'304);
  EXPECT_EQ(lora_params(llama, 8, {}), 19'988'480);
  EXPECT_EQ(lora_params(build("gpt2"), 8, {"c_attn"}), 294'912);
  std::size_t targets = 0;
  for (const Layer& l : llama.layers) targets += l.lora_targets.size();
  EXPECT_EQ(targets, 7u * 32);
  EXPECT_EQ(layer(llama, "lm_head").lora_targets.size(), 0u);
  for (const Layer& l : build("resnet50").layers) EXPECT_TRUE(l.lora_targets.empty()) << l.name;
  std::size_t vit_targets = 0;
  for (const Layer& l : build("vit_b_16").layers) vit_targets += l.lora_targets.size();
  EXPECT_EQ(vit_targets, 4u * 12);  // in_proj (fused qkv), out_proj, mlp.0, mlp.3
}

}  // namespace
}  // namespace gpusage::workload
