#include "core/setup/recipes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/common/toml_data.hpp"

namespace gpusage::setup {

extern const char* const kBuiltinRecipes;  // generated from data/recipes.toml

using i18n::trf;
using text::closest;
using text::to_lower;
using text::trim;

namespace {

constexpr const char* kOrigin = "data/recipes.toml (built in)";

std::string string_field(const toml::table& table, std::string_view key, const std::string& what) {
  const auto value = table[key].value<std::string>();
  if (!value || value->empty()) throw std::runtime_error(fmt::format("{}: {}: no '{}'", kOrigin, what, key));
  return *value;
}

RecipeDefault read_default(const toml::table& table, const std::string& what) {
  RecipeDefault d;
  d.option.option = string_field(table, "option", what);
  d.option.value = string_field(table, "value", what);
  d.source = string_field(table, "source", what);
  if (const toml::array* methods = table.get_as<toml::array>("methods")) {
    for (const toml::node& m : *methods) d.methods.push_back(m.value_or(std::string()));
  } else {
    d.methods = {"full", "lora", "qlora"};
  }
  return d;
}

std::vector<Recipe> load() {
  const toml::table root = toml_data::parse(kBuiltinRecipes, kOrigin);
  std::vector<Recipe> out;
  const toml::array* list = root.get_as<toml::array>("recipe");
  if (list == nullptr) throw std::runtime_error(fmt::format("{}: no [[recipe]]", kOrigin));
  for (const toml::node& node : *list) {
    const toml::table* table = node.as_table();
    if (table == nullptr) throw std::runtime_error(fmt::format("{}: a [[recipe]] is not a table", kOrigin));
    Recipe r;
    r.name = string_field(*table, "name", "[[recipe]]");
    r.framework = string_field(*table, "framework", r.name);
    r.version = string_field(*table, "version", r.name);
    if (const toml::array* defaults = table->get_as<toml::array>("default")) {
      for (const toml::node& d : *defaults) {
        if (const toml::table* t = d.as_table()) r.defaults.push_back(read_default(*t, r.name));
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> table = load();
  return table;
}

std::string recipe_names() {
  std::vector<std::string> names;
  for (const Recipe& r : recipes()) names.push_back(r.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

const Recipe& find_recipe(const std::string& name) {
  // The names people also use for these frameworks.
  static const std::vector<std::pair<std::string, std::string>> kAliases = {{"llama-factory", "llamafactory"},
                                                                            {"llama_factory", "llamafactory"},
                                                                            {"swift", "ms-swift"},
                                                                            {"ms_swift", "ms-swift"},
                                                                            {"sfttrainer", "trl"},
                                                                            {"hf", "trl"},
                                                                            {"transformers", "trl"},
                                                                            {"lit-gpt", "litgpt"}};
  std::string wanted = to_lower(trim(name));
  for (const auto& [alias, target] : kAliases) {
    if (wanted == alias) wanted = target;
  }
  std::vector<std::string> names;
  for (const Recipe& r : recipes()) {
    if (r.name == wanted) return r;
    names.push_back(r.name);
  }
  const std::vector<std::string> near = closest(wanted, names, 1);
  throw InputError(trf("--recipe: unknown recipe '{}'{}; accepted: {}", name,
                       near.empty() ? std::string() : trf(" (did you mean '{}'?)", near.front()), recipe_names()));
}

std::vector<RecipeDefault> recipe_defaults(const Recipe& recipe, const std::string& method) {
  std::vector<RecipeDefault> out;
  for (const RecipeDefault& d : recipe.defaults) {
    if (std::find(d.methods.begin(), d.methods.end(), method) != d.methods.end()) out.push_back(d);
  }
  return out;
}

}  // namespace gpusage::setup
