// The zoo: ids and order, exact parameter counts against torchvision / Hugging Face, options.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

using ::testing::HasSubstr;
using testing::input_error_of;

TEST(Zoo, ListsTheModelsInDisplayOrder) {
  std::vector<std::string> ids;
  for (const ZooEntry& e : zoo()) ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"resnet18",
                                           "resnet34",
                                           "resnet50",
                                           "resnet101",
                                           "resnet152",
                                           "vgg16",
                                           "mobilenet_v2",
                                           "efficientnet_b0",
                                           "vit_b_16",
                                           "vit_l_16",
                                           "resnet26",
                                           "resnet200",
                                           "wide_resnet50_2",
                                           "wide_resnet101_2",
                                           "resnext50_32x4d",
                                           "resnext101_32x4d",
                                           "resnext101_32x8d",
                                           "resnext101_64x4d",
                                           "vgg11",
                                           "vgg11_bn",
                                           "vgg13",
                                           "vgg13_bn",
                                           "vgg16_bn",
                                           "vgg19",
                                           "vgg19_bn",
                                           "vit_tiny_patch16_224",
                                           "vit_small_patch16_224",
                                           "vit_small_patch32_224",
                                           "vit_b_32",
                                           "vit_base_patch8_224",
                                           "vit_large_patch14_224",
                                           "vit_l_32",
                                           "vit_h_14",
                                           "bert-base",
                                           "bert-large",
                                           "gpt2",
                                           "gpt2-medium",
                                           "gpt2-large",
                                           "gpt2-xl",
                                           "llama2-7b",
                                           "llama2-13b",
                                           "llama3-8b",
                                           "mistral-7b",
                                           "llama3.1-8b",
                                           "llama3.2-1b",
                                           "llama3.2-3b",
                                           "qwen2.5-7b",
                                           "qwen2.5-14b",
                                           "mistral-7b-v0.3",
                                           "qwen3-8b",
                                           "gemma2-2b",
                                           "gemma2-9b",
                                           "phi3-mini",
                                           "tinyllama-1.1b",
                                           "qwen2.5-0.5b",
                                           "qwen2.5-1.5b",
                                           "qwen2.5-3b"}));
}

TEST(Zoo, EveryEntryNamesItsSourceAndVisionEntriesCarryGflops) {
  for (const ZooEntry& e : zoo()) {
    EXPECT_FALSE(e.reference_source.empty()) << e.id;
    EXPECT_FALSE(e.description.empty()) << e.id;
    EXPECT_EQ(e.reference_gflops.has_value(), e.domain == Domain::vision) << e.id;
  }
}

// The reference counts are torchvision's num_params and Hugging Face's num_parameters(); the builders
// must reproduce them exactly, not approximately.
TEST(Zoo, ParameterCountsEqualTheReferenceExactly) {
  for (const ZooEntry& e : zoo()) {
    const Workload w = build(e.id);
    EXPECT_EQ(w.params(), e.reference_params) << e.id;
  }
}

TEST(Zoo, ParameterCountsOfNamedModels) {
  EXPECT_EQ(build("resnet50").params(), 25'557'032);
  EXPECT_EQ(build("vit_b_16").params(), 86'567'656);
  EXPECT_EQ(build("gpt2").params(), 124'439'808);
  EXPECT_EQ(build("llama2-7b").params(), 6'738'415'616);
  EXPECT_EQ(build("llama3-8b").params(), 8'030'261'248);
  EXPECT_EQ(build("mistral-7b").params(), 7'241'732'096);
  // The fine-tuning shortcuts (issue 27), against their Hub checkpoints' totals.
  EXPECT_EQ(build("llama3.2-1b").params(), 1'235'814'400);
  EXPECT_EQ(build("qwen2.5-7b").params(), 7'615'616'512);
  EXPECT_EQ(build("mistral-7b-v0.3").params(), 7'248'023'552);
  EXPECT_EQ(build("qwen3-8b").params(), 8'190'735'360);
  EXPECT_EQ(build("gemma2-2b").params(), 2'614'341'888);
  EXPECT_EQ(build("gemma2-9b").params(), 9'241'705'984);
  EXPECT_EQ(build("phi3-mini").params(), 3'821'079'552);
  EXPECT_EQ(build("tinyllama-1.1b").params(), 1'100'048'384);
  EXPECT_EQ(build("qwen2.5-0.5b").params(), 494'032'768);
  EXPECT_EQ(build("qwen2.5-1.5b").params(), 1'543'714'304);
  EXPECT_EQ(build("qwen2.5-3b").params(), 3'085'938'688);
  // BertForPreTraining = BertModel (109,482,240 with pooler) + MLM transform, decoder bias and NSP head.
  EXPECT_EQ(build("bert-base").params(), 110'106'428);
  EXPECT_EQ(build("bert-large").params(), 336'226'108);
}

// torchvision's num_params for the ResNet, VGG and ViT variants (the *_Weights.IMAGENET1K_V1 meta;
// vit_h_14: IMAGENET1K_SWAG_LINEAR_V1, the 224 px one).
TEST(Zoo, ParameterCountsOfTorchvisionVariantsEqualTorchvision) {
  EXPECT_EQ(build("wide_resnet50_2").params(), 68'883'240);
  EXPECT_EQ(build("wide_resnet101_2").params(), 126'886'696);
  EXPECT_EQ(build("resnext50_32x4d").params(), 25'028'904);
  EXPECT_EQ(build("resnext101_32x8d").params(), 88'791'336);
  EXPECT_EQ(build("resnext101_64x4d").params(), 83'455'272);
  EXPECT_EQ(build("vgg11").params(), 132'863'336);
  EXPECT_EQ(build("vgg11_bn").params(), 132'868'840);
  EXPECT_EQ(build("vgg13").params(), 133'047'848);
  EXPECT_EQ(build("vgg13_bn").params(), 133'053'736);
  EXPECT_EQ(build("vgg16_bn").params(), 138'365'992);
  EXPECT_EQ(build("vgg19").params(), 143'667'240);
  EXPECT_EQ(build("vgg19_bn").params(), 143'678'248);
  EXPECT_EQ(build("vit_b_32").params(), 88'224'232);
  EXPECT_EQ(build("vit_l_32").params(), 306'535'400);
  EXPECT_EQ(build("vit_h_14").params(), 632'045'800);
}

// timm publishes parameter counts in millions with two decimals (param_count in
// results/benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv and the 2022 train CSVs); the builders
// must round to them. The ViT rows at 384 px check the position embedding (timm *_384 entries).
TEST(Zoo, ParameterCountsOfTimmModelsRoundToTimmsFigures) {
  const auto millions = [](const std::string& id, int resolution) {
    const Workload w = resolution == 224 ? build(id) : build(id, testing::at_resolution(resolution));
    return std::round(static_cast<double>(w.params()) / 1e4) / 100;
  };
  EXPECT_DOUBLE_EQ(millions("resnet26", 224), 16.00);
  EXPECT_DOUBLE_EQ(millions("resnet200", 224), 64.67);
  EXPECT_DOUBLE_EQ(millions("resnext101_32x4d", 224), 44.18);
  EXPECT_DOUBLE_EQ(millions("vit_tiny_patch16_224", 224), 5.72);
  EXPECT_DOUBLE_EQ(millions("vit_tiny_patch16_224", 384), 5.79);
  EXPECT_DOUBLE_EQ(millions("vit_small_patch16_224", 224), 22.05);
  EXPECT_DOUBLE_EQ(millions("vit_small_patch16_224", 384), 22.20);
  EXPECT_DOUBLE_EQ(millions("vit_small_patch32_224", 224), 22.88);
  EXPECT_DOUBLE_EQ(millions("vit_small_patch32_224", 384), 22.92);
  EXPECT_DOUBLE_EQ(millions("vit_base_patch8_224", 224), 86.58);
  EXPECT_DOUBLE_EQ(millions("vit_large_patch14_224", 224), 304.20);
  EXPECT_DOUBLE_EQ(millions("vit_b_32", 384), 88.30);
  EXPECT_DOUBLE_EQ(millions("vit_l_32", 384), 306.63);
  EXPECT_DOUBLE_EQ(millions("vit_l_16", 384), 304.72);
}

// ResNeXt's 3x3 conv is grouped: resnext50_32x4d layer1.0.conv2 has 32 groups of 4 channels,
// int(64 * 4 / 64) * 32 = 128 channels, so 128 * (128 / 32) * 9 weights and that many MACs per pixel.
TEST(Zoo, ResNeXtThreeByThreeConvIsGrouped) {
  const Layer conv = testing::layer(build("resnext50_32x4d"), "layer1.0.conv2");
  EXPECT_EQ(conv.params, 128 * 4 * 9);
  EXPECT_DOUBLE_EQ(conv.forward_flops, 2.0 * 128 * 4 * 9 * 56 * 56);
  EXPECT_EQ(conv.output_shape, (std::vector<std::int64_t>{128, 56, 56}));
}

// Wide ResNet-50-2 doubles the bottleneck (2048-1024-2048 in the last block), not the block output.
TEST(Zoo, WideResNetDoublesOnlyTheBottleneckWidth) {
  const Workload w = build("wide_resnet50_2");
  EXPECT_EQ(testing::layer(w, "layer4.2.conv2").output_shape, (std::vector<std::int64_t>{1024, 7, 7}));
  EXPECT_EQ(testing::layer(w, "layer4.2.conv3").output_shape, (std::vector<std::int64_t>{2048, 7, 7}));
}

// vgg*_bn put a BatchNorm2d between each conv and its ReLU, shifting torchvision's Sequential indices.
TEST(Zoo, VggWithBatchNormNamesLayersAsTorchvision) {
  const Workload w = build("vgg11_bn");
  EXPECT_EQ(testing::layer(w, "features.1").op, OpClass::normalization);
  EXPECT_EQ(testing::layer(w, "features.3").op, OpClass::pooling);  // the first max pool
  const Workload plain = build("vgg19");
  // cfg E: 16 convs, each followed by its ReLU, and 5 pools: indices 0 ... 36, the last conv at 34.
  EXPECT_EQ(testing::layer(plain, "features.34").op, OpClass::conv);
  EXPECT_EQ(plain.segment_count(), 5);
}

// Every layer is named after its module path, once, and carries sane per-sample figures.
TEST(Zoo, LayersHaveUniqueNamesAndNonNegativeFigures) {
  for (const ZooEntry& e : zoo()) {
    const Workload w = build(e.id);
    std::set<std::string> names;
    for (const Layer& l : w.layers) {
      EXPECT_TRUE(names.insert(l.name).second) << e.id << " repeats " << l.name;
      EXPECT_GE(l.params, 0) << l.name;
      EXPECT_GE(l.forward_flops, 0) << l.name;
      EXPECT_GE(l.saved_elements, 0) << l.name;
      EXPECT_GE(l.saved_fixed_bytes, 0) << l.name;
      EXPECT_GT(l.forward_io_elements, 0) << e.id << " " << l.name;
      EXPECT_FALSE(l.output_shape.empty()) << l.name;
      EXPECT_GE(l.segment, -1) << l.name;
    }
    EXPECT_EQ(w.layers.back().op, OpClass::loss) << e.id;
  }
}

// A transformer's residual stream is fp32 under autocast: each LayerNorm on it moves 10 bytes an element more (4-byte
// input and output, and the 16-bit cast of its output) in one more kernel, each residual add 4 more; a ResNet's adds
// stay 16-bit. The LayerNorm names its normalized width for the pre-2.8 weight-gradient kernel.
TEST(Zoo, TransformerResidualStreamCarriesAutocastsFp32Traffic) {
  const Workload vit = build("vit_b_16");
  const double stream = 197.0 * 768;  // tokens x width per sample
  const Layer& norm = testing::layer(vit, "encoder.layers.encoder_layer_0.ln_1");
  EXPECT_DOUBLE_EQ(norm.autocast_extra_io_bytes, 10 * stream);
  EXPECT_EQ(norm.autocast_extra_kernels, 1);
  EXPECT_DOUBLE_EQ(norm.layer_norm_columns, 768);
  const Layer& add = testing::layer(vit, "encoder.layers.encoder_layer_0.add#2");
  EXPECT_DOUBLE_EQ(add.autocast_extra_io_bytes, 4 * stream);
  EXPECT_EQ(add.autocast_extra_kernels, 0);
  const Workload resnet = build("resnet50");
  for (const Layer& l : resnet.layers) {
    EXPECT_EQ(l.autocast_extra_io_bytes, 0) << l.name;
    EXPECT_EQ(l.layer_norm_columns, 0) << l.name;
  }
}

TEST(Zoo, BuiltWorkloadCarriesIdentityAndShape) {
  const Workload r = build("resnet50");
  EXPECT_EQ(r.id, "resnet50");
  EXPECT_EQ(r.display_name, "ResNet-50");
  EXPECT_EQ(r.domain, Domain::vision);
  EXPECT_EQ(r.resolution, 224);
  EXPECT_EQ(r.tokens_per_sample(), 0);
  EXPECT_THAT(r.architecture_source, HasSubstr("torchvision"));
  const Workload g = build("gpt2");
  EXPECT_EQ(g.domain, Domain::language);
  EXPECT_EQ(g.seq_len, 1024);
  EXPECT_EQ(g.tokens_per_sample(), 1024);
  EXPECT_THAT(g.architecture_source, HasSubstr("GPT2LMHeadModel"));
}

TEST(Zoo, DefaultSequenceLengthsAreTheUsualTrainingLengths) {
  EXPECT_EQ(build("bert-base").seq_len, 512);
  EXPECT_EQ(build("gpt2-xl").seq_len, 1024);
  EXPECT_EQ(build("llama2-7b").seq_len, 4096);
  EXPECT_EQ(build("llama3-8b").seq_len, 8192);
  EXPECT_EQ(build("mistral-7b").seq_len, 8192);
}

TEST(Zoo, UnknownIdIsAnInputErrorListingCloseIds) {
  const std::string message = input_error_of([] { build("resnet5"); });
  EXPECT_THAT(message, HasSubstr("unknown model 'resnet5'"));
  EXPECT_THAT(message, HasSubstr("did you mean"));
  EXPECT_THAT(message, HasSubstr("resnet50"));
  EXPECT_THAT(input_error_of([] { build("lama2-7b"); }), HasSubstr("llama2-7b"));
}

TEST(ZooOptions, CnnResolutionMustBeAPositiveMultipleOf32) {
  const std::string message = input_error_of([] { build("resnet50", testing::at_resolution(100)); });
  EXPECT_THAT(message, HasSubstr("resolution 100"));
  EXPECT_THAT(message, HasSubstr("multiple of 32"));
  EXPECT_THAT(input_error_of([] { build("vgg16", testing::at_resolution(0)); }), HasSubstr("resolution 0"));
  EXPECT_THAT(input_error_of([] { build("mobilenet_v2", testing::at_resolution(-32)); }),
              HasSubstr("resolution -32"));
  EXPECT_EQ(build("resnet50", testing::at_resolution(32)).resolution, 32);
}

TEST(ZooOptions, VitResolutionMustBeAMultipleOfThePatchSize) {
  const std::string message = input_error_of([] { build("vit_b_16", testing::at_resolution(200)); });
  EXPECT_THAT(message, HasSubstr("resolution 200"));
  EXPECT_THAT(message, HasSubstr("multiple of 16"));
  EXPECT_EQ(build("vit_b_16", testing::at_resolution(240)).resolution,
            240);  // 240 = 15 patches, not a multiple of 32
}

// torchvision ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1 (384 px): num_params 86,859,496 — the position
// embedding grows with the (384/16)^2 + 1 = 577 tokens.
TEST(ZooOptions, VitPositionEmbeddingFollowsTheResolution) {
  const Workload w = build("vit_b_16", testing::at_resolution(384));
  EXPECT_EQ(w.params(), 86'859'496);
  EXPECT_EQ(testing::layer(w, "encoder.layers.encoder_layer_0.ln_1").output_shape,
            (std::vector<std::int64_t>{577, 768}));
}

TEST(ZooOptions, NumClassesResizesTheClassifier) {
  WorkloadOptions o;
  o.num_classes = 10;
  // resnet50's fc goes from 2048 x 1000 + 1000 to 2048 x 10 + 10.
  EXPECT_EQ(build("resnet50", o).params(), 25'557'032 - 2048 * 990 - 990);
  EXPECT_EQ(testing::layer(build("resnet50", o), "fc").output_shape, (std::vector<std::int64_t>{10}));
  o.num_classes = 0;
  EXPECT_THAT(input_error_of([&] { build("resnet50", o); }), HasSubstr("num_classes 0"));
}

TEST(ZooOptions, SeqLenIsCappedByLearnedPositionEmbeddings) {
  WorkloadOptions o;
  o.seq_len = 2048;
  const std::string message = input_error_of([&] { build("gpt2", o); });
  EXPECT_THAT(message, HasSubstr("seq_len 2048"));
  EXPECT_THAT(message, HasSubstr("1 to 1024"));
  o.seq_len = 513;
  EXPECT_THAT(input_error_of([&] { build("bert-base", o); }), HasSubstr("1 to 512"));
  o.seq_len = 0;
  EXPECT_THAT(input_error_of([&] { build("llama2-7b", o); }), HasSubstr("seq_len 0"));
  // Rotary models have no learned table to outgrow.
  o.seq_len = 16384;
  EXPECT_EQ(build("llama2-7b", o).seq_len, 16384);
  o.seq_len = 128;
  EXPECT_EQ(build("gpt2", o).tokens_per_sample(), 128);
}

TEST(ZooOptions, OptionsOfTheOtherDomainAreRejected) {
  WorkloadOptions seq;
  seq.seq_len = 128;
  EXPECT_THAT(input_error_of([&] { build("resnet50", seq); }),
              HasSubstr("seq_len applies to language models"));
  EXPECT_THAT(input_error_of([] { build("gpt2", testing::at_resolution(224)); }),
              HasSubstr("resolution applies to vision models"));
}

}  // namespace
}  // namespace gpusage::workload
