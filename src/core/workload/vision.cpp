// Vision models, layer by layer as torchvision builds them (torchvision/models/resnet.py, vgg.py,
// mobilenetv2.py, efficientnet.py, vision_transformer.py). Layer names are the torchvision module
// paths; a module called more than once in a block (ResNet's relu) gets "#2", "#3".
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/workload/layers.hpp"
#include "core/workload/models.hpp"

namespace gpusage::workload::detail {

namespace {

Tensor image_input(Graph& g, const VisionShape& shape) { return g.input({3, shape.resolution, shape.resolution}); }

// avgpool to 1x1 -> flatten -> [dropout] -> Linear -> cross-entropy, as every CNN here ends.
void classifier_head(Graph& g, const Tensor& features, const VisionShape& shape, const std::string& pool_name,
                     const std::string& dropout_name, double dropout_p, const std::string& fc_name) {
  g.set_segment(-1);
  Tensor x = adaptive_avg_pool2d(g, pool_name, features, 1);
  x = view(x, {x.shape.at(0)});
  x = dropout(g, dropout_name, x, dropout_p);
  x = linear(g, fc_name, x, LinearSpec{shape.num_classes, true});
  cross_entropy(g, "loss", x);
}

// ---- ResNet (v1.5: the bottleneck's stride sits on the 3x3 conv) ----
Tensor resnet_block(Graph& g, const std::string& p, const Tensor& x, std::int64_t planes, int stride,
                    const ResNetSpec& spec) {
  const std::int64_t expansion = spec.bottleneck ? 4 : 1;
  const std::int64_t out_ch = planes * expansion;
  Tensor y;
  if (spec.bottleneck) {
    // torchvision Bottleneck: width = int(planes * (base_width / 64.)) * groups.
    const std::int64_t width = planes * spec.width_per_group / 64 * spec.groups;
    y = conv2d(g, p + ".conv1", x, ConvSpec{width, 1});
    y = batch_norm(g, p + ".bn1", y);
    y = activation(g, p + ".relu", y, Activation::relu);
    y = conv2d(g, p + ".conv2", y, ConvSpec{width, 3, stride, 1, spec.groups});
    y = batch_norm(g, p + ".bn2", y);
    y = activation(g, p + ".relu#2", y, Activation::relu);
    y = conv2d(g, p + ".conv3", y, ConvSpec{out_ch, 1});
    y = batch_norm(g, p + ".bn3", y);
  } else {
    y = conv2d(g, p + ".conv1", x, ConvSpec{planes, 3, stride, 1});
    y = batch_norm(g, p + ".bn1", y);
    y = activation(g, p + ".relu", y, Activation::relu);
    y = conv2d(g, p + ".conv2", y, ConvSpec{planes, 3, 1, 1});
    y = batch_norm(g, p + ".bn2", y);
  }
  Tensor identity = x;
  if (stride != 1 || x.shape.at(0) != out_ch) {
    identity = conv2d(g, p + ".downsample.0", x, ConvSpec{out_ch, 1, stride});
    identity = batch_norm(g, p + ".downsample.1", identity);
  }
  y = add(g, p + ".add", y, identity);  // out += identity
  return activation(g, p + (spec.bottleneck ? ".relu#3" : ".relu#2"), y, Activation::relu);
}

// ---- MobileNetV2: inverted residual settings t (expansion), c, n, s from torchvision ----
struct InvertedResidualStage {
  int expand;
  std::int64_t channels;
  int repeats;
  int stride;
};
constexpr std::array<InvertedResidualStage, 7> kMobileNetV2Stages{{
    {1, 16, 1, 1},
    {6, 24, 2, 2},
    {6, 32, 3, 2},
    {6, 64, 4, 2},
    {6, 96, 3, 1},
    {6, 160, 3, 2},
    {6, 320, 1, 1},
}};

// ---- EfficientNet-B0: MBConvConfig(expand_ratio, kernel, stride, in, out, layers) from torchvision's
// _efficientnet_conf("efficientnet_b0", width_mult=1.0, depth_mult=1.0); stochastic_depth_prob 0.2.
struct MBConvStage {
  int expand;
  int kernel;
  int stride;
  std::int64_t in_channels;
  std::int64_t out_channels;
  int layers;
};
constexpr std::array<MBConvStage, 7> kEfficientNetB0Stages{{
    {1, 3, 1, 32, 16, 1},
    {6, 3, 2, 16, 24, 2},
    {6, 5, 2, 24, 40, 2},
    {6, 3, 2, 40, 80, 3},
    {6, 5, 1, 80, 112, 3},
    {6, 5, 2, 112, 192, 4},
    {6, 3, 1, 192, 320, 1},
}};
constexpr double kEfficientNetStochasticDepth = 0.2;

// torchvision's _make_divisible(v, 8): round to the nearest multiple of 8, never below 90% of v.
std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
  std::int64_t rounded = std::max<std::int64_t>(
      divisor, static_cast<std::int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

}  // namespace

std::vector<Layer> resnet(const ResNetSpec& spec, const VisionShape& shape) {
  if (!spec.bottleneck && (spec.groups != 1 || spec.width_per_group != 64)) {
    // torchvision BasicBlock raises "BasicBlock only supports groups=1 and base_width=64".
    throw std::logic_error("resnet: basic blocks take neither groups nor a width per group");
  }
  Graph g;
  Tensor x = image_input(g, shape);
  ConvSpec stem{64, 7, 2, 3};
  stem.input_needs_grad = false;
  x = conv2d(g, "conv1", x, stem);
  x = batch_norm(g, "bn1", x);
  x = activation(g, "relu", x, Activation::relu);
  x = max_pool2d(g, "maxpool", x, 3, 2, 1);
  int segment = 0;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = 64LL << stage;
    for (int b = 0; b < spec.blocks[static_cast<std::size_t>(stage)]; ++b) {
      g.set_segment(segment++);
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      x = resnet_block(g, "layer" + std::to_string(stage + 1) + "." + std::to_string(b), x, planes, stride, spec);
    }
  }
  classifier_head(g, x, shape, "avgpool", "", 0.0, "fc");
  return g.finish();
}

// VGG (torchvision vgg.py make_layers): per stage, conv3x3 (with bias) [+ BatchNorm] + ReLU, then a
// 2x2 max pool; an adaptive 7x7 average pool, then Linear-ReLU-Dropout(0.5) twice and the classifier.
// Stage widths are 64, 128, 256, 512, 512 in every configuration. Each conv stage (ending in its max
// pool) is one segment.
std::vector<Layer> vgg(const VggSpec& spec, const VisionShape& shape) {
  static constexpr std::array<std::int64_t, 5> kWidths{64, 128, 256, 512, 512};
  Graph g;
  Tensor x = image_input(g, shape);
  int index = 0;  // position in torchvision's features Sequential
  for (std::size_t stage = 0; stage < kWidths.size(); ++stage) {
    g.set_segment(static_cast<int>(stage));
    for (int c = 0; c < spec.convs[stage]; ++c) {
      ConvSpec conv{kWidths[stage], 3, 1, 1};
      conv.bias = true;
      conv.input_needs_grad = index != 0;
      x = conv2d(g, "features." + std::to_string(index++), x, conv);
      if (spec.batch_norm) x = batch_norm(g, "features." + std::to_string(index++), x);
      x = activation(g, "features." + std::to_string(index++), x, Activation::relu);
    }
    x = max_pool2d(g, "features." + std::to_string(index++), x, 2, 2, 0);
  }
  g.set_segment(-1);
  x = adaptive_avg_pool2d(g, "avgpool", x, 7);
  x = view(x, {static_cast<std::int64_t>(x.elements())});  // torch.flatten
  x = linear(g, "classifier.0", x, LinearSpec{4096, true});
  x = activation(g, "classifier.1", x, Activation::relu);
  x = dropout(g, "classifier.2", x, 0.5);
  x = linear(g, "classifier.3", x, LinearSpec{4096, true});
  x = activation(g, "classifier.4", x, Activation::relu);
  x = dropout(g, "classifier.5", x, 0.5);
  x = linear(g, "classifier.6", x, LinearSpec{shape.num_classes, true});
  cross_entropy(g, "loss", x);
  return g.finish();
}

// MobileNetV2 (width 1.0): stem Conv-BN-ReLU6, 17 inverted residual blocks (1x1 expand, 3x3
// depthwise, 1x1 linear projection, residual when stride 1 and shapes match), 1x1 conv to 1280,
// Dropout(0.2), Linear. Each inverted residual is one segment.
std::vector<Layer> mobilenet_v2(const VisionShape& shape) {
  Graph g;
  Tensor x = image_input(g, shape);
  ConvSpec stem{32, 3, 2, 1};
  stem.input_needs_grad = false;
  x = conv_bn_act(g, "features.0", x, stem, Activation::relu6);
  int index = 1;
  for (const InvertedResidualStage& st : kMobileNetV2Stages) {
    for (int r = 0; r < st.repeats; ++r) {
      g.set_segment(index - 1);
      const std::string block = "features." + std::to_string(index++);
      const std::string p = block + ".conv";
      const int stride = r == 0 ? st.stride : 1;
      const std::int64_t in_ch = x.shape.at(0);
      const auto hidden = static_cast<std::int64_t>(std::lround(static_cast<double>(in_ch) * st.expand));
      Tensor y = x;
      int part = 0;
      if (st.expand != 1)
        y = conv_bn_act(g, p + "." + std::to_string(part++), y, ConvSpec{hidden, 1}, Activation::relu6);
      y = conv_bn_act(g, p + "." + std::to_string(part++), y, ConvSpec{hidden, 3, stride, 1, hidden},
                      Activation::relu6);
      y = conv2d(g, p + "." + std::to_string(part++), y, ConvSpec{st.channels, 1});
      y = batch_norm(g, p + "." + std::to_string(part++), y);
      if (stride == 1 && in_ch == st.channels) y = add(g, block + ".add", x, y);
      x = y;
    }
  }
  g.set_segment(-1);
  x = conv_bn_act(g, "features." + std::to_string(index), x, ConvSpec{1280, 1}, Activation::relu6);
  classifier_head(g, x, shape, "adaptive_avg_pool2d", "classifier.0", 0.2, "classifier.1");
  return g.finish();
}

// EfficientNet-B0: stem Conv-BN-SiLU, 16 MBConv blocks (expand, depthwise, squeeze-excitation with
// squeeze = max(1, in / 4), linear projection, stochastic depth + residual), 1x1 conv to 1280,
// Dropout(0.2), Linear. Each MBConv block is one segment.
std::vector<Layer> efficientnet_b0(const VisionShape& shape) {
  int total_blocks = 0;
  for (const MBConvStage& st : kEfficientNetB0Stages) total_blocks += st.layers;
  Graph g;
  Tensor x = image_input(g, shape);
  ConvSpec stem{make_divisible(32), 3, 2, 1};
  stem.input_needs_grad = false;
  x = conv_bn_act(g, "features.0", x, stem, Activation::silu);
  int block_id = 0;
  for (std::size_t s = 0; s < kEfficientNetB0Stages.size(); ++s) {
    const MBConvStage& st = kEfficientNetB0Stages[s];
    for (int l = 0; l < st.layers; ++l) {
      g.set_segment(block_id);
      const std::string block = "features." + std::to_string(s + 1) + "." + std::to_string(l);
      const std::string p = block + ".block";
      const std::int64_t in_ch = l == 0 ? make_divisible(static_cast<double>(st.in_channels)) : x.shape.at(0);
      const std::int64_t out_ch = make_divisible(static_cast<double>(st.out_channels));
      const int stride = l == 0 ? st.stride : 1;
      const std::int64_t expanded = make_divisible(static_cast<double>(in_ch * st.expand));
      const std::int64_t squeeze = std::max<std::int64_t>(1, in_ch / 4);
      int part = 0;
      Tensor y = x;
      if (expanded != in_ch) {
        y = conv_bn_act(g, p + "." + std::to_string(part++), y, ConvSpec{expanded, 1}, Activation::silu);
      }
      y = conv_bn_act(g, p + "." + std::to_string(part++), y,
                      ConvSpec{expanded, st.kernel, stride, (st.kernel - 1) / 2, expanded}, Activation::silu);
      const std::string se = p + "." + std::to_string(part++);
      Tensor scale = adaptive_avg_pool2d(g, se + ".avgpool", y, 1);
      ConvSpec fc1{squeeze, 1};
      fc1.bias = true;
      scale = conv2d(g, se + ".fc1", scale, fc1);
      scale = activation(g, se + ".activation", scale, Activation::silu);
      ConvSpec fc2{expanded, 1};
      fc2.bias = true;
      scale = conv2d(g, se + ".fc2", scale, fc2);
      scale = activation(g, se + ".scale_activation", scale, Activation::sigmoid);
      y = mul(g, se + ".scale", y, scale);
      y = conv_bn_act(g, p + "." + std::to_string(part++), y, ConvSpec{out_ch, 1}, Activation::none);
      if (stride == 1 && in_ch == out_ch) {
        // StochasticDepth("row") multiplies by a per-sample Bernoulli scalar: a mul whose other factor
        // needs no gradient, so only that one element per sample is kept (left out).
        const double p_drop = kEfficientNetStochasticDepth * block_id / total_blocks;
        if (p_drop > 0) {
          LayerSpec sd;
          sd.name = block + ".stochastic_depth";
          sd.op = OpClass::elementwise;
          sd.inputs = {y};
          sd.output_shape = y.shape;
          sd.forward_flops = y.elements();
          sd.backward_flops = y.elements();
          sd.forward_io_elements = 2 * y.elements();
          y = g.add(std::move(sd));
        }
        y = residual_add(g, block + ".add", y, x);
      }
      x = y;
      ++block_id;
    }
  }
  g.set_segment(-1);
  x = conv_bn_act(g, "features.8", x, ConvSpec{4 * 320, 1}, Activation::silu);
  classifier_head(g, x, shape, "avgpool", "classifier.0", 0.2, "classifier.1");
  return g.finish();
}

// Vision Transformer (torchvision VisionTransformer, dropout 0 and attention_dropout 0 as built by
// vit_b_16 / vit_l_16): patch conv, class token, position embedding, pre-LN encoder blocks with
// nn.MultiheadAttention (fused in_proj), GELU MLP, final LayerNorm, head on the class token. Each
// encoder block is one segment.
std::vector<Layer> vit(const VitSpec& spec, const VisionShape& shape) {
  const std::int64_t side = shape.resolution / spec.patch;
  const std::int64_t seq = side * side + 1;
  const std::int64_t h = spec.hidden;
  Graph g;
  Tensor x = image_input(g, shape);
  ConvSpec patch{h, spec.patch, spec.patch, 0};
  patch.bias = true;
  patch.input_needs_grad = false;
  x = conv2d(g, "conv_proj", x, patch);
  x = view(x, {side * side, h});                                        // reshape + permute to tokens
  x = add_parameter(g, "class_token", x, {seq, h}, h);                  // torch.cat
  x = add_parameter(g, "encoder.pos_embedding", x, {seq, h}, seq * h);  // + pos_embedding
  AttentionSpec attn{seq, spec.heads, spec.heads, h / spec.heads, false, 0.0, 0, shape.flash_attention};
  for (int i = 0; i < spec.layers; ++i) {
    g.set_segment(i);
    const std::string p = "encoder.layers.encoder_layer_" + std::to_string(i);
    Tensor y = layer_norm(g, p + ".ln_1", x);
    // in_proj and out_proj are attention projections (--lora-targets attn adapts them; issue 32's trace of
    // torchvision's ViT found them tagged as MLP matrices).
    Tensor qkv = linear(g, p + ".self_attention.in_proj", y, lora_attention(3 * h, true));
    y = attention(g, p + ".self_attention.core", {qkv}, attn);
    y = linear(g, p + ".self_attention.out_proj", y, lora_attention(h, true));
    x = residual_add(g, p + ".add", y, x);
    y = layer_norm(g, p + ".ln_2", x);
    y = linear(g, p + ".mlp.0", y, LinearSpec{spec.mlp, true, false, true});
    y = activation(g, p + ".mlp.1", y, Activation::gelu);
    y = linear(g, p + ".mlp.3", y, LinearSpec{h, true, false, true});
    x = residual_add(g, p + ".add#2", y, x);
  }
  g.set_segment(-1);
  x = layer_norm(g, "encoder.ln", x);
  // x[:, 0] is a strided view: the head's saved input keeps the whole LayerNorm output alive.
  Tensor logits = linear(g, "heads.head", select(x, {h}), LinearSpec{shape.num_classes, true});
  cross_entropy(g, "loss", logits);
  return g.finish();
}

}  // namespace gpusage::workload::detail
