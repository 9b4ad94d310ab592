// Figures the catalog computes rather than stores: the dense tensor rates its [[derivation]] rules read
// from a published AI TOPS figure, the precisions its [[support]] rules deny, each card's power flagship,
// and the per-dollar and per-watt figures of derive().
#include "core/catalog/derivation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/common/error.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {

namespace {

// The tensor rates a derivation rule may compute, by TOML key.
struct RateMember {
  const char* field;
  std::optional<double> Gpu::*member;
};
constexpr RateMember kRateMembers[] = {
    {"tf32_tflops", &Gpu::tf32_tflops},
    {"fp16_tflops", &Gpu::fp16_tflops},
    {"fp16_acc16_tflops", &Gpu::fp16_acc16_tflops},
    {"bf16_tflops", &Gpu::bf16_tflops},
    {"fp8_tflops", &Gpu::fp8_tflops},
    {"fp8_acc16_tflops", &Gpu::fp8_acc16_tflops},
    {"fp4_tflops", &Gpu::fp4_tflops},
    {"int8_tops", &Gpu::int8_tops},
};

}  // namespace

namespace detail {

std::optional<double> Gpu::*rate_member(std::string_view field) {
  for (const auto& rate : kRateMembers) {
    if (field == rate.field) return rate.member;
  }
  return nullptr;
}
std::string rate_names() {
  std::vector<std::string> names;
  for (const auto& rate : kRateMembers) names.emplace_back(rate.field);
  return text::join(names);
}

// Computes what the GPU's rule derives from its AI TOPS, and marks what its compute capability lacks.
void apply_rules(Gpu& g, const std::vector<DerivationRule>& rules, const std::vector<SupportRule>& support,
                 const std::string& origin) {
  auto fail = [&](std::string_view field, std::string_view problem) {
    throw InputError(fmt::format("{}: gpu '{}': field '{}' {}", origin, g.id, field, problem));
  };
  if (g.ai_tops.has_value() != g.ai_tops_rule.has_value()) {
    fail(g.ai_tops ? "ai_tops_rule" : "ai_tops",
         "is required with the other: a published AI TOPS figure and the "
         "rule that reads it go together");
  }
  // Each rule the card names reads its basis figure: ai_tops_rule the AI TOPS, tensor_rule the FP32 rate.
  auto derive_with = [&](const char* key, const std::string& id, const std::string& basis_field, double basis) {
    const DerivationRule* rule = nullptr;
    for (const auto& candidate : rules) {
      if (candidate.id == id) rule = &candidate;
    }
    if (!rule || rule->basis_field != basis_field) {
      std::vector<std::string> ids;
      for (const auto& candidate : rules) {
        if (candidate.basis_field == basis_field) ids.push_back(candidate.id);
      }
      fail(key, fmt::format("'{}' is not a [[derivation]] of this catalog that reads {} (accepted: {})", id,
                            basis_field, ids.empty() ? "none defined" : text::join(ids)));
    }
    // A published figure wins: the rule only fills what the spec sheets leave empty.
    for (const auto& [field, ratio] : rule->ratios) {
      auto member = rate_member(field);
      if (g.*member) continue;
      Derivation d{field, rule->id, basis_field, basis, ratio};
      g.*member = d.value();
      g.derivations.push_back(std::move(d));
    }
  };
  if (g.ai_tops_rule) derive_with("ai_tops_rule", *g.ai_tops_rule, "ai_tops", *g.ai_tops);
  if (g.tensor_rule) derive_with("tensor_rule", *g.tensor_rule, "fp32_tflops", g.fp32_tflops);
  for (const auto& rule : support) {
    // A card has tensor cores when the catalog gives their count or their generation (GB10 and H20: only the
    // generation is published).
    const bool tensor_cores = g.tensor_cores.has_value() || g.tensor_core_generation.has_value();
    if (rule.requires_tensor_cores
            ? tensor_cores
            : g.compute_capability_value() >= std::strtod(rule.min_compute_capability.c_str(), nullptr)) {
      continue;
    }
    for (const auto& field : rule.fields) {
      if (std::find(g.unsupported.begin(), g.unsupported.end(), field) != g.unsupported.end()) continue;
      if (g.*rate_member(field)) {
        fail(field, rule.requires_tensor_cores
                        ? std::string("is set, but the card has no tensor cores (the catalog's support rule)")
                        : fmt::format("is set, but compute capability {} lacks it (the catalog's support rule: {} "
                                      "and later)",
                                      g.compute_capability, rule.min_compute_capability));
      }
      g.unsupported.push_back(field);
    }
  }
}

// Gpu::power_flagship: per compute capability, the card with the highest TDP (then FP16 rate).
void fill_power_flagships(std::vector<Gpu>& gpus) {
  std::map<std::string, const Gpu*> flagship;
  for (const Gpu& gpu : gpus) {
    if (gpu.tdp_w <= 0 || !gpu.fp16_tflops) continue;
    const Gpu*& best = flagship[gpu.compute_capability];
    if (!best || gpu.tdp_w > best->tdp_w || (gpu.tdp_w == best->tdp_w && *gpu.fp16_tflops > *best->fp16_tflops)) {
      best = &gpu;
    }
  }
  std::map<std::string, std::pair<std::string, double>> reference;
  for (const auto& [cc, gpu] : flagship) {
    // A GeForce flagship's FP32-accumulate rate is held at half its tensor cores' rate; the full one
    // (FP16 accumulate) is what its TDP was set for.
    reference[cc] = {gpu->id, gpu->fp16_acc16_tflops.value_or(*gpu->fp16_tflops) / gpu->tdp_w};
  }
  for (Gpu& gpu : gpus) {
    auto it = reference.find(gpu.compute_capability);
    if (it == reference.end() || gpu.tdp_w <= 0 || !gpu.fp16_tflops) continue;
    gpu.power_flagship = it->second.first;
    gpu.power_flagship_fp16_tflops_per_watt = it->second.second;
  }
}

}  // namespace detail

bool is_tensor_rate(std::string_view field) { return detail::rate_member(field) != nullptr; }

std::string ratio_text(double ratio) {
  const double inverse = 1 / ratio;
  if (inverse == static_cast<double>(static_cast<long long>(inverse))) return fmt::format("1/{}", inverse);
  return fmt::format("{}", ratio);
}

Derived derive(const Gpu& gpu) {
  Derived d;
  auto ratio = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (a && b && *b > 0) return *a / *b;
    return std::nullopt;
  };
  d.fp16_tflops_per_usd = ratio(gpu.fp16_tflops, gpu.msrp_usd);
  d.fp16_tflops_per_watt = ratio(gpu.fp16_tflops, gpu.tdp_w);
  d.fp32_tflops_per_usd = ratio(gpu.fp32_tflops, gpu.msrp_usd);
  d.fp32_tflops_per_watt = ratio(gpu.fp32_tflops, gpu.tdp_w);
  d.vram_gb_per_usd = ratio(gpu.memory_gb, gpu.msrp_usd);
  d.bandwidth_gbs_per_fp16_tflop = ratio(gpu.memory_bandwidth_gbs, gpu.fp16_tflops);
  // Ridge point of the roofline: peak FLOP/s over peak byte/s. TFLOPS*1e12 / (GB/s*1e9).
  if (auto r = ratio(gpu.fp16_tflops, gpu.memory_bandwidth_gbs)) d.ridge_point_flop_per_byte = *r * 1e3;
  return d;
}

}  // namespace gpusage::catalog
