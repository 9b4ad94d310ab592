// Internal to the workload module: names as people type them. The built-in table of Hugging Face Hub
// models (data/models/*.toml, compiled in), the local Hugging Face cache, and the resolution of a name to a
// zoo model or a config.json.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::workload::detail {

// One [[model]] of data/models/*.toml: the Hub ids that share one config.json's shapes.
struct HubModel {
  std::vector<std::string> ids;  // "meta-llama/Llama-3.1-8B", ...; the first is the one `source` names
  std::string source;            // the config.json on the Hub the figures describe
  std::string read_from;         // where the figures were read
  std::string note;              // how a family without its own builder is planned, or empty
  std::string zoo;               // the zoo model with the same config.json, or empty
  std::string file;              // "data/models/llama.toml"
  std::string config_json;       // the [model.config_json] table as JSON text, for parse_hf_config
};

// Every entry of the compiled-in table. Throws InputError when a file is malformed (a build defect).
const std::vector<HubModel>& hub_models();

// Every Hub id in the table.
std::vector<std::string> hub_ids();

// What a model name stands for.
struct ResolvedName {
  std::string zoo_id;       // a zoo model; or else
  std::string config_json;  // a config.json's text, from the local cache or the table
  std::string hub_id;       // the Hub id as the table or the cache spells it
  std::string origin;       // where config_json came from, for the workload's architecture_source
  const HubModel* hub = nullptr;
};

// A zoo id, a Hub id (ORG/NAME, any case) or a Hub name without its org ("Llama-3.1-8B", "qwen2.5-7B"),
// in that order: the zoo's exact ids, the local Hugging Face cache (for ORG/NAME), the table, then the
// zoo and the table again with case and punctuation ignored. nullopt when nothing matches.
std::optional<ResolvedName> resolve_name(const std::string& name);

// The three known names nearest to `name`, for "did you mean".
std::vector<std::string> nearest_names(const std::string& name);

// The config.json of a Hub id in the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub,
// XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub), as huggingface_hub lays it out:
// models--ORG--NAME/refs/main names the snapshot; without it, a single snapshot is taken.
std::optional<std::string> hf_cache_config_path(std::string_view hub_id);

}  // namespace gpusage::workload::detail
