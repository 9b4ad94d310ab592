// Reading a --train-config file into flat fields (train_config.hpp): YAML through yaml-cpp, JSON through
// nlohmann. A file that cannot be read or parsed is one InputError naming the file and the problem.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/setup/train_config.hpp"

namespace gpusage::setup {

using i18n::trf;

namespace {

void flatten_yaml(const YAML::Node& node, const std::string& key, std::vector<ConfigField>& out) {
  if (node.IsMap()) {
    for (const auto& item : node) {
      const std::string name = item.first.as<std::string>();
      flatten_yaml(item.second, key.empty() ? name : key + "." + name, out);
    }
    return;
  }
  ConfigField f;
  f.key = key;
  if (node.IsSequence()) {
    f.is_list = true;
    for (const auto& element : node) {
      if (element.IsScalar()) f.list.push_back(element.as<std::string>());
    }
  } else if (node.IsNull() || !node.IsDefined()) {
    f.is_null = true;
  } else {
    f.text = node.as<std::string>();
    // YAML's null spellings read as text by as<std::string>().
    f.is_null = f.text == "~" || f.text == "null" || f.text == "Null" || f.text == "NULL";
  }
  out.push_back(std::move(f));
}

std::string json_scalar(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

void flatten_json(const nlohmann::json& node, const std::string& key, std::vector<ConfigField>& out) {
  if (node.is_object()) {
    for (const auto& [name, value] : node.items()) flatten_json(value, key.empty() ? name : key + "." + name, out);
    return;
  }
  ConfigField f;
  f.key = key;
  if (node.is_array()) {
    f.is_list = true;
    for (const auto& element : node) {
      if (!element.is_structured()) f.list.push_back(json_scalar(element));
    }
  } else if (node.is_null()) {
    f.is_null = true;
  } else {
    f.text = json_scalar(node);
  }
  out.push_back(std::move(f));
}

bool looks_like_json(const std::string& path, const std::string& text) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return true;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

}  // namespace

std::vector<ConfigField> read_config_fields(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(trf("--train-config: cannot read '{}' (no such file, or not readable)", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<ConfigField> fields;
  if (looks_like_json(path, text)) {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(trf("--train-config: '{}' is not valid JSON: {}", path, e.what()));
    }
    if (!doc.is_object()) throw InputError(trf("--train-config: '{}' holds no JSON object of settings", path));
    flatten_json(doc, "", fields);
  } else {
    YAML::Node doc;
    try {
      doc = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError(trf("--train-config: '{}' is not valid YAML: line {}: {}", path, e.mark.line + 1, e.msg));
    }
    if (!doc.IsMap()) throw InputError(trf("--train-config: '{}' holds no YAML map of settings", path));
    try {
      flatten_yaml(doc, "", fields);
    } catch (const YAML::Exception& e) {
      throw InputError(trf("--train-config: '{}': line {}: {}", path, e.mark.line + 1, e.msg));
    }
  }
  return fields;
}

}  // namespace gpusage::setup
