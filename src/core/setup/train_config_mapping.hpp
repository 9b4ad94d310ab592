// Internal to --train-config's mapping (train_config.cpp, train_config_formats.cpp): the mapping as it is
// built, and the handlers of one field each.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/setup/train_config.hpp"

namespace gpusage::setup::detail {

std::string shown(const ConfigField& f);  // "lora_r: 32", "lora_target_modules: [q_proj, v_proj]"
bool truthy(const std::string& text);     // true, yes, 1, on (any case)
bool falsy(const std::string& text);      // false, no, 0, off

// The mapping as it is built: the layer, and the fields whose meaning needs another field (precision, torchtune's
// LoRA targets) kept for finish_mapping.
struct Mapping {
  ConfigLayer layer;
  std::map<std::string, ConfigField> deferred;
  std::filesystem::path directory;  // the config's folder: a DeepSpeed JSON it names is looked for there too

  void set(const ConfigField& f, std::vector<OptionValue> options, std::string note = {});
  void note(const ConfigField& f, std::string note);
  void unmodelled(const ConfigField& f, std::string why);
};

using Handler = std::function<void(const ConfigField&, Mapping&)>;

void map_optimizer(const ConfigField& f, Mapping& m);  // a Hugging Face optim name or a torchtune component
// The fields of transformers' TrainingArguments (and TRL's SFTConfig) that change memory or speed.
std::map<std::string, Handler> trainer_handlers();
// A format's own fields, over the Trainer's (train_config_formats.cpp).
std::map<std::string, Handler> format_handlers(const std::string& format);
// The deferred fields: precision from bf16/fp16/tf32/pure_bf16/dtype, torchtune's LoRA targets.
void finish_mapping(Mapping& m);

}  // namespace gpusage::setup::detail
