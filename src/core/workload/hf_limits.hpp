// The largest value plan accepts for each size field of a Hugging Face config.json. A bound keeps every
// accepted config answerable in well under a second (a 10^9-layer config would otherwise build 10^9
// layers) and every product of sizes far from int64 overflow; each is several times the largest released
// model's figure (see hf_config.cpp), so no real checkpoint is refused.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpusage::workload {

struct HfConfigLimit {
  std::string_view field;  // the config.json key, e.g. "num_hidden_layers"
  std::int64_t max;        // accepted: 1 to max
};

// Every bounded field, for every model_type's spelling of it (n_layer and num_hidden_layers alike).
const std::vector<HfConfigLimit>& hf_config_limits();

}  // namespace gpusage::workload
