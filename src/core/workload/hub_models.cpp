// The built-in table of Hugging Face Hub models: data/models/*.toml, compiled in (src/core/CMakeLists.txt).
// Each entry's [model.config_json] holds config.json fields under config.json's own names, so the entry
// becomes a config.json text and goes through parse_hf_config like a file the user gives.
#include "core/workload/hub_models.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/error.hpp"
#include "core/common/toml_data.hpp"

namespace gpusage::workload::detail {

// Generated from data/models/*.toml (cmake/EmbedText.cmake).
extern const char* const kHubModelsLlama;
extern const char* const kHubModelsMistral;
extern const char* const kHubModelsQwen;
extern const char* const kHubModelsGemma;
extern const char* const kHubModelsPhi;
extern const char* const kHubModelsOther;

namespace {

using nlohmann::json;

json to_json(const toml::node& node, const toml_data::TableReader& reader, const std::string& key) {
  if (const auto* t = node.as_table()) {
    json out = json::object();
    for (const auto& [k, v] : *t) out[std::string(k.str())] = to_json(v, reader, std::string(k.str()));
    return out;
  }
  if (const auto* a = node.as_array()) {
    json out = json::array();
    for (const auto& v : *a) out.push_back(to_json(v, reader, key));
    return out;
  }
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* s = node.as_string()) return s->get();
  reader.fail(key, "is not a number, boolean, string, table or array");
}

class ModelReader : public toml_data::TableReader {
 public:
  using TableReader::TableReader;

  std::string text(const char* key, bool required) const {
    const toml::node* node = table_.get(key);
    if (!node) {
      if (required) fail(key, "is missing");
      return {};
    }
    const auto* s = node->as_string();
    if (!s || s->get().empty()) fail(key, "is not a non-empty string");
    return s->get();
  }

  std::vector<std::string> ids() const {
    const toml::array* array = table_.get_as<toml::array>("ids");
    if (!array || array->empty()) fail("ids", "is not a non-empty list of Hub ids");
    std::vector<std::string> out;
    for (const auto& v : *array) {
      const auto* s = v.as_string();
      if (!s || s->get().find('/') == std::string::npos) fail("ids", "holds an entry that is not ORG/NAME");
      out.push_back(s->get());
    }
    return out;
  }

  std::string config_json() const {
    const toml::table* config = table_.get_as<toml::table>("config_json");
    if (!config || !config->contains("model_type")) fail("config_json", "is not a table with a model_type");
    return to_json(*config, *this, "config_json").dump();
  }
};

void read_file(const char* text, const std::string& file, std::vector<HubModel>& out) {
  const toml::table root = toml_data::parse(text, file);
  const toml::array* models = root.get_as<toml::array>("model");
  if (!models) throw InputError(file + ": has no [[model]] tables");
  for (std::size_t i = 0; i < models->size(); ++i) {
    const toml::table* table = (*models)[i].as_table();
    if (!table) throw InputError(file + ": model #" + std::to_string(i + 1) + " is not a table");
    const ModelReader r(*table, file, "model #" + std::to_string(i + 1));
    out.push_back(HubModel{r.ids(), r.text("source", true), r.text("read_from", true), r.text("note", false),
                           r.text("zoo", false), file, r.config_json()});
  }
}

}  // namespace

const std::vector<HubModel>& hub_models() {
  static const std::vector<HubModel> all = [] {
    const std::array<std::pair<const char*, const char*>, 6> files{{
        {kHubModelsLlama, "data/models/llama.toml"},
        {kHubModelsMistral, "data/models/mistral.toml"},
        {kHubModelsQwen, "data/models/qwen.toml"},
        {kHubModelsGemma, "data/models/gemma.toml"},
        {kHubModelsPhi, "data/models/phi.toml"},
        {kHubModelsOther, "data/models/other.toml"},
    }};
    std::vector<HubModel> out;
    for (const auto& [text, file] : files) read_file(text, file, out);
    return out;
  }();
  return all;
}

std::vector<std::string> hub_ids() {
  std::vector<std::string> ids;
  for (const HubModel& m : hub_models()) ids.insert(ids.end(), m.ids.begin(), m.ids.end());
  return ids;
}

}  // namespace gpusage::workload::detail
