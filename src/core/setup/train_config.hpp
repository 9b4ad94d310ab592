// A fine-tuning framework's own config file as gpusage options (--train-config): an axolotl YAML, a
// LLaMA-Factory YAML, a torchtune YAML, a Hugging Face TrainingArguments JSON or a trainer_state.json. The
// format is told by the file's keys; every field that changes memory or speed becomes gpusage options (the
// binder applies them under the command line's), and the rest is listed as ignored.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/setup/layers.hpp"

namespace gpusage::setup {

// One field of a config file: nested maps flattened to dotted keys ("model.lora_rank"), in the file's order.
struct ConfigField {
  std::string key;
  std::string text;               // a scalar as written; "" for null
  std::vector<std::string> list;  // a sequence's scalars (a sequence of maps: empty, is_list set)
  bool is_list = false;
  bool is_null = false;
};

// The fields of a YAML (yaml-cpp) or JSON file (nlohmann, for .json or a file that starts with '{').
// Throws InputError "--train-config: 'PATH': what is wrong" when it cannot be read or parsed, or holds no map.
std::vector<ConfigField> read_config_fields(const std::string& path);

// "axolotl", "llamafactory", "torchtune", "hf-trainer" or "trainer-state", from the fields' keys; throws
// InputError naming the file and the formats accepted when none fits.
std::string detect_config_format(const std::vector<ConfigField>& fields, const std::string& path);

// The file read, its format told and every field mapped: ConfigLayer::mapped holds the options to apply.
ConfigLayer read_train_config(const std::string& path);

// The recipe a config format implies ("axolotl" for an axolotl YAML); empty for the Trainer's JSON files.
std::string recipe_of_format(const std::string& format);

// What a list of module names adapts: "attn", "mlp" or "all" (q/k/v/o and gate/up/down, in their
// Llama, torchtune, GPT-NeoX and Phi spellings); "all-linear" and "all" are all. Empty if none is known.
std::string lora_targets_of(const std::vector<std::string>& modules);

}  // namespace gpusage::setup
