// The layers under the command line that fill a training setup's options: a fine-tuning framework's defaults
// (--recipe, recipes.hpp) and a framework's config file (--train-config, train_config.hpp). Each layer is a
// list of gpusage options with their values and where each came from; the binder (cli/setup_layers) applies
// them, in the order command line > --train-config > --recipe > gpusage's defaults, through the same options
// the command line sets, and records here what each one became. Pure: no CLI11.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpusage::setup {

// One gpusage option and its value: {"--lora", "32"}; a flag's value is "true" or "false".
struct OptionValue {
  std::string option;
  std::string value;
  std::string flag() const;  // "--lora 32", "--qlora", "--no-kbit-upcast false"
  bool operator==(const OptionValue&) const = default;
};

// What one source said and what it became.
struct LayerEntry {
  std::string field;                 // a config's "lora_r: 32", or a recipe default's option
  std::vector<OptionValue> options;  // what it set (empty: no option: see note)
  std::string note;                  // a recipe default's citation; why a config field changes nothing
  std::vector<std::string> kept;     // of options, those the command line (or the config) gave: they win
};

struct RecipeLayer {
  std::string name;       // "unsloth"
  std::string framework;  // "Unsloth"
  std::string version;    // the release and commit the defaults were read from
  std::string method;     // full, lora or qlora: the method whose defaults applied
  bool implied = false;   // chosen by --train-config's format, not named by --recipe
  std::vector<LayerEntry> defaults;
};

struct ConfigLayer {
  std::string path;
  std::string format;                  // "axolotl", "llamafactory", "torchtune", "hf-trainer", "trainer-state"
  std::vector<LayerEntry> mapped;      // fields that set options, or that gpusage reads without an option
  std::vector<LayerEntry> unmodelled;  // fields that change memory or speed in a way gpusage does not model
  std::vector<std::string> ignored;    // fields with no effect on memory or speed (logging, data paths, ...)
};

struct SetupLayers {
  std::vector<RecipeLayer> recipe;  // zero or one
  std::vector<ConfigLayer> config;  // zero or one
  bool empty() const { return recipe.empty() && config.empty(); }
  // plan's text lines: "recipe: ...", "config: lora_r: 32 → --lora 32", "config: ignored: ...".
  std::vector<std::string> text_lines() const;
  nlohmann::json to_json() const;
};

}  // namespace gpusage::setup
