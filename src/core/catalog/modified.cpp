// Cards the user changed: "ID@48gb" (a memory-modified board, sold in China for LLM fine-tuning: an RTX 4090
// with 48 GB, an RTX 2080 Ti with 22 GB) and "ID@115w" (the power limit a laptop's maker set within the
// laptop GPU's range, or a power cap on any card). The speed follows the power through the step-time model's
// power limit (estimate/step_time.cpp, power_limited_clock_fraction reads tdp_w); memory bandwidth and
// everything else stay the catalog's.
#include <fmt/format.h>

#include <cstdlib>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {

namespace {

// "48gb" -> (48, "gb"); the number must be positive and the unit gb or w.
std::pair<double, std::string> read_modification(const std::string& spec, const std::string& part) {
  const std::string lower = text::to_lower(text::trim(part));
  char* end = nullptr;
  const double value = std::strtod(lower.c_str(), &end);
  const std::string unit = text::trim(end ? std::string(end) : std::string());
  if (end == lower.c_str() || !(value > 0) || value > 1e5 || (unit != "gb" && unit != "w")) {
    throw InputError(
        i18n::trf("GPU '{}': '@{}' is not a modification (accepted: @<memory>gb such as @48gb, "
                  "@<power>w such as @115w)",
                  spec, part));
  }
  return {value, unit};
}

std::string number_text(double value) { return fmt::format("{:g}", value); }

void set_power(Gpu& gpu, const std::string& spec, double watts) {
  if (gpu.is_laptop()) {
    const double low = gpu.power_min_w.value_or(gpu.tdp_w);
    if (watts < low || watts > gpu.tdp_w) {
      throw InputError(
          i18n::trf("GPU '{}': {} W is outside the {}'s power range of {}-{} W (its laptop's "
                    "maker sets the limit within it)",
                    spec, number_text(watts), gpu.name, number_text(low), number_text(gpu.tdp_w)));
    }
    gpu.modification =
        fmt::format("power limit {} W (range {}-{} W)", number_text(watts), number_text(low), number_text(gpu.tdp_w));
  } else {
    if (watts > gpu.tdp_w) {
      throw InputError(
          i18n::trf("GPU '{}': {} W is above the {}'s {} W board power (a power cap can only lower "
                    "it; overclocks are not modelled)",
                    spec, number_text(watts), gpu.name, number_text(gpu.tdp_w)));
    }
    gpu.modification =
        fmt::format("power capped at {} W (board power {} W)", number_text(watts), number_text(gpu.tdp_w));
  }
  gpu.tdp_w = watts;
}

}  // namespace

std::optional<double> default_laptop_power_w(const Gpu& gpu) {
  if (!gpu.is_laptop()) return std::nullopt;
  return gpu.tdp_w;
}

const Gpu& Catalog::resolve(std::string_view name) const {
  const std::string spec(text::trim(name));
  const auto at = spec.find('@');
  if (at == std::string::npos) return resolve_plain(spec);
  Gpu gpu = resolve_plain(spec.substr(0, at));
  std::string id = gpu.id;
  std::vector<std::string> changes, labels;  // what changed, in full and as the name's suffix
  for (const std::string& part : text::split(spec.substr(at + 1), '@')) {
    const auto [value, unit] = read_modification(spec, part);
    if (unit == "gb") {
      changes.push_back(fmt::format("{} GB memory (the catalog's card has {} GB; a modified board)", number_text(value),
                                    number_text(gpu.memory_gb)));
      labels.push_back(fmt::format("{} GB, modified", number_text(value)));
      gpu.memory_gb = value;
    } else {
      set_power(gpu, spec, value);
      changes.push_back(*gpu.modification);
      labels.push_back(fmt::format("{} W", number_text(value)));
    }
    id += "@" + number_text(value) + unit;
  }
  gpu.id = id;
  gpu.name += " (" + text::join(labels, ", ") + ")";  // tables name the card as it was planned
  gpu.modification = text::join(changes, "; ");
  for (const Gpu& made : modified_) {
    if (made.id == gpu.id) return made;
  }
  return modified_.emplace_back(std::move(gpu));
}

std::string Catalog::with_modifications(std::string_view spec, std::optional<double> power_w,
                                        std::optional<double> memory_gb) const {
  if ((!power_w && !memory_gb) || text::trim(spec).empty()) return std::string(spec);
  std::string suffix;
  if (power_w) suffix += "@" + number_text(*power_w) + "w";
  if (memory_gb) suffix += "@" + number_text(*memory_gb) + "gb";
  std::vector<std::string> names;
  for (const std::string& raw : text::split(spec, ',')) {
    const std::string part = text::trim(raw);
    const std::string lower = text::to_lower(part);
    if (lower == "all" || parse_family(part) || is_market_group(part)) {
      for (const Gpu* gpu : select(part)) names.push_back(gpu->id + suffix);
      continue;
    }
    const auto at = lower.find('@');
    const std::vector<std::string> given_parts =
        at == std::string::npos ? std::vector<std::string>{} : text::split(lower.substr(at + 1), '@');
    for (const std::string& given : given_parts) {
      const std::string unit = text::trim(given).ends_with("gb") ? "gb" : "w";
      if ((unit == "gb" && memory_gb) || (unit == "w" && power_w)) {
        throw InputError(i18n::trf("--gpu '{}' already gives the {} (@{}); drop it or --gpu-{}", part,
                                   unit == "gb" ? i18n::tr("memory") : i18n::tr("power limit"), text::trim(given),
                                   unit == "gb" ? "memory" : "power"));
      }
    }
    names.push_back(part + suffix);
  }
  return text::join(names, ",");
}

}  // namespace gpusage::catalog
