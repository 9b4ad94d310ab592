// Names as people type them: a zoo id, a Hugging Face Hub id (meta-llama/Llama-3.1-8B), the name without
// its org, in any case and with or without punctuation (Llama-3.1-8B, llama3.1-8b, qwen2.5-7B).
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/workload/hub_models.hpp"
#include "core/workload/zoo_table.hpp"

namespace gpusage::workload::detail {

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// huggingface_hub's cache directory (its "Environment variables" docs): HF_HUB_CACHE, else HF_HOME/hub,
// else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
fs::path hub_cache_dir() {
  if (const std::string v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (const std::string v = env("HF_HOME"); !v.empty()) return fs::path(v) / "hub";
  if (const std::string v = env("XDG_CACHE_HOME"); !v.empty()) return fs::path(v) / "huggingface" / "hub";
  if (const std::string v = env("HOME"); !v.empty()) return fs::path(v) / ".cache" / "huggingface" / "hub";
  return {};
}

// The part after ORG/, or the whole name.
std::string_view name_part(std::string_view id) {
  const std::size_t slash = id.find('/');
  return slash == std::string_view::npos ? id : id.substr(slash + 1);
}

ResolvedName from_hub(const HubModel& m, const std::string& id) {
  if (!m.zoo.empty()) return ResolvedName{m.zoo, {}, id, {}, &m};
  return ResolvedName{{}, m.config_json, id, "gpusage's table of Hub configs (" + m.file + "; " + m.source + ")", &m};
}

// The table entry whose id equals `name` under `key` (a spelling: lower case, or squashed).
template <typename Key>
std::optional<ResolvedName> find_in_table(std::string_view name, Key key, bool without_org) {
  const std::string wanted = key(name);
  for (const HubModel& m : hub_models()) {
    for (const std::string& id : m.ids) {
      if (key(without_org ? name_part(id) : std::string_view(id)) == wanted) return from_hub(m, id);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> hf_cache_config_path(std::string_view hub_id) {
  const std::size_t slash = hub_id.find('/');
  if (slash == std::string_view::npos || hub_id.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  const fs::path cache = hub_cache_dir();
  if (cache.empty()) return std::nullopt;
  const fs::path entry =
      cache / ("models--" + std::string(hub_id.substr(0, slash)) + "--" + std::string(hub_id.substr(slash + 1)));
  std::error_code ec;
  const fs::path snapshots = entry / "snapshots";
  if (!fs::is_directory(snapshots, ec)) return std::nullopt;
  fs::path snapshot;
  if (const auto ref = io::try_read_file((entry / "refs" / "main").string())) {
    snapshot = snapshots / text::trim(*ref);
  } else {
    int found = 0;
    for (const auto& e : fs::directory_iterator(snapshots, ec)) {
      if (e.is_directory()) {
        snapshot = e.path();
        ++found;
      }
    }
    if (found != 1) return std::nullopt;
  }
  const fs::path config = snapshot / "config.json";
  if (!fs::is_regular_file(config, ec)) return std::nullopt;
  return config.string();
}

std::optional<ResolvedName> resolve_name(const std::string& name) {
  for (const ZooModel& m : zoo_models()) {
    if (m.entry.id == name) return ResolvedName{m.entry.id, {}, {}, {}, nullptr};
  }
  if (const auto path = hf_cache_config_path(name)) {
    return ResolvedName{
        {}, io::read_file(*path, "Hugging Face config"), name, "the local Hugging Face cache (" + *path + ")", nullptr};
  }
  const auto lower = [](std::string_view s) { return text::to_lower(s); };
  const auto squash = [](std::string_view s) { return text::squash(s); };
  if (auto found = find_in_table(name, lower, false)) return found;
  for (const ZooModel& m : zoo_models()) {
    if (text::squash(m.entry.id) == text::squash(name)) return ResolvedName{m.entry.id, {}, {}, {}, nullptr};
  }
  if (auto found = find_in_table(name, squash, false)) return found;
  if (name.find('/') == std::string::npos) return find_in_table(name, squash, true);
  return std::nullopt;
}

std::vector<std::string> nearest_names(const std::string& name) {
  std::vector<std::string> names;
  for (const ZooModel& m : zoo_models()) names.push_back(m.entry.id);
  const std::vector<std::string> hub = hub_ids();
  names.insert(names.end(), hub.begin(), hub.end());
  return text::closest(name, names, 3);
}

}  // namespace gpusage::workload::detail
