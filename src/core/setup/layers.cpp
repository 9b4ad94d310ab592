#include "core/setup/layers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/i18n.hpp"

namespace gpusage::setup {

using i18n::tr;
using i18n::trf;

namespace {

std::string join_flags(const std::vector<OptionValue>& options) {
  std::vector<std::string> flags;
  for (const OptionValue& o : options) flags.push_back(o.flag());
  return fmt::format("{}", fmt::join(flags, " "));
}

// The file a recipe default was read from: its source up to the first comma or colon.
std::string source_file(const std::string& source) {
  const std::size_t end = source.find_first_of(",:(");
  std::string file = source.substr(0, end);
  while (!file.empty() && file.back() == ' ') file.pop_back();
  return file;
}

bool is_kept(const LayerEntry& e, const OptionValue& o) {
  return std::find(e.kept.begin(), e.kept.end(), o.option) != e.kept.end();
}

std::string recipe_line(const RecipeLayer& r) {
  std::vector<std::string> set, kept;
  for (const LayerEntry& e : r.defaults) {
    for (const OptionValue& o : e.options) {
      if (is_kept(e, o)) {
        kept.push_back(o.option);
      } else {
        set.push_back(fmt::format("{} [{}]", o.flag(), source_file(e.note)));
      }
    }
  }
  std::string line = trf("recipe: {} {}, {} defaults{}: {}", r.name, r.version, r.method,
                         r.implied ? tr(", from the config's format") : std::string(),
                         set.empty() ? tr("nothing left to set") : fmt::format("{}", fmt::join(set, ", ")));
  if (!kept.empty()) line += trf("; kept as given (command line or config): {}", fmt::join(kept, ", "));
  return line;
}

std::string mapped_line(const LayerEntry& e) {
  if (e.options.empty()) return trf("config: {} → {}", e.field, e.note);
  std::string line = trf("config: {} → {}", e.field, join_flags(e.options));
  if (!e.kept.empty()) line += trf(" (the command line's {} wins)", fmt::join(e.kept, ", "));
  if (!e.note.empty()) line += fmt::format(" ({})", e.note);
  return line;
}

nlohmann::json entry_json(const LayerEntry& e) {
  nlohmann::json j;
  j["field"] = e.field;
  j["options"] = nlohmann::json::array();
  for (const OptionValue& o : e.options) {
    j["options"].push_back({{"option", o.option}, {"value", o.value}, {"applied", !is_kept(e, o)}});
  }
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

}  // namespace

std::string OptionValue::flag() const {
  if (value == "true") return option;
  return fmt::format("{} {}", option, value);
}

std::vector<std::string> SetupLayers::text_lines() const {
  std::vector<std::string> lines;
  for (const ConfigLayer& c : config) {
    lines.push_back(trf("config: {} read as {}", c.path, c.format));
    for (const LayerEntry& e : c.mapped) lines.push_back(mapped_line(e));
    for (const LayerEntry& e : c.unmodelled) lines.push_back(trf("config: not modelled: {} ({})", e.field, e.note));
    if (!c.ignored.empty()) {
      lines.push_back(trf("config: ignored (no effect on memory or speed): {}", fmt::join(c.ignored, ", ")));
    }
  }
  for (const RecipeLayer& r : recipe) lines.push_back(recipe_line(r));
  return lines;
}

nlohmann::json SetupLayers::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const RecipeLayer& r : recipe) {
    nlohmann::json j{{"name", r.name},     {"framework", r.framework}, {"version", r.version},
                     {"method", r.method}, {"implied", r.implied},     {"defaults", nlohmann::json::array()}};
    for (const LayerEntry& e : r.defaults) {
      nlohmann::json d = entry_json(e);
      d["source"] = d["note"];
      d.erase("note");
      j["defaults"].push_back(d);
    }
    out["recipe"] = j;
  }
  for (const ConfigLayer& c : config) {
    nlohmann::json j{{"path", c.path},
                     {"format", c.format},
                     {"mapped", nlohmann::json::array()},
                     {"not_modelled", nlohmann::json::array()},
                     {"ignored", c.ignored}};
    for (const LayerEntry& e : c.mapped) j["mapped"].push_back(entry_json(e));
    for (const LayerEntry& e : c.unmodelled) j["not_modelled"].push_back(entry_json(e));
    out["train_config"] = j;
  }
  return out;
}

}  // namespace gpusage::setup
