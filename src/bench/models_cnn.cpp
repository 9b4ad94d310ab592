// Convolutional models: torchvision 0.14's resnet.py and mobilenetv2.py, layer for layer, with their
// initialisation (kaiming-normal fan_out for convolutions, BN weight 1 / bias 0).
#include <torch/torch.h>

#include <array>

#include "bench/torch_models.hpp"

namespace gpusage::bench {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                std::int64_t groups = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).groups(groups).bias(false));
}

void init_cnn(nn::Module& root) {
  for (auto& module : root.modules(/*include_self=*/false)) {
    if (auto* c = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = module->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

// ---- ResNet (He et al. 2015; torchvision's "v1.5": the stride sits on the 3x3 convolution) ----

struct BlockImpl : nn::Module {
  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::Sequential downsample{nullptr};
  bool bottleneck;

  BlockImpl(std::int64_t inplanes, std::int64_t planes, std::int64_t stride, bool is_bottleneck)
      : bottleneck(is_bottleneck) {
    const std::int64_t expansion = bottleneck ? 4 : 1;
    if (bottleneck) {
      conv1 = register_module("conv1", conv(inplanes, planes, 1, 1, 0));
      bn1 = register_module("bn1", nn::BatchNorm2d(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, stride, 1));
      bn2 = register_module("bn2", nn::BatchNorm2d(planes));
      conv3 = register_module("conv3", conv(planes, planes * expansion, 1, 1, 0));
      bn3 = register_module("bn3", nn::BatchNorm2d(planes * expansion));
    } else {
      conv1 = register_module("conv1", conv(inplanes, planes, 3, stride, 1));
      bn1 = register_module("bn1", nn::BatchNorm2d(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, 1, 1));
      bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    }
    if (stride != 1 || inplanes != planes * expansion) {
      downsample = register_module("downsample", nn::Sequential(conv(inplanes, planes * expansion, 1, stride, 0),
                                                                nn::BatchNorm2d(planes * expansion)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor out = torch::relu(bn1(conv1(x)));
    if (bottleneck) {
      out = torch::relu(bn2(conv2(out)));
      out = bn3(conv3(out));
    } else {
      out = bn2(conv2(out));
    }
    out += downsample ? downsample->forward(x) : x;
    return torch::relu(out);
  }
};
TORCH_MODULE(Block);

class ResNetImpl : public BenchModelImpl {
 public:
  ResNetImpl(std::array<int, 4> blocks, bool bottleneck, std::int64_t num_classes) {
    conv1_ = register_module("conv1", conv(3, 64, 7, 2, 3));
    bn1_ = register_module("bn1", nn::BatchNorm2d(64));
    std::int64_t inplanes = 64;
    const std::array<std::int64_t, 4> planes{64, 128, 256, 512};
    for (std::size_t stage = 0; stage < 4; ++stage) {
      nn::Sequential layer;
      for (int b = 0; b < blocks[stage]; ++b) {
        const std::int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
        layer->push_back(Block(inplanes, planes[stage], stride, bottleneck));
        inplanes = planes[stage] * (bottleneck ? 4 : 1);
      }
      layers_[stage] = register_module("layer" + std::to_string(stage + 1), layer);
    }
    fc_ = register_module("fc", nn::Linear(inplanes, num_classes));
    init_cnn(*this);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = torch::relu(bn1_(conv1_(input)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& layer : layers_) x = layer->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  std::array<nn::Sequential, 4> layers_{nn::Sequential{nullptr}, nn::Sequential{nullptr}, nn::Sequential{nullptr},
                                        nn::Sequential{nullptr}};
  nn::Linear fc_{nullptr};
};

// ---- MobileNetV2 (Sandler et al. 2018; torchvision mobilenetv2.py, width 1.0) ----

// Conv2dNormActivation: conv (no bias), BN, optional ReLU6, registered as "0", "1" (, "2"). A Sequential
// with a concrete forward, so that it can sit inside another Sequential (LibTorch's AnyModule needs one).
struct ConvBnImpl : nn::SequentialImpl {
  ConvBnImpl(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride, std::int64_t groups,
             bool relu6) {
    push_back(conv(in, out, kernel, stride, (kernel - 1) / 2, groups));
    push_back(nn::BatchNorm2d(out));
    if (relu6) push_back(nn::Functional([](const torch::Tensor& x) { return torch::hardtanh(x, 0.0, 6.0); }));
  }
  torch::Tensor forward(torch::Tensor x) { return nn::SequentialImpl::forward(x); }
};
TORCH_MODULE(ConvBn);

struct InvertedResidualImpl : nn::Module {
  nn::Sequential conv_{nullptr};
  bool residual;
  InvertedResidualImpl(std::int64_t in, std::int64_t out, std::int64_t stride, std::int64_t expand)
      : residual(stride == 1 && in == out) {
    const std::int64_t hidden = in * expand;
    nn::Sequential layers;
    if (expand != 1) layers->push_back(ConvBn(in, hidden, 1, 1, 1, true));
    layers->push_back(ConvBn(hidden, hidden, 3, stride, hidden, true));
    layers->push_back(conv(hidden, out, 1, 1, 0));
    layers->push_back(nn::BatchNorm2d(out));
    conv_ = register_module("conv", layers);
  }
  torch::Tensor forward(const torch::Tensor& x) { return residual ? x + conv_->forward(x) : conv_->forward(x); }
};
TORCH_MODULE(InvertedResidual);

class MobileNetV2Impl : public BenchModelImpl {
 public:
  explicit MobileNetV2Impl(std::int64_t num_classes) {
    // t (expansion), c (channels), n (repeats), s (stride of the first repeat): Table 2 of the paper.
    const std::array<std::array<std::int64_t, 4>, 7> settings{
        {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}}};
    nn::Sequential features;
    features->push_back(ConvBn(3, 32, 3, 2, 1, true));
    std::int64_t in = 32;
    for (const auto& [t, c, n, s] : settings) {
      for (std::int64_t i = 0; i < n; ++i) {
        features->push_back(InvertedResidual(in, c, i == 0 ? s : 1, t));
        in = c;
      }
    }
    features->push_back(ConvBn(in, 1280, 1, 1, 1, true));
    features_ = register_module("features", features);
    classifier_ = register_module("classifier", nn::Sequential(nn::Dropout(0.2), nn::Linear(1280, num_classes)));
    for (auto& module : modules(false)) {
      if (auto* c = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut);
      } else if (auto* bn = module->as<nn::BatchNorm2d>()) {
        nn::init::ones_(bn->weight);
        nn::init::zeros_(bn->bias);
      } else if (auto* l = module->as<nn::Linear>()) {
        nn::init::normal_(l->weight, 0, 0.01);
        nn::init::zeros_(l->bias);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = features_->forward(input);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return classifier_->forward(x);
  }

 private:
  nn::Sequential features_{nullptr};
  nn::Sequential classifier_{nullptr};
};

}  // namespace

std::shared_ptr<BenchModelImpl> make_resnet(int depth, std::int64_t num_classes) {
  switch (depth) {
    case 18: return std::make_shared<ResNetImpl>(std::array<int, 4>{2, 2, 2, 2}, false, num_classes);
    case 34: return std::make_shared<ResNetImpl>(std::array<int, 4>{3, 4, 6, 3}, false, num_classes);
    case 50: return std::make_shared<ResNetImpl>(std::array<int, 4>{3, 4, 6, 3}, true, num_classes);
    case 101: return std::make_shared<ResNetImpl>(std::array<int, 4>{3, 4, 23, 3}, true, num_classes);
    case 152: return std::make_shared<ResNetImpl>(std::array<int, 4>{3, 8, 36, 3}, true, num_classes);
    default: throw std::invalid_argument("make_resnet: no ResNet of depth " + std::to_string(depth));
  }
}

std::shared_ptr<BenchModelImpl> make_mobilenet_v2(std::int64_t num_classes) {
  return std::make_shared<MobileNetV2Impl>(num_classes);
}

std::int64_t count_parameters(torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace gpusage::bench
