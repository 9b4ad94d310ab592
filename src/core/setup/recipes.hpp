// The fine-tuning frameworks' defaults (--recipe): data/recipes.toml, compiled in, one [[recipe]] per framework
// with each default's gpusage option, value, methods and the framework file it was read from.
#pragma once

#include <string>
#include <vector>

#include "core/setup/layers.hpp"

namespace gpusage::setup {

struct RecipeDefault {
  OptionValue option;
  std::vector<std::string> methods;  // full, lora, qlora
  std::string source;
};

struct Recipe {
  std::string name;
  std::string framework;
  std::string version;
  std::vector<RecipeDefault> defaults;
};

// The built-in recipes, in data/recipes.toml's order. Throws std::runtime_error if the table is malformed.
const std::vector<Recipe>& recipes();
// "unsloth, trl, torchtune, ...", for --help and errors.
std::string recipe_names();
// The recipe called `name` (case-insensitive; "llama-factory", "swift" and "sfttrainer" are accepted too).
// Throws InputError naming the value, the accepted names and the nearest.
const Recipe& find_recipe(const std::string& name);
// The defaults of `recipe` for `method` (full, lora or qlora), in the table's order.
std::vector<RecipeDefault> recipe_defaults(const Recipe& recipe, const std::string& method);

}  // namespace gpusage::setup
