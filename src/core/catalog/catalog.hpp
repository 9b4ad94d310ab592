// The GPU catalog: loading with validation, lookup by what users type, and derived metrics.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/catalog/gpu.hpp"

namespace gpusage::catalog {

// How the loader turns one published figure into dense rates (data/gpus.toml's [[derivation]] tables):
// each listed field is basis x ratio, the ratios being those the cited whitepaper's tables show.
struct DerivationRule {
  std::string id;
  std::string basis;  // what the published figure is: "sparse FP4 TOPS (NVIDIA's AI TOPS)"
  std::string basis_field =
      "ai_tops";  // the card's figure it reads: ai_tops (ai_tops_rule) or fp32_tflops (tensor_rule)
  std::vector<std::pair<std::string, double>> ratios;  // field -> ratio, in the file's order
  std::vector<Source> sources;
};

// A precision the hardware has only from some compute capability on ([[support]] tables).
struct SupportRule {
  std::vector<std::string> fields;
  std::string min_compute_capability;  // empty when the rule requires tensor cores instead
  bool requires_tensor_cores = false;  // the card lacks the fields when it has no tensor cores (neither a
                                       // tensor_cores count nor a tensor_core_generation)
  std::vector<Source> sources;
};

// Selection groups beside the families: cards sold in one market ("china").
inline constexpr const char* kMarketGroups[] = {"china"};

class Catalog {
 public:
  // Parses and validates catalog text. `origin` names the file in error messages.
  // Throws InputError naming the origin, the GPU id and the field for any problem.
  static Catalog parse(std::string_view toml_text, const std::string& origin);
  // Reads and parses a catalog file; the path is the origin. Throws InputError when it cannot be read.
  static Catalog load(const std::string& path);
  // The catalog compiled into the binary from data/gpus.toml.
  static const Catalog& builtin();
  // GPUSAGE_CATALOG (a file path) when set, else the built-in catalog.
  static const Catalog& active();

  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::string& origin() const { return origin_; }
  const std::vector<DerivationRule>& rules() const { return rules_; }
  const DerivationRule* rule(std::string_view id) const;
  const std::vector<SupportRule>& support_rules() const { return support_; }

  // Exact id first, then what users type: "RTX 5090", "5090", "5070 ti", "h100", "4090 d". Names match
  // by whole model tokens: a number never matches a longer number ("h20" is not the H200, "a10" not an
  // A100). Throws InputError when nothing matches (naming the nearest ids) or several do (listing them).
  // A name may end in modifications, each after an '@' (modified.cpp): "rtx4090@48gb" is the card with 48 GB
  // (a memory-modified board), "rtx4090-laptop@115w" the laptop GPU at a 115 W limit within its range. The
  // modified card lives as long as the catalog; its id is the canonical spelling ("rtx4090@48gb") and
  // Gpu::modification says what changed. Throws InputError for a modification the card cannot take.
  const Gpu& resolve(std::string_view name) const;
  // `spec` (a --gpu list: names, families, markets, all) with every card it names carrying the modifications
  // --gpu-power and --gpu-memory give: "rtx4090,laptop" at 48 GB is "rtx4090@48gb,rtx3080ti-laptop@48gb,...".
  // Throws InputError when a name already gives the same modification ("rtx4090@48gb" and --gpu-memory).
  std::string with_modifications(std::string_view spec, std::optional<double> power_w,
                                 std::optional<double> memory_gb) const;
  // resolve() without modifications.
  const Gpu& resolve_plain(std::string_view name) const;
  const Gpu* find(std::string_view id) const;

  // When `name` fits several cards equally and one of them is the default of the others (its default_over),
  // that card, with a note (Gpu::default_note) naming what was typed and how to pick another; else null.
  const Gpu* default_variant(std::string_view name, const std::vector<const Gpu*>& fits) const;

  // A comma list of names, families (rtx50 …), market groups (china) or "all", in catalog order without
  // repeats.
  std::vector<const Gpu*> select(std::string_view spec) const;
  std::vector<const Gpu*> family(Family family) const;
  std::vector<const Gpu*> market(std::string_view group) const;  // "china": market == "China"

 private:
  std::string origin_;
  std::vector<Gpu> gpus_;
  std::vector<DerivationRule> rules_;
  std::vector<SupportRule> support_;
  mutable std::deque<Gpu> modified_;   // the cards resolve() made from a name with '@' modifications
  mutable std::deque<Gpu> defaulted_;  // the cards resolve() took a name as by default, with their note
};

// The power a laptop GPU is planned at when the name gives none (ID@W): the top of its range (tdp_w), what
// the laptop's maker may allow and NVIDIA's spec page lists last. Empty for other cards.
std::optional<double> default_laptop_power_w(const Gpu& gpu);

// The tokens a GPU name is matched by: lower case, split at non-alphanumerics and between letters and
// digits, vendor words dropped. "NVIDIA GeForce RTX 5090D v2" -> rtx 5090 d v 2.
std::vector<std::string> name_tokens(std::string_view name);
bool is_market_group(std::string_view name);
// A ratio as a person reads it: "1/16" for a unit fraction, else the number.
std::string ratio_text(double ratio);
// The tensor rates (tf32 … int8): the fields a derivation rule may compute and a support rule may deny.
bool is_tensor_rate(std::string_view field);

std::optional<Family> parse_family(std::string_view name);
std::optional<Precision> parse_precision(std::string_view name);

// Derived figures: computed from the catalog, never stored. Empty when an input is unknown.
struct Derived {
  std::optional<double> fp16_tflops_per_usd;   // dense FP16 tensor TFLOPS per launch dollar
  std::optional<double> fp16_tflops_per_watt;  // per watt of TDP
  std::optional<double> fp32_tflops_per_usd;
  std::optional<double> fp32_tflops_per_watt;
  std::optional<double> vram_gb_per_usd;
  std::optional<double> bandwidth_gbs_per_fp16_tflop;  // GB/s per TFLOPS: how well memory keeps up
  std::optional<double> ridge_point_flop_per_byte;     // FP16 tensor FLOPs per byte at the roofline knee
};
Derived derive(const Gpu& gpu);

}  // namespace gpusage::catalog
