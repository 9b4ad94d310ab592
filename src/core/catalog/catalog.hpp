// The GPU catalog: loading with validation, lookup by what users type, and derived metrics.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog/gpu.hpp"

namespace gpusage::catalog {

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

  // Exact id first, then what users type: "RTX 5090", "5090", "5070 ti", "h100". Throws InputError when
  // nothing matches or several do, listing the candidates.
  const Gpu& resolve(std::string_view name) const;
  const Gpu* find(std::string_view id) const;

  // A comma list of names, families (rtx50 …) or "all", in catalog order without repeats.
  std::vector<const Gpu*> select(std::string_view spec) const;
  std::vector<const Gpu*> family(Family family) const;

 private:
  std::string origin_;
  std::vector<Gpu> gpus_;
};

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
