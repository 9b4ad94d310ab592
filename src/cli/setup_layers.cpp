#include "cli/setup_layers.hpp"

#include <set>

#include "cli/setup_binder.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/setup/recipes.hpp"
#include "core/setup/train_config.hpp"

namespace gpusage::cli {

using i18n::trf;

namespace {

struct LayerState {
  std::string recipe;
  std::string train_config;
  setup::SetupLayers layers;
};

// The options the command line gave (by every name each has), before any layer is applied.
std::set<std::string> given_options(const CLI::App& command, const setup::TrainingSetup& s) {
  std::set<std::string> given;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() == 0) continue;
    for (const std::string& name : option->get_lnames()) given.insert("--" + name);
  }
  // The model named as the first word, or through --hf-config or --workload, is given too.
  if (model_given(command) || !s.hf_config.empty() || !s.workload_file.empty()) given.insert("--model");
  return given;
}

// Sets one option as if the command line had given it, through CLI11 (its checks and transforms run).
// False when the command has no such option.
bool apply(CLI::App& command, const setup::OptionValue& value, const std::string& origin) {
  CLI::Option* option = command.get_option_no_throw(value.option);
  if (option == nullptr) return false;
  if (value.option != "--offload") option->clear();  // --offload collects; the others take the last value
  try {
    option->add_result(value.value);
    option->run_callback();
  } catch (const CLI::Error& e) {
    throw InputError(trf("{} → {}: {}", origin, value.flag(), e.what()));
  }
  return true;
}

// Applies one layer's entries: an option the command line gave (or, for a recipe, the config set) is kept.
void apply_entries(CLI::App& command, std::vector<setup::LayerEntry>& entries, const std::set<std::string>& kept,
                   std::set<std::string>& applied, const std::string& origin) {
  for (setup::LayerEntry& entry : entries) {
    std::vector<setup::OptionValue> taken;
    for (const setup::OptionValue& value : entry.options) {
      if (kept.count(value.option)) {
        entry.kept.push_back(value.option);
        taken.push_back(value);
      } else if (apply(command, value, fmt::format("{} {}", origin, entry.field))) {
        applied.insert(value.option);
        taken.push_back(value);
      }
    }
    entry.options = taken;
  }
}

void apply_layers(CLI::App& command, LayerState& state, setup::TrainingSetup& s) {
  const std::set<std::string> given = given_options(command, s);
  std::set<std::string> from_config;
  std::string recipe_name = state.recipe;
  bool implied = false;
  if (!state.train_config.empty()) {
    setup::ConfigLayer config = setup::read_train_config(state.train_config);
    apply_entries(command, config.mapped, given, from_config, "--train-config");
    if (recipe_name.empty()) {
      recipe_name = setup::recipe_of_format(config.format);
      implied = !recipe_name.empty();
    }
    state.layers.config.push_back(std::move(config));
  }
  if (recipe_name.empty()) return;
  const setup::Recipe& recipe = setup::find_recipe(recipe_name);
  setup::RecipeLayer layer{
      recipe.name, recipe.framework, recipe.version, s.qlora ? "qlora" : (s.lora ? "lora" : "full"), implied, {}};
  for (const setup::RecipeDefault& d : setup::recipe_defaults(recipe, layer.method)) {
    layer.defaults.push_back(setup::LayerEntry{d.option.option, {d.option}, d.source, {}});
  }
  std::set<std::string> kept = given;
  kept.insert(from_config.begin(), from_config.end());
  // An optimizer given brings its own step: the recipe's implementation belongs to the recipe's optimizer.
  if (kept.count("--optimizer")) kept.insert("--optimizer-impl");
  std::set<std::string> applied;
  apply_entries(command, layer.defaults, kept, applied, "--recipe " + recipe.name);
  state.layers.recipe.push_back(std::move(layer));
}

}  // namespace

std::shared_ptr<const setup::SetupLayers> bind_setup_layers(CLI::App& command, setup::TrainingSetup& s) {
  auto state = std::make_shared<LayerState>();
  command.add_option("--recipe", state->recipe,
                     i18n::trf("A fine-tuning framework's own defaults for the method asked (full, --lora, "
                               "--qlora): {}. Each is cited to the framework's file and release (data/"
                               "recipes.toml) and printed as a 'recipe:' line; options you give win. "
                               "E.g. gpusage plan llama3.1-8b --qlora --recipe unsloth --gpu rtx4090 "
                               "--seq-len 2048",
                               setup::recipe_names()));
  command.add_option(
      "--train-config", state->train_config,
      i18n::N_("Read the training setup from a framework's config file: an axolotl, LLaMA-Factory or "
               "torchtune YAML, or a Hugging Face TrainingArguments / trainer_state JSON (told by its keys). "
               "Each field that changes memory or speed becomes a gpusage option, printed as 'config: "
               "lora_r: 32 → --lora 32'; the rest is listed as ignored. Options you give win over the file, "
               "the file over --recipe (an axolotl, LLaMA-Factory or torchtune file implies that recipe). "
               "E.g. gpusage plan --train-config qlora.yml --gpu rtx4090"));
  command.parse_complete_callback([&command, state, &s] { apply_layers(command, *state, s); });
  return std::shared_ptr<const setup::SetupLayers>(state, &state->layers);  // shares the state's lifetime
}

}  // namespace gpusage::cli
