// The models gpusage-bench can train, described without LibTorch so that option parsing, the CLI and the
// tests can reason about them. The ids are the `plan` zoo's ids (core/workload).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpusage::bench {

enum class ModelFamily { resnet, mobilenet, vit, gpt2 };

struct ModelInfo {
  std::string id;
  ModelFamily family;
  int depth = 0;  // resnet depth, or transformer layers
  int width = 0;  // transformer hidden size
  int heads = 0;  // transformer attention heads
  bool language() const { return family == ModelFamily::gpt2; }
  bool convolutional() const { return family == ModelFamily::resnet || family == ModelFamily::mobilenet; }
  // Trainable parameters at the default shape (224 px, 1000 classes; GPT-2 with 1024 positions) as the
  // reference implementation counts them: torchvision 0.14 / Hugging Face transformers.
  std::int64_t reference_params = 0;
};

const std::vector<ModelInfo>& models();
// Throws InputError listing the accepted ids when `id` is unknown.
const ModelInfo& model_info(const std::string& id);
std::string model_ids_text();  // "resnet18, resnet34, …"

}  // namespace gpusage::bench
