#include "bench/model_catalog.hpp"

#include "core/common/error.hpp"

namespace gpusage::bench {

const std::vector<ModelInfo>& models() {
  // Reference counts: sum(p.numel() for p in torchvision.models.<id>().parameters()) with torchvision 0.14,
  // and GPT2LMHeadModel(GPT2Config.from_pretrained(id)) with tied embeddings.
  static const std::vector<ModelInfo> list{
      {"resnet18", ModelFamily::resnet, 18, 0, 0, 11'689'512},
      {"resnet34", ModelFamily::resnet, 34, 0, 0, 21'797'672},
      {"resnet50", ModelFamily::resnet, 50, 0, 0, 25'557'032},
      {"resnet101", ModelFamily::resnet, 101, 0, 0, 44'549'160},
      {"resnet152", ModelFamily::resnet, 152, 0, 0, 60'192'808},
      {"mobilenet_v2", ModelFamily::mobilenet, 0, 0, 0, 3'504'872},
      {"vit_b_16", ModelFamily::vit, 12, 768, 12, 86'567'656},
      {"gpt2", ModelFamily::gpt2, 12, 768, 12, 124'439'808},
      {"gpt2-medium", ModelFamily::gpt2, 24, 1024, 16, 354'823'168},
      {"gpt2-large", ModelFamily::gpt2, 36, 1280, 20, 774'030'080},
      {"gpt2-xl", ModelFamily::gpt2, 48, 1600, 25, 1'557'611'200},
  };
  return list;
}

std::string model_ids_text() {
  std::string text;
  for (const auto& m : models()) text += (text.empty() ? "" : ", ") + m.id;
  return text;
}

const ModelInfo& model_info(const std::string& id) {
  for (const auto& m : models())
    if (m.id == id) return m;
  throw InputError("unknown model '" + id + "'; gpusage bench trains: " + model_ids_text());
}

}  // namespace gpusage::bench
