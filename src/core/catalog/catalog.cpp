#include "core/catalog/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {

extern const char* const kBuiltinCatalogText;  // generated from data/gpus.toml (catalog_data.cpp)

const char* to_string(Family family) {
  switch (family) {
    case Family::rtx50: return "rtx50";
    case Family::rtx40: return "rtx40";
    case Family::rtx30: return "rtx30";
    case Family::datacenter: return "datacenter";
    case Family::workstation: return "workstation";
  }
  return "?";
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

std::optional<Family> parse_family(std::string_view name) {
  for (Family f : {Family::rtx50, Family::rtx40, Family::rtx30, Family::datacenter, Family::workstation}) {
    if (text::to_lower(name) == to_string(f)) return f;
  }
  return std::nullopt;
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
    if (text::to_lower(name) == to_string(p)) return p;
  }
  return std::nullopt;
}

std::optional<double> Gpu::matmul_tflops(Precision precision) const {
  switch (precision) {
    case Precision::fp32: return fp32_tflops;
    case Precision::tf32: return tf32_tflops;
    case Precision::fp16: return fp16_tflops;
    case Precision::bf16: return bf16_tflops;
    case Precision::fp8: return fp8_tflops;
  }
  return std::nullopt;
}

double Gpu::compute_capability_value() const { return std::strtod(compute_capability.c_str(), nullptr); }

namespace {

const std::set<std::string>& known_memory_types() {
  static const std::set<std::string> types{"GDDR6", "GDDR6X", "GDDR7", "HBM2", "HBM2e", "HBM3", "HBM3e"};
  return types;
}

// "; did you mean 'fp16_tflops'?" for a misspelt field name, or nothing when no field is close.
std::string did_you_mean(std::string_view name) {
  std::vector<std::string> names;
  for (const Field& field : fields()) names.emplace_back(field.name);
  names.emplace_back("sources");
  auto close = suggest_names(name, names, 1);
  return close.empty() ? std::string() : fmt::format("; did you mean '{}'?", close.front());
}

// Reads one [[gpu]] table; every error names the origin, the GPU and the field.
class GpuReader {
 public:
  GpuReader(const toml::table& table, const std::string& origin, std::string id)
      : table_(table), origin_(origin), id_(std::move(id)) {}

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    throw InputError(fmt::format("{}: gpu '{}': field '{}' {}", origin_, id_, field, problem));
  }

  std::optional<std::string> optional_string(const char* key) {
    const toml::node* node = table_.get(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) fail(key, "must be a string");
    std::string value = **node->as_string();
    if (text::trim(value).empty()) fail(key, "must not be empty");
    return value;
  }
  std::string string(const char* key) {
    auto value = optional_string(key);
    if (!value) fail(key, "is required");
    return *value;
  }

  // Numbers must be positive: a zero bandwidth or a negative price is a typo, not a spec.
  std::optional<double> optional_number(const char* key) {
    const toml::node* node = table_.get(key);
    if (!node) return std::nullopt;
    double value;
    if (node->is_integer()) {
      value = static_cast<double>(**node->as_integer());
    } else if (node->is_floating_point()) {
      value = **node->as_floating_point();
    } else {
      fail(key, "must be a number");
    }
    if (!(value > 0)) fail(key, fmt::format("must be positive, got {}", value));
    return value;
  }
  double number(const char* key) {
    auto value = optional_number(key);
    if (!value) fail(key, "is required");
    return *value;
  }
  std::optional<int> optional_integer(const char* key) {
    auto value = optional_number(key);
    if (!value) return std::nullopt;
    if (*value != static_cast<int>(*value)) fail(key, fmt::format("must be a whole number, got {}", *value));
    return static_cast<int>(*value);
  }
  int integer(const char* key) {
    auto value = optional_integer(key);
    if (!value) fail(key, "is required");
    return *value;
  }

  std::vector<Source> sources() {
    const toml::array* array = table_.get_as<toml::array>("sources");
    if (!array || array->empty()) fail("sources", "is required: a list of { title, url, fields? }");
    std::vector<Source> out;
    for (const toml::node& item : *array) {
      const toml::table* t = item.as_table();
      if (!t) fail("sources", "entries must be tables { title = …, url = … }");
      Source source;
      for (auto&& [key, value] : *t) {
        std::string k(key.str());
        if (k == "title" && value.is_string()) {
          source.title = **value.as_string();
        } else if (k == "url" && value.is_string()) {
          source.url = **value.as_string();
        } else if (k == "fields" && value.is_array()) {
          for (const toml::node& f : *value.as_array()) {
            if (!f.is_string()) fail("sources", "'fields' must list field names");
            std::string field = **f.as_string();
            // A misspelt claim would silently leave the figure backed by the general sources instead.
            if (!find_field(field)) {
              fail("sources", fmt::format("lists '{}' in 'fields', which is not a catalog field{}", field,
                                          did_you_mean(field)));
            }
            source.fields.push_back(std::move(field));
          }
        } else {
          fail("sources", fmt::format("has an unknown or mistyped key '{}' (accepted: title, url, fields)", k));
        }
      }
      if (source.title.empty() || source.url.empty()) fail("sources", "entries need both a title and a url");
      if (!source.url.starts_with("https://") && !source.url.starts_with("http://")) {
        fail("sources", fmt::format("url '{}' is not an http(s) address", source.url));
      }
      out.push_back(std::move(source));
    }
    return out;
  }

  // Checked before any field is read, so that a misspelt required field is reported as the misspelling.
  void reject_unknown_keys() const {
    for (auto&& [key, value] : table_) {
      if (key.str() != "sources" && !find_field(key.str())) {
        fail(key.str(), fmt::format("is not a catalog field{} (schema: data/README.md)",
                                    did_you_mean(key.str())));
      }
    }
  }

 private:
  const toml::table& table_;
  const std::string& origin_;
  std::string id_;
};

Gpu read_gpu(const toml::table& table, const std::string& origin, std::size_t index) {
  std::string id = fmt::format("#{}", index + 1);
  if (auto node = table.get("id"); node && node->is_string()) id = **node->as_string();
  GpuReader r(table, origin, id);
  r.reject_unknown_keys();
  Gpu g;
  g.id = r.string("id");
  if (g.id != text::to_lower(g.id) || g.id.find(' ') != std::string::npos) {
    r.fail("id", "must be lowercase with no spaces");
  }
  g.name = r.string("name");
  std::string family = r.string("family");
  auto parsed_family = parse_family(family);
  if (!parsed_family) {
    r.fail("family", fmt::format("'{}' is not one of rtx50, rtx40, rtx30, datacenter, workstation", family));
  }
  g.family = *parsed_family;
  g.architecture = r.string("architecture");
  g.chip = r.string("chip");
  g.compute_capability = r.string("compute_capability");
  {
    const auto& cc = g.compute_capability;
    auto dot = cc.find('.');
    bool ok = dot != std::string::npos && dot > 0 && dot + 1 < cc.size() &&
              std::all_of(cc.begin(), cc.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (!ok) r.fail("compute_capability", fmt::format("'{}' is not of the form major.minor", cc));
  }
  g.form_factor = r.optional_string("form_factor");
  g.sm_count = r.integer("sm_count");
  g.cuda_cores = r.integer("cuda_cores");
  g.tensor_cores = r.optional_integer("tensor_cores");
  g.tensor_core_generation = r.optional_integer("tensor_core_generation");
  g.base_clock_mhz = r.optional_number("base_clock_mhz");
  g.boost_clock_mhz = r.number("boost_clock_mhz");
  g.memory_gb = r.number("memory_gb");
  g.memory_type = r.string("memory_type");
  if (!known_memory_types().count(g.memory_type)) {
    r.fail("memory_type",
           fmt::format("'{}' is not a known memory type (GDDR6, GDDR6X, GDDR7, HBM2, HBM2e, HBM3, HBM3e)",
                       g.memory_type));
  }
  g.memory_bus_bits = r.integer("memory_bus_bits");
  g.memory_bandwidth_gbs = r.number("memory_bandwidth_gbs");
  g.l2_cache_mb = r.optional_number("l2_cache_mb");
  g.tdp_w = r.number("tdp_w");
  g.pcie_gen = r.optional_integer("pcie_gen");
  g.pcie_lanes = r.optional_integer("pcie_lanes");
  g.nvlink_gbs = r.optional_number("nvlink_gbs");
  g.fp64_tflops = r.optional_number("fp64_tflops");
  g.fp32_tflops = r.number("fp32_tflops");
  g.tf32_tflops = r.optional_number("tf32_tflops");
  g.fp16_tflops = r.optional_number("fp16_tflops");
  g.fp16_acc16_tflops = r.optional_number("fp16_acc16_tflops");
  g.bf16_tflops = r.optional_number("bf16_tflops");
  g.fp8_tflops = r.optional_number("fp8_tflops");
  g.fp8_acc16_tflops = r.optional_number("fp8_acc16_tflops");
  g.fp4_tflops = r.optional_number("fp4_tflops");
  g.int8_tops = r.optional_number("int8_tops");
  g.launch_date = r.string("launch_date");
  {
    const auto& d = g.launch_date;
    bool ok = (d.size() == 7 || d.size() == 10) && d[4] == '-' && (d.size() == 7 || d[7] == '-');
    if (!ok) r.fail("launch_date", fmt::format("'{}' is not YYYY-MM-DD or YYYY-MM", d));
  }
  g.msrp_usd = r.optional_number("msrp_usd");
  g.sources = r.sources();
  // Every figure needs a source (data/README.md). Names, families and the like are classification.
  for (const Field& field : fields()) {
    if (field.number && field.number(g) && sources_for(g, field.name).empty()) {
      r.fail(field.name, "has no source: list it in a source's 'fields', or add a source without 'fields'");
    }
  }
  return g;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read catalog file '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Catalog Catalog::parse(std::string_view toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
  Catalog catalog;
  catalog.origin_ = origin;
  for (auto&& [key, value] : root) {
    if (key.str() != "gpu" && key.str() != "schema_version") {
      throw InputError(fmt::format("{}: unknown top-level key '{}' (accepted: schema_version, gpu)", origin,
                                   key.str()));
    }
  }
  if (auto version = root["schema_version"].value<int64_t>(); version && *version != 1) {
    throw InputError(fmt::format("{}: schema_version {} is not supported (this gpusage reads 1)", origin, *version));
  }
  const toml::array* gpus = root.get_as<toml::array>("gpu");
  if (!gpus || gpus->empty()) throw InputError(fmt::format("{}: no [[gpu]] tables", origin));
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const toml::table* table = (*gpus)[i].as_table();
    if (!table) throw InputError(fmt::format("{}: gpu entry #{} is not a table", origin, i + 1));
    Gpu gpu = read_gpu(*table, origin, i);
    if (const Gpu* earlier = catalog.find(gpu.id)) {
      throw InputError(fmt::format("{}: gpu '{}': field 'id' repeats entry #{} (ids must be unique)", origin,
                                   gpu.id, earlier - catalog.gpus_.data() + 1));
    }
    catalog.gpus_.push_back(std::move(gpu));
  }
  return catalog;
}

Catalog Catalog::load(const std::string& path) { return parse(read_file(path), path); }

const Catalog& Catalog::builtin() {
  static const Catalog catalog = parse(kBuiltinCatalogText, "data/gpus.toml (built in)");
  return catalog;
}

const Catalog& Catalog::active() {
  static const Catalog catalog = [] {
    if (const char* path = std::getenv("GPUSAGE_CATALOG"); path && *path) return load(path);
    return builtin();
  }();
  return catalog;
}

const Gpu* Catalog::find(std::string_view id) const {
  for (const auto& gpu : gpus_) {
    if (gpu.id == id) return &gpu;
  }
  return nullptr;
}

const Gpu& Catalog::resolve(std::string_view name) const {
  if (const Gpu* exact = find(text::to_lower(text::trim(name)))) return *exact;
  // CUDA and NVML report names such as "NVIDIA GeForce RTX 4090": the vendor prefix is noise here.
  std::string wanted = text::squash(name);
  if (wanted.starts_with("nvidia") && wanted.size() > 6) wanted.erase(0, 6);
  if (wanted.empty()) throw InputError("empty GPU name");
  // A typed name matches a GPU when, squashed, it equals the id or the name, or is a suffix of the name
  // at a word boundary ("5090" in "geforcertx5090"; "h100" matches every H100).
  std::vector<const Gpu*> exact_matches, partial_matches;
  for (const auto& gpu : gpus_) {
    const std::string id = text::squash(gpu.id), full = text::squash(gpu.name);
    if (wanted == id || wanted == full) {
      exact_matches.push_back(&gpu);
    } else if (full.ends_with(wanted) || id.ends_with(wanted) || id.starts_with(wanted) ||
               full.find(wanted) != std::string::npos) {
      partial_matches.push_back(&gpu);
    }
  }
  if (exact_matches.size() == 1) return *exact_matches.front();
  // Prefer names that end with what was typed: "5070" is the RTX 5070, not the 5070 Ti.
  std::vector<const Gpu*> suffix_matches;
  for (const Gpu* gpu : partial_matches) {
    if (text::squash(gpu->name).ends_with(wanted) || text::squash(gpu->id).ends_with(wanted)) {
      suffix_matches.push_back(gpu);
    }
  }
  const auto& candidates = exact_matches.size() > 1 ? exact_matches
                           : suffix_matches.size() == 1 ? suffix_matches
                                                        : partial_matches;
  if (candidates.size() == 1) return *candidates.front();
  if (candidates.size() > 1) {
    std::vector<std::string> ids;
    for (const Gpu* gpu : candidates) ids.push_back(gpu->id);
    throw InputError(fmt::format("GPU name '{}' is ambiguous: it matches {}", name, text::join(ids)));
  }
  std::vector<std::string> all_ids;
  for (const auto& gpu : gpus_) all_ids.push_back(gpu.id);
  auto close = text::closest(name, all_ids);
  if (close.empty()) {
    throw InputError(fmt::format("unknown GPU '{}' (see `gpusage gpus --family all` for the ids)", name));
  }
  throw InputError(fmt::format("unknown GPU '{}'; did you mean: {}", name, text::join(close)));
}

std::vector<const Gpu*> Catalog::family(Family family) const {
  std::vector<const Gpu*> out;
  for (const auto& gpu : gpus_) {
    if (gpu.family == family) out.push_back(&gpu);
  }
  return out;
}

std::vector<const Gpu*> Catalog::select(std::string_view spec) const {
  std::vector<const Gpu*> out;
  auto add = [&out](const Gpu* gpu) {
    if (std::find(out.begin(), out.end(), gpu) == out.end()) out.push_back(gpu);
  };
  for (const std::string& part : text::split(spec, ',')) {
    if (part.empty()) throw InputError(fmt::format("empty GPU name in '{}'", spec));
    if (text::to_lower(part) == "all") {
      for (const auto& gpu : gpus_) add(&gpu);
    } else if (auto f = parse_family(part)) {
      for (const Gpu* gpu : family(*f)) add(gpu);
    } else {
      add(&resolve(part));
    }
  }
  return out;
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
