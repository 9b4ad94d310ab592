// The zoo's models as tables: one row per model, with the reference figures (parameters, forward GFLOPs)
// and where each comes from. zoo_models() turns the rows into ZooModel values in display order.
#include "core/workload/zoo_table.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace gpusage::workload::detail {

namespace {

std::string torchvision_source(const std::string& builder, const std::string& weights) {
  return "torchvision " + weights +
         " (num_params, GFLOPS), pytorch.org/vision/stable/models/generated/torchvision.models." + builder + ".html";
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

// Where a vision row's reference figures come from: torchvision's weights enum, or timm's CSV.
struct VisionSource {
  const char* torchvision_weights;  // nullptr for a timm row
  const char* timm_params_m;
  const char* timm_gmacs;
};

std::string source_text(const std::string& id, const VisionSource& s) {
  return s.torchvision_weights ? torchvision_source(id, s.torchvision_weights)
                               : timm_source(id, s.timm_params_m, s.timm_gmacs);
}

ZooModel vision_model(std::string id, std::string display, std::string description, std::int64_t params, double gflops,
                      std::string reference_source, ZooKind kind, std::string architecture) {
  return ZooModel{ZooEntry{std::move(id), std::move(display), Domain::vision, std::move(description), params, gflops,
                           std::move(reference_source)},
                  kind, std::move(architecture)};
}

// ---- ResNets (torchvision/models/resnet.py, v1.5: stride on the 3x3 conv) ----
struct ResNetRow {
  int depth;
  std::array<int, 4> blocks;
  std::int64_t params;
  double gflops;
};
constexpr std::array<ResNetRow, 5> kResNets{{
    {18, {2, 2, 2, 2}, 11'689'512, 1.81},
    {34, {3, 4, 6, 3}, 21'797'672, 3.66},
    {50, {3, 4, 6, 3}, 25'557'032, 4.09},
    {101, {3, 4, 23, 3}, 44'549'160, 7.80},
    {152, {3, 8, 36, 3}, 60'192'808, 11.51},
}};

ZooModel resnet(const ResNetRow& r) {
  const std::string depth = std::to_string(r.depth);
  const std::string id = "resnet" + depth;
  ZooModel m = vision_model(
      id, "ResNet-" + depth,
      r.depth < 50 ? "ResNet with basic blocks, ImageNet-1k classifier"
                   : "ResNet v1.5 with bottleneck blocks, ImageNet-1k classifier",
      r.params, r.gflops, torchvision_source(id, "ResNet" + depth + "_Weights.IMAGENET1K_V1"), ZooKind::resnet,
      "torchvision.models." + id + " (torchvision/models/resnet.py; v1.5: stride on the 3x3 conv)");
  m.resnet = ResNetSpec{r.depth >= 50, r.blocks};
  return m;
}

// Bottleneck ResNets that torchvision's ResNet class builds with other depths, groups or widths
// (wide_resnet*, resnext*), or that timm builds with its ResNet class (resnet26, resnet200: same
// stem, bottleneck and downsample as torchvision's).
struct ResNetVariantRow {
  const char* id;
  const char* display;
  const char* description;  // nullptr: "ResNet v1.5 with bottleneck blocks, ImageNet-1k classifier"
  std::int64_t params;
  double gflops;
  VisionSource source;
  ResNetSpec spec;
};
const std::array<ResNetVariantRow, 8> kResNetVariants{{
    {"resnet26", "ResNet-26", nullptr, 15'995'176, 2.36, {nullptr, "16.0", "2.36"}, {true, {2, 2, 2, 2}}},
    {"resnet200", "ResNet-200", nullptr, 64'673'832, 15.07, {nullptr, "64.67", "15.07"}, {true, {3, 24, 36, 3}}},
    {"wide_resnet50_2",
     "Wide ResNet-50-2",
     "Wide ResNet-50-2 (bottleneck width doubled), ImageNet-1k classifier",
     68'883'240,
     11.398,
     {"Wide_ResNet50_2_Weights.IMAGENET1K_V1", nullptr, nullptr},
     {true, {3, 4, 6, 3}, 1, 128}},
    {"wide_resnet101_2",
     "Wide ResNet-101-2",
     "Wide ResNet-101-2 (bottleneck width doubled), ImageNet-1k classifier",
     126'886'696,
     22.753,
     {"Wide_ResNet101_2_Weights.IMAGENET1K_V1", nullptr, nullptr},
     {true, {3, 4, 23, 3}, 1, 128}},
    {"resnext50_32x4d",
     "ResNeXt-50 32x4d",
     "ResNeXt-50, 32 groups of 4 channels, ImageNet-1k classifier",
     25'028'904,
     4.23,
     {"ResNeXt50_32X4D_Weights.IMAGENET1K_V1", nullptr, nullptr},
     {true, {3, 4, 6, 3}, 32, 4}},
    {"resnext101_32x4d",
     "ResNeXt-101 32x4d",
     "ResNeXt-101, 32 groups of 4 channels, ImageNet-1k classifier",
     44'177'704,
     8.01,
     {nullptr, "44.18", "8.01"},
     {true, {3, 4, 23, 3}, 32, 4}},
    {"resnext101_32x8d",
     "ResNeXt-101 32x8d",
     "ResNeXt-101, 32 groups of 8 channels, ImageNet-1k classifier",
     88'791'336,
     16.414,
     {"ResNeXt101_32X8D_Weights.IMAGENET1K_V1", nullptr, nullptr},
     {true, {3, 4, 23, 3}, 32, 8}},
    {"resnext101_64x4d",
     "ResNeXt-101 64x4d",
     "ResNeXt-101, 64 groups of 4 channels, ImageNet-1k classifier",
     83'455'272,
     15.46,
     {"ResNeXt101_64X4D_Weights.IMAGENET1K_V1", nullptr, nullptr},
     {true, {3, 4, 23, 3}, 64, 4}},
}};

ZooModel resnet_variant(const ResNetVariantRow& r) {
  const bool timm = r.source.torchvision_weights == nullptr;
  const std::string id = r.id;
  ZooModel m = vision_model(
      id, r.display, r.description ? r.description : "ResNet v1.5 with bottleneck blocks, ImageNet-1k classifier",
      r.params, r.gflops, source_text(id, r.source), ZooKind::resnet,
      timm ? "timm " + id + " (timm/models/resnet.py: torchvision's ResNet v1.5 layout)"
           : "torchvision.models." + id + " (torchvision/models/resnet.py)");
  m.resnet = r.spec;
  return m;
}

// torchvision's vgg11 ... vgg19_bn: cfg letter, convs per stage, batch norm, and the num_params and GFLOPS of
// VGG<depth>[_BN]_Weights.IMAGENET1K_V1.
struct VggRow {
  int depth;
  const char* cfg;
  std::array<int, 5> convs;
  bool batch_norm;
  std::int64_t params;
  double gflops;
};
constexpr VggRow kVgg16{16, "D", {2, 2, 3, 3, 3}, false, 138'357'544, 15.47};
constexpr std::array<VggRow, 7> kVggs{{
    {11, "A", {1, 1, 2, 2, 2}, false, 132'863'336, 7.609},
    {11, "A", {1, 1, 2, 2, 2}, true, 132'868'840, 7.609},
    {13, "B", {2, 2, 2, 2, 2}, false, 133'047'848, 11.308},
    {13, "B", {2, 2, 2, 2, 2}, true, 133'053'736, 11.308},
    {16, "D", {2, 2, 3, 3, 3}, true, 138'365'992, 15.47},
    {19, "E", {2, 2, 4, 4, 4}, false, 143'667'240, 19.632},
    {19, "E", {2, 2, 4, 4, 4}, true, 143'678'248, 19.632},
}};

ZooModel vgg_model(const VggRow& v) {
  const std::string depth = std::to_string(v.depth);
  const std::string id = "vgg" + depth + (v.batch_norm ? "_bn" : "");
  const std::string display = "VGG-" + depth + (v.batch_norm ? "-BN" : "");
  const std::string cfg = v.cfg;
  ZooModel m = vision_model(
      id, display,
      display + " (configuration " + cfg + (v.batch_norm ? ", batch norm" : ", no batch norm") +
          "), ImageNet-1k classifier",
      v.params, v.gflops,
      torchvision_source(id, "VGG" + depth + (v.batch_norm ? "_BN" : "") + "_Weights.IMAGENET1K_V1"), ZooKind::vgg,
      "torchvision.models." + id + " (torchvision/models/vgg.py, cfg '" + cfg +
          "', batch_norm=" + (v.batch_norm ? "True" : "False") + ")");
  m.vgg = VggSpec{v.convs, v.batch_norm};
  return m;
}

// ---- Vision Transformers: torchvision's VisionTransformer, or timm's with the same blocks ----
struct VitRow {
  const char* id;
  const char* display;
  std::int64_t params;
  double gflops;
  VitSpec spec;
  VisionSource source;
};
const std::array<VitRow, 2> kTorchvisionVits{{
    {"vit_b_16",
     "ViT-B/16",
     86'567'656,
     17.56,
     {16, 768, 3072, 12, 12},
     {"ViT_B_16_Weights.IMAGENET1K_V1", nullptr, nullptr}},
    {"vit_l_16",
     "ViT-L/16",
     304'326'632,
     61.55,
     {16, 1024, 4096, 24, 16},
     {"ViT_L_16_Weights.IMAGENET1K_V1", nullptr, nullptr}},
}};
// More torchvision and timm vision models, for the timm train benchmarks (data/validation/parts/timm.md).
const std::array<VitRow, 8> kMoreVits{{
    {"vit_tiny_patch16_224", "ViT-Ti/16", 5'717'416, 1.26, {16, 192, 768, 12, 3}, {nullptr, "5.72", "1.26"}},
    {"vit_small_patch16_224", "ViT-S/16", 22'050'664, 4.61, {16, 384, 1536, 12, 6}, {nullptr, "22.05", "4.61"}},
    {"vit_small_patch32_224", "ViT-S/32", 22'878'952, 1.15, {32, 384, 1536, 12, 6}, {nullptr, "22.88", "1.15"}},
    {"vit_b_32",
     "ViT-B/32",
     88'224'232,
     4.409,
     {32, 768, 3072, 12, 12},
     {"ViT_B_32_Weights.IMAGENET1K_V1", nullptr, nullptr}},
    {"vit_base_patch8_224", "ViT-B/8", 86'576'872, 78.22, {8, 768, 3072, 12, 12}, {nullptr, "86.58", "78.22"}},
    {"vit_large_patch14_224", "ViT-L/14", 304'203'752, 81.08, {14, 1024, 4096, 24, 16}, {nullptr, "304.2", "81.08"}},
    {"vit_l_32",
     "ViT-L/32",
     306'535'400,
     15.378,
     {32, 1024, 4096, 24, 16},
     {"ViT_L_32_Weights.IMAGENET1K_V1", nullptr, nullptr}},
    {"vit_h_14",
     "ViT-H/14",
     632'045'800,
     167.295,
     {14, 1280, 5120, 32, 16},
     {"ViT_H_14_Weights.IMAGENET1K_SWAG_LINEAR_V1 (224 px)", nullptr, nullptr}},
}};

ZooModel vit_model(const VitRow& v) {
  const bool timm = v.source.torchvision_weights == nullptr;
  const std::string id = v.id;
  const std::string patch = std::to_string(v.spec.patch);
  ZooModel m = vision_model(
      id, v.display, "Vision Transformer, " + patch + "x" + patch + " patches, ImageNet-1k classifier", v.params,
      v.gflops, source_text(id, v.source), ZooKind::vit,
      timm ? "timm " + id + " (timm/models/vision_transformer.py; the same blocks as torchvision's VisionTransformer)"
           : "torchvision.models." + id + " (torchvision/models/vision_transformer.py)");
  m.vit = v.spec;
  return m;
}

// ---- Language models: built from zoo_hf_config(id) (zoo_configs.cpp) ----
// How each reference parameter count was taken from the Hub checkpoint.
enum class ParamsNote { bert, gpt2, untied, tied };

const char* note_text(ParamsNote n) {
  switch (n) {
    case ParamsNote::bert:
      return "BertModel with pooler plus the MLM head (dense, LayerNorm, decoder bias; decoder weight tied "
             "to "
             "the word embeddings) and the NSP head; equals the Hub checkpoint's safetensors parameter total";
    case ParamsNote::gpt2: return "num_parameters() with lm_head tied to wte (attn.bias buffers are not parameters)";
    case ParamsNote::untied: return "num_parameters(), lm_head untied";
    case ParamsNote::tied: return "num_parameters(), lm_head tied to the embeddings";
  }
  return "";
}

struct LanguageRow {
  const char* id;
  const char* display;
  const char* description;
  std::int64_t params;
  const char* hf_class;  // the transformers class that counts the parameters, e.g. "LlamaForCausalLM"
  const char* module;    // transformers/models/<module>/modeling_<module>.py
  const char* repo;      // the Hub checkpoint whose config.json zoo_configs.cpp holds
  ParamsNote note;
};
// The models people fine-tune most on one or a few GPUs (issue 27), after BERT and GPT-2. Parameter totals:
// the Hub checkpoints' safetensors totals, as each model card's "Model size" reports them.
const std::array<LanguageRow, 24> kLanguageModels{{
    {"bert-base", "BERT-base (uncased)", "BERT-base pre-training (MLM + NSP heads)", 110'106'428, "BertForPreTraining",
     "bert", "google-bert/bert-base-uncased", ParamsNote::bert},
    {"bert-large", "BERT-large (uncased)", "BERT-large pre-training (MLM + NSP heads)", 336'226'108,
     "BertForPreTraining", "bert", "google-bert/bert-large-uncased", ParamsNote::bert},
    {"gpt2", "GPT-2", "GPT-2 small, causal LM", 124'439'808, "GPT2LMHeadModel", "gpt2", "openai-community/gpt2",
     ParamsNote::gpt2},
    {"gpt2-medium", "GPT-2 Medium", "GPT-2 medium, causal LM", 354'823'168, "GPT2LMHeadModel", "gpt2",
     "openai-community/gpt2-medium", ParamsNote::gpt2},
    {"gpt2-large", "GPT-2 Large", "GPT-2 large, causal LM", 774'030'080, "GPT2LMHeadModel", "gpt2",
     "openai-community/gpt2-large", ParamsNote::gpt2},
    {"gpt2-xl", "GPT-2 XL", "GPT-2 XL, causal LM", 1'557'611'200, "GPT2LMHeadModel", "gpt2", "openai-community/gpt2-xl",
     ParamsNote::gpt2},
    {"llama2-7b", "Llama 2 7B", "Llama 2 7B, causal LM", 6'738'415'616, "LlamaForCausalLM", "llama",
     "meta-llama/Llama-2-7b-hf", ParamsNote::untied},
    {"llama2-13b", "Llama 2 13B", "Llama 2 13B, causal LM", 13'015'864'320, "LlamaForCausalLM", "llama",
     "meta-llama/Llama-2-13b-hf", ParamsNote::untied},
    {"llama3-8b", "Llama 3 8B", "Llama 3 8B, causal LM, GQA with 8 KV heads", 8'030'261'248, "LlamaForCausalLM",
     "llama", "meta-llama/Meta-Llama-3-8B", ParamsNote::untied},
    {"mistral-7b", "Mistral 7B v0.1", "Mistral 7B v0.1, causal LM, GQA with 8 KV heads, 4096-token sliding window",
     7'241'732'096, "MistralForCausalLM", "mistral", "mistralai/Mistral-7B-v0.1", ParamsNote::untied},
    {"llama3.1-8b", "Llama 3.1 8B", "Llama 3.1 8B, causal LM, GQA with 8 KV heads", 8'030'261'248, "LlamaForCausalLM",
     "llama", "meta-llama/Llama-3.1-8B", ParamsNote::untied},
    {"llama3.2-1b", "Llama 3.2 1B", "Llama 3.2 1B, causal LM, GQA, tied embeddings", 1'235'814'400, "LlamaForCausalLM",
     "llama", "meta-llama/Llama-3.2-1B", ParamsNote::tied},
    {"llama3.2-3b", "Llama 3.2 3B", "Llama 3.2 3B, causal LM, GQA, tied embeddings", 3'212'749'824, "LlamaForCausalLM",
     "llama", "meta-llama/Llama-3.2-3B", ParamsNote::tied},
    {"qwen2.5-7b", "Qwen2.5 7B", "Qwen2.5 7B, causal LM, GQA with 4 KV heads, 152k vocabulary", 7'615'616'512,
     "Qwen2ForCausalLM", "qwen2", "Qwen/Qwen2.5-7B", ParamsNote::untied},
    {"qwen2.5-14b", "Qwen2.5 14B", "Qwen2.5 14B, causal LM, GQA with 8 KV heads, 152k vocabulary", 14'770'033'664,
     "Qwen2ForCausalLM", "qwen2", "Qwen/Qwen2.5-14B", ParamsNote::untied},
    {"mistral-7b-v0.3", "Mistral 7B v0.3", "Mistral 7B v0.3, causal LM, GQA with 8 KV heads, full attention",
     7'248'023'552, "MistralForCausalLM", "mistral", "mistralai/Mistral-7B-v0.3", ParamsNote::untied},
    {"qwen3-8b", "Qwen3 8B", "Qwen3 8B, causal LM, GQA with 8 KV heads, q/k norms, 152k vocabulary", 8'190'735'360,
     "Qwen3ForCausalLM", "qwen3", "Qwen/Qwen3-8B", ParamsNote::untied},
    {"gemma2-2b", "Gemma 2 2B", "Gemma 2 2B, causal LM, GeGLU, local/global layers, 256k vocabulary, tied",
     2'614'341'888, "Gemma2ForCausalLM", "gemma2", "google/gemma-2-2b", ParamsNote::tied},
    {"gemma2-9b", "Gemma 2 9B", "Gemma 2 9B, causal LM, GeGLU, local/global layers, 256k vocabulary, tied",
     9'241'705'984, "Gemma2ForCausalLM", "gemma2", "google/gemma-2-9b", ParamsNote::tied},
    {"phi3-mini", "Phi-3 mini 4k", "Phi-3-mini-4k-instruct, causal LM, fused qkv and gate/up projections",
     3'821'079'552, "Phi3ForCausalLM", "phi3", "microsoft/Phi-3-mini-4k-instruct", ParamsNote::untied},
    {"tinyllama-1.1b", "TinyLlama 1.1B", "TinyLlama 1.1B Chat v1.0, causal LM, GQA with 4 KV heads", 1'100'048'384,
     "LlamaForCausalLM", "llama", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", ParamsNote::untied},
    {"qwen2.5-0.5b", "Qwen2.5 0.5B", "Qwen2.5 0.5B, causal LM, GQA with 2 KV heads, tied embeddings", 494'032'768,
     "Qwen2ForCausalLM", "qwen2", "Qwen/Qwen2.5-0.5B", ParamsNote::tied},
    {"qwen2.5-1.5b", "Qwen2.5 1.5B", "Qwen2.5 1.5B, causal LM, GQA with 2 KV heads, tied embeddings", 1'543'714'304,
     "Qwen2ForCausalLM", "qwen2", "Qwen/Qwen2.5-1.5B", ParamsNote::tied},
    {"qwen2.5-3b", "Qwen2.5 3B", "Qwen2.5 3B, causal LM, GQA with 2 KV heads, tied embeddings", 3'085'938'688,
     "Qwen2ForCausalLM", "qwen2", "Qwen/Qwen2.5-3B", ParamsNote::tied},
}};

ZooModel language_model(const LanguageRow& r) {
  const std::string cls = r.hf_class, module = r.module;
  return ZooModel{ZooEntry{r.id, r.display, Domain::language, r.description, r.params, std::nullopt,
                           "Hugging Face " + cls + " built from huggingface.co/" + r.repo +
                               "/blob/main/config.json: " + note_text(r.note)},
                  ZooKind::transformer,
                  "Hugging Face " + cls + " (transformers/models/" + module + "/modeling_" + module + ".py)"};
}

}  // namespace

const std::vector<ZooModel>& zoo_models() {
  static const std::vector<ZooModel> all = [] {
    std::vector<ZooModel> m;
    for (const ResNetRow& r : kResNets) m.push_back(resnet(r));
    m.push_back(vgg_model(kVgg16));
    m.push_back(vision_model("mobilenet_v2", "MobileNetV2", "MobileNetV2 width 1.0, ImageNet-1k classifier", 3'504'872,
                             0.30, torchvision_source("mobilenet_v2", "MobileNet_V2_Weights.IMAGENET1K_V1"),
                             ZooKind::mobilenet_v2,
                             "torchvision.models.mobilenet_v2 (torchvision/models/mobilenetv2.py)"));
    m.push_back(vision_model("efficientnet_b0", "EfficientNet-B0", "EfficientNet-B0, ImageNet-1k classifier", 5'288'548,
                             0.39, torchvision_source("efficientnet_b0", "EfficientNet_B0_Weights.IMAGENET1K_V1"),
                             ZooKind::efficientnet_b0,
                             "torchvision.models.efficientnet_b0 (torchvision/models/efficientnet.py)"));
    for (const VitRow& v : kTorchvisionVits) m.push_back(vit_model(v));
    for (const ResNetVariantRow& r : kResNetVariants) m.push_back(resnet_variant(r));
    for (const VggRow& v : kVggs) m.push_back(vgg_model(v));
    for (const VitRow& v : kMoreVits) m.push_back(vit_model(v));
    for (const LanguageRow& r : kLanguageModels) m.push_back(language_model(r));
    return m;
  }();
  return all;
}

}  // namespace gpusage::workload::detail
