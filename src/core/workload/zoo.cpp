// The model zoo: ids, reference figures with their sources, option checks, and build().
#include <array>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/workload/models.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::workload {

namespace {

enum class Kind { resnet, vgg, mobilenet_v2, efficientnet_b0, vit, transformer };

struct ZooModel {
  ZooEntry entry;
  Kind kind;
  std::string architecture_source;
  detail::ResNetSpec resnet{};
  detail::VggSpec vgg{};
  detail::VitSpec vit{};
};

std::string torchvision_source(const std::string& builder, const std::string& weights) {
  return "torchvision " + weights +
         " (num_params, GFLOPS), pytorch.org/vision/stable/models/generated/torchvision.models." + builder +
         ".html";
}

// timm publishes parameter counts in millions with two decimals and GMACs with two decimals; its
// benchmark-infer CSV (pt240, RTX 4090, 224 px rows) carries both. reference_params holds the exact
// count this builder reproduces; zoo_test checks it rounds to timm's figure.
std::string timm_source(const std::string& timm_name, const std::string& params_m, const std::string& gmacs) {
  return "timm " + timm_name + ": param_count " + params_m + " M and infer_gmacs " + gmacs +
         " at 224 px, "
         "github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/results/"
         "benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv; exact count from this builder, which rounds to "
         "timm's";
}

ZooModel vision_model(std::string id, std::string display, std::string description, std::int64_t params,
                      double gflops, std::string reference_source, Kind kind, std::string architecture) {
  return ZooModel{ZooEntry{std::move(id), std::move(display), Domain::vision, std::move(description), params,
                           gflops, std::move(reference_source)},
                  kind, std::move(architecture)};
}

ZooModel language_model(std::string id, std::string display, std::string description, std::int64_t params,
                        std::string reference_source, std::string architecture_source) {
  return ZooModel{ZooEntry{std::move(id), std::move(display), Domain::language, std::move(description),
                           params, std::nullopt, std::move(reference_source)},
                  Kind::transformer, std::move(architecture_source)};
}

ZooModel resnet(int depth, std::int64_t params, double gflops) {
  const std::string id = "resnet" + std::to_string(depth);
  ZooModel m = vision_model(
      id, "ResNet-" + std::to_string(depth),
      depth < 50 ? "ResNet with basic blocks, ImageNet-1k classifier"
                 : "ResNet v1.5 with bottleneck blocks, ImageNet-1k classifier",
      params, gflops, torchvision_source(id, "ResNet" + std::to_string(depth) + "_Weights.IMAGENET1K_V1"),
      Kind::resnet,
      "torchvision.models." + id + " (torchvision/models/resnet.py; v1.5: stride on the 3x3 conv)");
  m.resnet.bottleneck = depth >= 50;
  m.resnet.blocks = depth == 18    ? std::array<int, 4>{2, 2, 2, 2}
                    : depth == 101 ? std::array<int, 4>{3, 4, 23, 3}
                    : depth == 152 ? std::array<int, 4>{3, 8, 36, 3}
                                   : std::array<int, 4>{3, 4, 6, 3};
  return m;
}

// Bottleneck ResNets that torchvision's ResNet class builds with other depths, groups or widths
// (wide_resnet*, resnext*), or that timm builds with its ResNet class (resnet26, resnet200: same
// stem, bottleneck and downsample as torchvision's).
ZooModel resnet_variant(const std::string& id, const std::string& display, const std::string& description,
                        std::int64_t params, double gflops, std::string reference_source,
                        const detail::ResNetSpec& spec, bool timm) {
  ZooModel m =
      vision_model(id, display, description, params, gflops, std::move(reference_source), Kind::resnet,
                   timm ? "timm " + id + " (timm/models/resnet.py: torchvision's ResNet v1.5 layout)"
                        : "torchvision.models." + id + " (torchvision/models/resnet.py)");
  m.resnet = spec;
  return m;
}

// torchvision's vgg11 ... vgg19_bn: cfg letter, convs per stage, batch norm, and the num_params and GFLOPS of
// VGG<depth>[_BN]_Weights.IMAGENET1K_V1.
struct VggEntry {
  int depth;
  const char* cfg;
  std::array<int, 5> convs;
  bool batch_norm;
  std::int64_t params;
  double gflops;
};

ZooModel vgg_model(const VggEntry& v) {
  const std::string depth = std::to_string(v.depth);
  const std::string id = "vgg" + depth + (v.batch_norm ? "_bn" : "");
  const std::string display = "VGG-" + depth + (v.batch_norm ? "-BN" : "");
  const std::string cfg = v.cfg;
  ZooModel m = vision_model(
      id, display,
      display + " (configuration " + cfg + (v.batch_norm ? ", batch norm" : ", no batch norm") +
          "), ImageNet-1k classifier",
      v.params, v.gflops,
      torchvision_source(id, "VGG" + depth + (v.batch_norm ? "_BN" : "") + "_Weights.IMAGENET1K_V1"),
      Kind::vgg,
      "torchvision.models." + id + " (torchvision/models/vgg.py, cfg '" + cfg +
          "', batch_norm=" + (v.batch_norm ? "True" : "False") + ")");
  m.vgg = detail::VggSpec{v.convs, v.batch_norm};
  return m;
}

ZooModel vit_model(const std::string& id, const std::string& display, std::int64_t params, double gflops,
                   const detail::VitSpec& spec, std::string reference_source, bool timm) {
  const std::string patch = std::to_string(spec.patch);
  ZooModel m = vision_model(
      id, display, "Vision Transformer, " + patch + "x" + patch + " patches, ImageNet-1k classifier", params,
      gflops, std::move(reference_source), Kind::vit,
      timm ? "timm " + id +
                 " (timm/models/vision_transformer.py; the same blocks as torchvision's VisionTransformer)"
           : "torchvision.models." + id + " (torchvision/models/vision_transformer.py)");
  m.vit = spec;
  return m;
}

std::string hf_params_source(const std::string& cls, const std::string& repo, const std::string& note) {
  return "Hugging Face " + cls + " built from huggingface.co/" + repo + "/blob/main/config.json: " + note;
}

const std::vector<ZooModel>& models() {
  static const std::vector<ZooModel> all = [] {
    std::vector<ZooModel> m;
    m.push_back(resnet(18, 11'689'512, 1.81));
    m.push_back(resnet(34, 21'797'672, 3.66));
    m.push_back(resnet(50, 25'557'032, 4.09));
    m.push_back(resnet(101, 44'549'160, 7.80));
    m.push_back(resnet(152, 60'192'808, 11.51));
    m.push_back(vgg_model({16, "D", {2, 2, 3, 3, 3}, false, 138'357'544, 15.47}));
    m.push_back(vision_model(
        "mobilenet_v2", "MobileNetV2", "MobileNetV2 width 1.0, ImageNet-1k classifier", 3'504'872, 0.30,
        torchvision_source("mobilenet_v2", "MobileNet_V2_Weights.IMAGENET1K_V1"), Kind::mobilenet_v2,
        "torchvision.models.mobilenet_v2 (torchvision/models/mobilenetv2.py)"));
    m.push_back(vision_model(
        "efficientnet_b0", "EfficientNet-B0", "EfficientNet-B0, ImageNet-1k classifier", 5'288'548, 0.39,
        torchvision_source("efficientnet_b0", "EfficientNet_B0_Weights.IMAGENET1K_V1"), Kind::efficientnet_b0,
        "torchvision.models.efficientnet_b0 (torchvision/models/efficientnet.py)"));
    m.push_back(vit_model("vit_b_16", "ViT-B/16", 86'567'656, 17.56, detail::VitSpec{16, 768, 3072, 12, 12},
                          torchvision_source("vit_b_16", "ViT_B_16_Weights.IMAGENET1K_V1"), false));
    m.push_back(vit_model("vit_l_16", "ViT-L/16", 304'326'632, 61.55, detail::VitSpec{16, 1024, 4096, 24, 16},
                          torchvision_source("vit_l_16", "ViT_L_16_Weights.IMAGENET1K_V1"), false));
    // More torchvision and timm vision models, for the timm train benchmarks (data/validation/parts/timm.md).
    const std::string bottleneck = "ResNet v1.5 with bottleneck blocks, ImageNet-1k classifier";
    m.push_back(resnet_variant("resnet26", "ResNet-26", bottleneck, 15'995'176, 2.36,
                               timm_source("resnet26", "16.0", "2.36"),
                               detail::ResNetSpec{true, {2, 2, 2, 2}}, true));
    m.push_back(resnet_variant("resnet200", "ResNet-200", bottleneck, 64'673'832, 15.07,
                               timm_source("resnet200", "64.67", "15.07"),
                               detail::ResNetSpec{true, {3, 24, 36, 3}}, true));
    m.push_back(resnet_variant("wide_resnet50_2", "Wide ResNet-50-2",
                               "Wide ResNet-50-2 (bottleneck width doubled), ImageNet-1k classifier",
                               68'883'240, 11.398,
                               torchvision_source("wide_resnet50_2", "Wide_ResNet50_2_Weights.IMAGENET1K_V1"),
                               detail::ResNetSpec{true, {3, 4, 6, 3}, 1, 128}, false));
    m.push_back(resnet_variant(
        "wide_resnet101_2", "Wide ResNet-101-2",
        "Wide ResNet-101-2 (bottleneck width doubled), ImageNet-1k classifier", 126'886'696, 22.753,
        torchvision_source("wide_resnet101_2", "Wide_ResNet101_2_Weights.IMAGENET1K_V1"),
        detail::ResNetSpec{true, {3, 4, 23, 3}, 1, 128}, false));
    m.push_back(resnet_variant(
        "resnext50_32x4d", "ResNeXt-50 32x4d", "ResNeXt-50, 32 groups of 4 channels, ImageNet-1k classifier",
        25'028'904, 4.23, torchvision_source("resnext50_32x4d", "ResNeXt50_32X4D_Weights.IMAGENET1K_V1"),
        detail::ResNetSpec{true, {3, 4, 6, 3}, 32, 4}, false));
    m.push_back(resnet_variant("resnext101_32x4d", "ResNeXt-101 32x4d",
                               "ResNeXt-101, 32 groups of 4 channels, ImageNet-1k classifier", 44'177'704,
                               8.01, timm_source("resnext101_32x4d", "44.18", "8.01"),
                               detail::ResNetSpec{true, {3, 4, 23, 3}, 32, 4}, true));
    m.push_back(
        resnet_variant("resnext101_32x8d", "ResNeXt-101 32x8d",
                       "ResNeXt-101, 32 groups of 8 channels, ImageNet-1k classifier", 88'791'336, 16.414,
                       torchvision_source("resnext101_32x8d", "ResNeXt101_32X8D_Weights.IMAGENET1K_V1"),
                       detail::ResNetSpec{true, {3, 4, 23, 3}, 32, 8}, false));
    m.push_back(
        resnet_variant("resnext101_64x4d", "ResNeXt-101 64x4d",
                       "ResNeXt-101, 64 groups of 4 channels, ImageNet-1k classifier", 83'455'272, 15.46,
                       torchvision_source("resnext101_64x4d", "ResNeXt101_64X4D_Weights.IMAGENET1K_V1"),
                       detail::ResNetSpec{true, {3, 4, 23, 3}, 64, 4}, false));
    for (const VggEntry& v : std::array<VggEntry, 7>{{
             {11, "A", {1, 1, 2, 2, 2}, false, 132'863'336, 7.609},
             {11, "A", {1, 1, 2, 2, 2}, true, 132'868'840, 7.609},
             {13, "B", {2, 2, 2, 2, 2}, false, 133'047'848, 11.308},
             {13, "B", {2, 2, 2, 2, 2}, true, 133'053'736, 11.308},
             {16, "D", {2, 2, 3, 3, 3}, true, 138'365'992, 15.47},
             {19, "E", {2, 2, 4, 4, 4}, false, 143'667'240, 19.632},
             {19, "E", {2, 2, 4, 4, 4}, true, 143'678'248, 19.632},
         }}) {
      m.push_back(vgg_model(v));
    }
    m.push_back(vit_model("vit_tiny_patch16_224", "ViT-Ti/16", 5'717'416, 1.26,
                          detail::VitSpec{16, 192, 768, 12, 3},
                          timm_source("vit_tiny_patch16_224", "5.72", "1.26"), true));
    m.push_back(vit_model("vit_small_patch16_224", "ViT-S/16", 22'050'664, 4.61,
                          detail::VitSpec{16, 384, 1536, 12, 6},
                          timm_source("vit_small_patch16_224", "22.05", "4.61"), true));
    m.push_back(vit_model("vit_small_patch32_224", "ViT-S/32", 22'878'952, 1.15,
                          detail::VitSpec{32, 384, 1536, 12, 6},
                          timm_source("vit_small_patch32_224", "22.88", "1.15"), true));
    m.push_back(vit_model("vit_b_32", "ViT-B/32", 88'224'232, 4.409, detail::VitSpec{32, 768, 3072, 12, 12},
                          torchvision_source("vit_b_32", "ViT_B_32_Weights.IMAGENET1K_V1"), false));
    m.push_back(vit_model("vit_base_patch8_224", "ViT-B/8", 86'576'872, 78.22,
                          detail::VitSpec{8, 768, 3072, 12, 12},
                          timm_source("vit_base_patch8_224", "86.58", "78.22"), true));
    m.push_back(vit_model("vit_large_patch14_224", "ViT-L/14", 304'203'752, 81.08,
                          detail::VitSpec{14, 1024, 4096, 24, 16},
                          timm_source("vit_large_patch14_224", "304.2", "81.08"), true));
    m.push_back(vit_model("vit_l_32", "ViT-L/32", 306'535'400, 15.378,
                          detail::VitSpec{32, 1024, 4096, 24, 16},
                          torchvision_source("vit_l_32", "ViT_L_32_Weights.IMAGENET1K_V1"), false));
    m.push_back(vit_model(
        "vit_h_14", "ViT-H/14", 632'045'800, 167.295, detail::VitSpec{14, 1280, 5120, 32, 16},
        torchvision_source("vit_h_14", "ViT_H_14_Weights.IMAGENET1K_SWAG_LINEAR_V1 (224 px)"), false));
    const std::string bert_note =
        "BertModel with pooler plus the MLM head (dense, LayerNorm, decoder bias; decoder weight tied to the "
        "word embeddings) and the NSP head; equals the Hub checkpoint's safetensors parameter total";
    m.push_back(language_model(
        "bert-base", "BERT-base (uncased)", "BERT-base pre-training (MLM + NSP heads)", 110'106'428,
        hf_params_source("BertForPreTraining", "google-bert/bert-base-uncased", bert_note),
        "Hugging Face BertForPreTraining (transformers/models/bert/modeling_bert.py)"));
    m.push_back(language_model(
        "bert-large", "BERT-large (uncased)", "BERT-large pre-training (MLM + NSP heads)", 336'226'108,
        hf_params_source("BertForPreTraining", "google-bert/bert-large-uncased", bert_note),
        "Hugging Face BertForPreTraining (transformers/models/bert/modeling_bert.py)"));
    const std::string gpt2_note =
        "num_parameters() with lm_head tied to wte (attn.bias buffers are not parameters)";
    const std::string gpt2_arch = "Hugging Face GPT2LMHeadModel (transformers/models/gpt2/modeling_gpt2.py)";
    m.push_back(language_model("gpt2", "GPT-2", "GPT-2 small, causal LM", 124'439'808,
                               hf_params_source("GPT2LMHeadModel", "openai-community/gpt2", gpt2_note),
                               gpt2_arch));
    m.push_back(language_model("gpt2-medium", "GPT-2 Medium", "GPT-2 medium, causal LM", 354'823'168,
                               hf_params_source("GPT2LMHeadModel", "openai-community/gpt2-medium", gpt2_note),
                               gpt2_arch));
    m.push_back(language_model("gpt2-large", "GPT-2 Large", "GPT-2 large, causal LM", 774'030'080,
                               hf_params_source("GPT2LMHeadModel", "openai-community/gpt2-large", gpt2_note),
                               gpt2_arch));
    m.push_back(language_model("gpt2-xl", "GPT-2 XL", "GPT-2 XL, causal LM", 1'557'611'200,
                               hf_params_source("GPT2LMHeadModel", "openai-community/gpt2-xl", gpt2_note),
                               gpt2_arch));
    const std::string llama_note = "num_parameters(), lm_head untied";
    const std::string llama_arch =
        "Hugging Face LlamaForCausalLM (transformers/models/llama/modeling_llama.py)";
    m.push_back(language_model("llama2-7b", "Llama 2 7B", "Llama 2 7B, causal LM", 6'738'415'616,
                               hf_params_source("LlamaForCausalLM", "meta-llama/Llama-2-7b-hf", llama_note),
                               llama_arch));
    m.push_back(language_model("llama2-13b", "Llama 2 13B", "Llama 2 13B, causal LM", 13'015'864'320,
                               hf_params_source("LlamaForCausalLM", "meta-llama/Llama-2-13b-hf", llama_note),
                               llama_arch));
    m.push_back(language_model(
        "llama3-8b", "Llama 3 8B", "Llama 3 8B, causal LM, GQA with 8 KV heads", 8'030'261'248,
        hf_params_source("LlamaForCausalLM", "meta-llama/Meta-Llama-3-8B", llama_note), llama_arch));
    m.push_back(language_model(
        "mistral-7b", "Mistral 7B v0.1",
        "Mistral 7B v0.1, causal LM, GQA with 8 KV heads, 4096-token sliding window", 7'241'732'096,
        hf_params_source("MistralForCausalLM", "mistralai/Mistral-7B-v0.1", llama_note),
        "Hugging Face MistralForCausalLM (transformers/models/mistral/modeling_mistral.py)"));
    // The models people fine-tune most on one or a few GPUs (issue 27). Parameter totals: the Hub
    // checkpoints' safetensors totals, as each model card's "Model size" reports them.
    const std::string tied_note = "num_parameters(), lm_head tied to the embeddings";
    m.push_back(language_model(
        "llama3.1-8b", "Llama 3.1 8B", "Llama 3.1 8B, causal LM, GQA with 8 KV heads", 8'030'261'248,
        hf_params_source("LlamaForCausalLM", "meta-llama/Llama-3.1-8B", llama_note), llama_arch));
    m.push_back(language_model(
        "llama3.2-1b", "Llama 3.2 1B", "Llama 3.2 1B, causal LM, GQA, tied embeddings", 1'235'814'400,
        hf_params_source("LlamaForCausalLM", "meta-llama/Llama-3.2-1B", tied_note), llama_arch));
    m.push_back(language_model(
        "llama3.2-3b", "Llama 3.2 3B", "Llama 3.2 3B, causal LM, GQA, tied embeddings", 3'212'749'824,
        hf_params_source("LlamaForCausalLM", "meta-llama/Llama-3.2-3B", tied_note), llama_arch));
    const std::string qwen_arch = "Hugging Face Qwen2ForCausalLM (transformers/models/qwen2/modeling_qwen2.py)";
    m.push_back(language_model(
        "qwen2.5-7b", "Qwen2.5 7B", "Qwen2.5 7B, causal LM, GQA with 4 KV heads, 152k vocabulary", 7'615'616'512,
        hf_params_source("Qwen2ForCausalLM", "Qwen/Qwen2.5-7B", llama_note), qwen_arch));
    m.push_back(language_model(
        "qwen2.5-14b", "Qwen2.5 14B", "Qwen2.5 14B, causal LM, GQA with 8 KV heads, 152k vocabulary",
        14'770'033'664, hf_params_source("Qwen2ForCausalLM", "Qwen/Qwen2.5-14B", llama_note), qwen_arch));
    m.push_back(language_model(
        "mistral-7b-v0.3", "Mistral 7B v0.3", "Mistral 7B v0.3, causal LM, GQA with 8 KV heads, full attention",
        7'248'023'552, hf_params_source("MistralForCausalLM", "mistralai/Mistral-7B-v0.3", llama_note),
        "Hugging Face MistralForCausalLM (transformers/models/mistral/modeling_mistral.py)"));
    const std::string gemma2_arch = "Hugging Face Gemma2ForCausalLM (transformers/models/gemma2/modeling_gemma2.py)";
    m.push_back(language_model(
        "qwen3-8b", "Qwen3 8B", "Qwen3 8B, causal LM, GQA with 8 KV heads, q/k norms, 152k vocabulary",
        8'190'735'360, hf_params_source("Qwen3ForCausalLM", "Qwen/Qwen3-8B", llama_note),
        "Hugging Face Qwen3ForCausalLM (transformers/models/qwen3/modeling_qwen3.py)"));
    m.push_back(language_model(
        "gemma2-2b", "Gemma 2 2B", "Gemma 2 2B, causal LM, GeGLU, local/global layers, 256k vocabulary, tied",
        2'614'341'888, hf_params_source("Gemma2ForCausalLM", "google/gemma-2-2b", tied_note), gemma2_arch));
    m.push_back(language_model(
        "gemma2-9b", "Gemma 2 9B", "Gemma 2 9B, causal LM, GeGLU, local/global layers, 256k vocabulary, tied",
        9'241'705'984, hf_params_source("Gemma2ForCausalLM", "google/gemma-2-9b", tied_note), gemma2_arch));
    m.push_back(language_model(
        "phi3-mini", "Phi-3 mini 4k", "Phi-3-mini-4k-instruct, causal LM, fused qkv and gate/up projections",
        3'821'079'552, hf_params_source("Phi3ForCausalLM", "microsoft/Phi-3-mini-4k-instruct", llama_note),
        "Hugging Face Phi3ForCausalLM (transformers/models/phi3/modeling_phi3.py)"));
    m.push_back(language_model(
        "tinyllama-1.1b", "TinyLlama 1.1B", "TinyLlama 1.1B Chat v1.0, causal LM, GQA with 4 KV heads",
        1'100'048'384, hf_params_source("LlamaForCausalLM", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", llama_note),
        llama_arch));
    for (const auto& [size, params] : {std::pair<std::string, std::int64_t>{"0.5B", 494'032'768},
                                       {"1.5B", 1'543'714'304},
                                       {"3B", 3'085'938'688}}) {
      std::string id = "qwen2.5-" + size;
      id.back() = 'b';
      m.push_back(language_model(
          id, "Qwen2.5 " + size, "Qwen2.5 " + size + ", causal LM, GQA with 2 KV heads, tied embeddings", params,
          hf_params_source("Qwen2ForCausalLM", "Qwen/Qwen2.5-" + size, tied_note), qwen_arch));
    }
    return m;
  }();
  return all;
}

std::vector<std::string> zoo_ids() {
  std::vector<std::string> ids;
  for (const ZooModel& m : models()) ids.push_back(m.entry.id);
  return ids;
}

const ZooModel& find_model(const std::string& id) {
  for (const ZooModel& m : models()) {
    if (m.entry.id == id) return m;
  }
  const std::vector<std::string> close = text::closest(id, zoo_ids(), 3);
  std::string message = "unknown model '" + id + "'";
  if (!close.empty()) message += "; did you mean " + text::join(close, " or ") + "?";
  message += " Known models: " + text::join(zoo_ids());
  throw InputError(message);
}

detail::VisionShape vision_shape(const std::string& id, const WorkloadOptions& o, int multiple,
                                 const std::string& why) {
  if (o.seq_len) {
    throw InputError("seq_len applies to language models; " + id +
                     " is a vision model (set resolution instead)");
  }
  detail::VisionShape shape;
  shape.flash_attention = o.flash_attention;
  if (o.resolution) {
    const int r = *o.resolution;
    if (r < multiple || r % multiple != 0) {
      throw InputError("resolution " + std::to_string(r) + " is not accepted for " + id +
                       ": give a positive multiple of " + std::to_string(multiple) + " (" + why +
                       "), e.g. 224");
    }
    shape.resolution = r;
  }
  if (o.num_classes) {
    if (*o.num_classes < 1) {
      throw InputError("num_classes " + std::to_string(*o.num_classes) + " is not accepted: give at least 1");
    }
    shape.num_classes = *o.num_classes;
  }
  return shape;
}

int language_seq_len(const std::string& id, const detail::TransformerConfig& c, const WorkloadOptions& o) {
  if (o.resolution || o.num_classes) {
    throw InputError(std::string(o.resolution ? "resolution" : "num_classes") +
                     " applies to vision models; " + id + " is a language model (set seq_len instead)");
  }
  if (!o.seq_len) return c.default_seq_len;
  const int s = *o.seq_len;
  if (s < 1) {
    throw InputError("seq_len " + std::to_string(s) + " is not accepted for " + id +
                     ": give at least 1 token");
  }
  if (c.learned_positions && s > c.max_positions) {
    throw InputError("seq_len " + std::to_string(s) + " is not accepted for " + id + ": it has " +
                     std::to_string(c.max_positions) + " learned position embeddings, so give 1 to " +
                     std::to_string(c.max_positions));
  }
  return s;
}

Workload language_workload(const std::string& id, const detail::TransformerConfig& c,
                           const WorkloadOptions& o) {
  Workload w;
  w.id = id;
  w.domain = Domain::language;
  w.seq_len = language_seq_len(id, c, o);
  w.causal_lm = c.family != detail::Family::bert;
  w.layers = detail::transformer(c, w.seq_len, o.flash_attention, o.head);
  return w;
}

}  // namespace

const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> entries = [] {
    std::vector<ZooEntry> e;
    for (const ZooModel& m : models()) e.push_back(m.entry);
    return e;
  }();
  return entries;
}

Workload build(const std::string& id, const WorkloadOptions& options) {
  const ZooModel& m = find_model(id);
  Workload w;
  if (m.kind == Kind::transformer) {
    w = language_workload(id, detail::parse_hf_config(detail::zoo_hf_config(id)), options);
  } else {
    constexpr int kCnnMultiple = 32;  // five stride-2 stages: the last feature map is resolution / 32
    const bool is_vit = m.kind == Kind::vit;
    const detail::VisionShape shape =
        is_vit ? vision_shape(id, options, m.vit.patch, "the patch size")
               : vision_shape(id, options, kCnnMultiple, "the network downsamples by 32");
    w.id = id;
    w.domain = Domain::vision;
    w.resolution = shape.resolution;
    switch (m.kind) {
      case Kind::resnet:
        w.layers = detail::resnet(m.resnet, shape);
        break;
      case Kind::vgg:
        w.layers = detail::vgg(m.vgg, shape);
        break;
      case Kind::mobilenet_v2:
        w.layers = detail::mobilenet_v2(shape);
        break;
      case Kind::efficientnet_b0:
        w.layers = detail::efficientnet_b0(shape);
        break;
      case Kind::vit:
        w.layers = detail::vit(m.vit, shape);
        break;
      case Kind::transformer:
        break;
    }
  }
  w.display_name = m.entry.display_name;
  w.architecture_source = m.architecture_source;
  return w;
}

Workload from_hf_config(const std::string& config_json_text, const WorkloadOptions& options) {
  const detail::TransformerConfig c = detail::parse_hf_config(config_json_text);
  Workload w = language_workload(std::string("hf:") + detail::to_string(c.family), c, options);
  w.display_name = c.name;
  w.architecture_source = std::string("Hugging Face ") + detail::hf_class(c.family) + " from config.json";
  return w;
}

}  // namespace gpusage::workload
