// Internal to the catalog module: the derivation and support rules as the loader (catalog.cpp) applies
// them, defined in derivation.cpp beside derive().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/catalog/gpu.hpp"

namespace gpusage::catalog::detail {

// The Gpu member a tensor rate's TOML key names ("fp16_tflops" -> &Gpu::fp16_tflops); nullptr for any
// other key. is_tensor_rate() is its public yes/no.
std::optional<double> Gpu::*rate_member(std::string_view field);
// The tensor rates' keys, comma-joined, for error messages.
std::string rate_names();

// Computes what the GPU's rule derives from its AI TOPS, and marks what its compute capability lacks.
// Throws InputError naming `origin`, the GPU and the field.
void apply_rules(Gpu& g, const std::vector<DerivationRule>& rules, const std::vector<SupportRule>& support,
                 const std::string& origin);

// Fills Gpu::power_flagship: per compute capability, the card with the highest TDP (then FP16 rate).
void fill_power_flagships(std::vector<Gpu>& gpus);

}  // namespace gpusage::catalog::detail
