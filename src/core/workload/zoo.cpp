// The model zoo: ids, reference figures with their sources, option checks, and build().
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/workload/models.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::workload {

namespace {

enum class Kind { resnet, vgg16, mobilenet_v2, efficientnet_b0, vit, transformer };

struct ZooModel {
  ZooEntry entry;
  Kind kind;
  std::string architecture_source;
  int resnet_depth = 0;
  detail::VitSpec vit{};
};

std::string torchvision_source(const std::string& builder, const std::string& weights) {
  return "torchvision " + weights +
         " (num_params, GFLOPS), pytorch.org/vision/stable/models/generated/torchvision.models." + builder +
         ".html";
}

ZooModel vision_model(std::string id, std::string display, std::string description, std::int64_t params,
                      double gflops, const std::string& weights, Kind kind, std::string source) {
  ZooModel m{ZooEntry{id, std::move(display), Domain::vision, std::move(description), params, gflops,
                      torchvision_source(id, weights)},
             kind, std::move(source)};
  return m;
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
      params, gflops, "ResNet" + std::to_string(depth) + "_Weights.IMAGENET1K_V1", Kind::resnet,
      "torchvision.models." + id + " (torchvision/models/resnet.py; v1.5: stride on the 3x3 conv)");
  m.resnet_depth = depth;
  return m;
}

ZooModel vit_model(const std::string& id, const std::string& display, std::int64_t params, double gflops,
                   const detail::VitSpec& spec, const std::string& weights) {
  ZooModel m = vision_model(id, display, "Vision Transformer, 16x16 patches, ImageNet-1k classifier", params,
                            gflops, weights, Kind::vit,
                            "torchvision.models." + id + " (torchvision/models/vision_transformer.py)");
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
    m.push_back(
        vision_model("vgg16", "VGG-16", "VGG-16 (configuration D, no batch norm), ImageNet-1k classifier",
                     138'357'544, 15.47, "VGG16_Weights.IMAGENET1K_V1", Kind::vgg16,
                     "torchvision.models.vgg16 (torchvision/models/vgg.py, cfg 'D', batch_norm=False)"));
    m.push_back(vision_model("mobilenet_v2", "MobileNetV2", "MobileNetV2 width 1.0, ImageNet-1k classifier",
                             3'504'872, 0.30, "MobileNet_V2_Weights.IMAGENET1K_V1", Kind::mobilenet_v2,
                             "torchvision.models.mobilenet_v2 (torchvision/models/mobilenetv2.py)"));
    m.push_back(vision_model("efficientnet_b0", "EfficientNet-B0", "EfficientNet-B0, ImageNet-1k classifier",
                             5'288'548, 0.39, "EfficientNet_B0_Weights.IMAGENET1K_V1", Kind::efficientnet_b0,
                             "torchvision.models.efficientnet_b0 (torchvision/models/efficientnet.py)"));
    m.push_back(vit_model("vit_b_16", "ViT-B/16", 86'567'656, 17.56, detail::VitSpec{16, 768, 3072, 12, 12},
                          "ViT_B_16_Weights.IMAGENET1K_V1"));
    m.push_back(vit_model("vit_l_16", "ViT-L/16", 304'326'632, 61.55, detail::VitSpec{16, 1024, 4096, 24, 16},
                          "ViT_L_16_Weights.IMAGENET1K_V1"));
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

const char* hf_class(detail::Family f) {
  switch (f) {
    case detail::Family::llama:
      return "LlamaForCausalLM";
    case detail::Family::mistral:
      return "MistralForCausalLM";
    case detail::Family::qwen2:
      return "Qwen2ForCausalLM";
    case detail::Family::gpt2:
      return "GPT2LMHeadModel";
    case detail::Family::bert:
      return "BertForPreTraining";
  }
  return "?";
}

Workload language_workload(const std::string& id, const detail::TransformerConfig& c,
                           const WorkloadOptions& o) {
  Workload w;
  w.id = id;
  w.domain = Domain::language;
  w.seq_len = language_seq_len(id, c, o);
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
        w.layers = detail::resnet(m.resnet_depth, shape);
        break;
      case Kind::vgg16:
        w.layers = detail::vgg16(shape);
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
  w.architecture_source = std::string("Hugging Face ") + hf_class(c.family) + " from config.json";
  return w;
}

}  // namespace gpusage::workload
