#include "core/catalog/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "core/catalog/derivation.hpp"
#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/common/toml_data.hpp"

namespace gpusage::catalog {

extern const char* const kBuiltinCatalogText;  // generated from data/gpus.toml (catalog_data.cpp)

namespace {

const std::set<std::string>& known_memory_types() {
  static const std::set<std::string> types{"GDDR5", "GDDR5X", "GDDR6", "GDDR6X", "GDDR7",
                                           "HBM2",  "HBM2e",  "HBM3",  "HBM3e",  "LPDDR5X"};
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

// The [[gpu]] keys that hold lists of strings rather than a catalog field: the driver's names and PCI ids
// (catalog::identify) and the variants a name is taken as this card over (names.cpp).
bool is_list_key(std::string_view key) {
  return key == "nvml_names" || key == "pci_device_ids" || key == "default_over";
}

// Reads one [[gpu]] table; every error names the origin, the GPU and the field.
// `what` names the table in messages: "gpu 'rtx5090'", "derivation 'blackwell-geforce'".
class GpuReader : public toml_data::TableReader {
 public:
  using TableReader::TableReader;

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
    const std::optional<double> number = toml_data::number_value(*node);
    if (!number) fail(key, "must be a number");
    const double value = *number;
    // TOML spells infinity `inf`; no spec is infinite (found by fuzz/catalog_toml).
    if (!std::isfinite(value)) fail(key, fmt::format("must be a finite number, got {}", value));
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
    // Range first: casting a double beyond int's range is undefined (found by fuzz/catalog_toml).
    if (*value > std::numeric_limits<int>::max()) {
      fail(key, fmt::format("must be a whole number up to {}, got {}", std::numeric_limits<int>::max(), *value));
    }
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
            if (!find_field(field) && !is_list_key(field)) {
              fail("sources",
                   fmt::format("lists '{}' in 'fields', which is not a catalog field{}", field, did_you_mean(field)));
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

  // A list of non-empty strings (nvml_names, pci_device_ids); empty when the key is absent.
  std::vector<std::string> strings(const char* key) {
    std::vector<std::string> out;
    const toml::node* node = table_.get(key);
    if (!node) return out;
    if (!node->is_array()) fail(key, "must be a list of strings");
    for (const toml::node& item : *node->as_array()) {
      if (!item.is_string() || text::trim(**item.as_string()).empty()) fail(key, "must be a list of strings");
      out.push_back(**item.as_string());
    }
    return out;
  }

  // Checked before any field is read, so that a misspelt required field is reported as the misspelling.
  void reject_unknown_keys() const {
    for (auto&& [key, value] : table_) {
      if (key.str() != "sources" && !is_list_key(key.str()) && key.str() != "default_why" && !find_field(key.str())) {
        fail(key.str(), fmt::format("is not a catalog field{} (schema: data/README.md)", did_you_mean(key.str())));
      }
    }
  }
};

// A derivation ratio: positive and finite (a ratio of "inf", or one that overflows, derives no rate).
std::optional<double> valid_ratio(double ratio) {
  return ratio > 0 && std::isfinite(ratio) ? std::optional<double>(ratio) : std::nullopt;
}

// "1/16" or "0.5": a positive ratio.
std::optional<double> parse_ratio(const std::string& text) {
  const auto slash = text.find('/');
  char* end = nullptr;
  if (slash == std::string::npos) {
    double v = std::strtod(text.c_str(), &end);
    return end && *end == '\0' ? valid_ratio(v) : std::nullopt;
  }
  const std::string a = text::trim(text.substr(0, slash)), b = text::trim(text.substr(slash + 1));
  double num = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0') return std::nullopt;
  double den = std::strtod(b.c_str(), &end);
  if (b.empty() || *end != '\0' || !(num > 0) || !(den > 0)) return std::nullopt;
  return valid_ratio(num / den);
}

DerivationRule read_rule(const toml::table& table, const std::string& origin, std::size_t index) {
  std::string id = fmt::format("#{}", index + 1);
  if (auto node = table.get("id"); node && node->is_string()) id = **node->as_string();
  GpuReader r(table, origin, fmt::format("derivation '{}'", id));
  for (auto&& [key, value] : table) {
    const std::string_view k = key.str();
    if (k != "id" && k != "basis" && k != "basis_field" && k != "ratios" && k != "sources") {
      r.fail(k, "is not a derivation key (accepted: id, basis, basis_field, ratios, sources)");
    }
  }
  DerivationRule rule;
  rule.id = r.string("id");
  rule.basis = r.string("basis");
  rule.basis_field = r.optional_string("basis_field").value_or("ai_tops");
  if (rule.basis_field != "ai_tops" && rule.basis_field != "fp32_tflops") {
    r.fail("basis_field", fmt::format("'{}' is not ai_tops or fp32_tflops", rule.basis_field));
  }
  const toml::table* ratios = table.get_as<toml::table>("ratios");
  if (!ratios || ratios->empty()) r.fail("ratios", "is required: { field = \"1/2\", ... }");
  for (auto&& [key, value] : *ratios) {
    const std::string field(key.str());
    if (!detail::rate_member(field)) {
      r.fail("ratios",
             fmt::format("names '{}', which is not a tensor rate (accepted: {})", field, detail::rate_names()));
    }
    std::optional<double> ratio;
    if (value.is_string()) {
      ratio = parse_ratio(**value.as_string());
    } else if (const std::optional<double> number = toml_data::number_value(value)) {
      ratio = valid_ratio(*number);
    }
    if (!ratio) r.fail("ratios", fmt::format("'{}' must be a positive number or fraction like \"1/16\"", field));
    rule.ratios.emplace_back(field, *ratio);
  }
  rule.sources = r.sources();
  return rule;
}

SupportRule read_support(const toml::table& table, const std::string& origin, std::size_t index) {
  GpuReader r(table, origin, fmt::format("support #{}", index + 1));
  for (auto&& [key, value] : table) {
    const std::string_view k = key.str();
    if (k != "fields" && k != "min_compute_capability" && k != "requires" && k != "sources") {
      r.fail(k, "is not a support key (accepted: fields, min_compute_capability, requires, sources)");
    }
  }
  SupportRule rule;
  const toml::array* fields = table.get_as<toml::array>("fields");
  if (!fields || fields->empty()) r.fail("fields", "is required: the tensor rates the rule is about");
  for (const toml::node& f : *fields) {
    if (!f.is_string() || !detail::rate_member(**f.as_string())) {
      r.fail("fields", fmt::format("must list tensor rates (accepted: {})", detail::rate_names()));
    }
    rule.fields.push_back(**f.as_string());
  }
  // Either a compute capability, or a unit the card must have ("tensor_cores": Pascal and the GTX 16 cards
  // share compute capabilities with cards that have tensor cores).
  if (auto requires_unit = r.optional_string("requires")) {
    if (*requires_unit != "tensor_cores") r.fail("requires", fmt::format("'{}' is not tensor_cores", *requires_unit));
    if (table.get("min_compute_capability")) r.fail("requires", "goes without min_compute_capability");
    rule.requires_tensor_cores = true;
  } else {
    rule.min_compute_capability = r.string("min_compute_capability");
  }
  rule.sources = r.sources();
  return rule;
}

Gpu read_gpu(const toml::table& table, const std::string& origin, std::size_t index) {
  std::string id = fmt::format("#{}", index + 1);
  if (auto node = table.get("id"); node && node->is_string()) id = **node->as_string();
  GpuReader r(table, origin, fmt::format("gpu '{}'", id));
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
    r.fail("family", fmt::format("'{}' is not one of {}", family, family_names()));
  }
  g.family = *parsed_family;
  g.architecture = r.string("architecture");
  g.chip = r.string("chip");
  g.compute_capability = r.string("compute_capability");
  {
    const auto& cc = g.compute_capability;
    auto dot = cc.find('.');
    bool ok = dot != std::string::npos && dot > 0 && dot + 1 < cc.size() &&
              std::all_of(cc.begin(), cc.end(),
                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (!ok) r.fail("compute_capability", fmt::format("'{}' is not of the form major.minor", cc));
  }
  g.form_factor = r.optional_string("form_factor");
  g.sm_count = r.integer("sm_count");
  g.cuda_cores = r.integer("cuda_cores");
  g.tensor_cores = r.optional_integer("tensor_cores");
  g.tensor_core_generation = r.optional_integer("tensor_core_generation");
  g.base_clock_mhz = r.optional_number("base_clock_mhz");
  g.boost_clock_mhz = r.optional_number("boost_clock_mhz");
  g.memory_gb = r.number("memory_gb");
  g.memory_type = r.string("memory_type");
  if (!known_memory_types().count(g.memory_type)) {
    r.fail("memory_type",
           fmt::format("'{}' is not a known memory type (GDDR5, GDDR5X, GDDR6, GDDR6X, GDDR7, HBM2, HBM2e, HBM3, "
                       "HBM3e, LPDDR5X)",
                       g.memory_type));
  }
  g.memory_bus_bits = r.integer("memory_bus_bits");
  g.memory_bandwidth_gbs = r.number("memory_bandwidth_gbs");
  g.l2_cache_mb = r.optional_number("l2_cache_mb");
  g.tdp_w = r.number("tdp_w");
  g.power_min_w = r.optional_number("power_min_w");
  if (g.power_min_w && (*parsed_family != Family::laptop || *g.power_min_w > g.tdp_w)) {
    r.fail("power_min_w", "belongs to a laptop GPU (family laptop) and is at most its tdp_w");
  }
  g.pcie_gen = r.optional_integer("pcie_gen");
  g.pcie_lanes = r.optional_integer("pcie_lanes");
  g.nvlink_gbs = r.optional_number("nvlink_gbs");
  g.node_network_gbps = r.optional_number("node_network_gbps");
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
  g.ai_tops = r.optional_number("ai_tops");
  g.ai_tops_rule = r.optional_string("ai_tops_rule");
  g.tensor_rule = r.optional_string("tensor_rule");
  g.nvml_names = r.strings("nvml_names");
  g.pci_device_ids = r.strings("pci_device_ids");
  g.default_over = r.strings("default_over");
  g.default_why = r.optional_string("default_why");
  if (g.default_over.empty() != !g.default_why) r.fail("default_over", "and default_why are given together");
  for (const auto& pci : g.pci_device_ids) {
    if (pci.size() != 4 ||
        !std::all_of(pci.begin(), pci.end(), [](char c) { return std::isxdigit(c) && !std::isupper(c); })) {
      r.fail("pci_device_ids", fmt::format("'{}' is not a PCI device id in lower-case hex (\"2684\")", pci));
    }
  }
  g.launch_date = r.string("launch_date");
  {
    const auto& d = g.launch_date;
    bool ok = (d.size() == 7 || d.size() == 10) && d[4] == '-' && (d.size() == 7 || d[7] == '-');
    if (!ok) r.fail("launch_date", fmt::format("'{}' is not YYYY-MM-DD or YYYY-MM", d));
  }
  g.msrp_usd = r.optional_number("msrp_usd");
  g.market = r.optional_string("market");
  g.variant_of = r.optional_string("variant_of");
  g.sources = r.sources();
  // Every figure needs a source (data/README.md). Names, families and the like are classification.
  for (const Field& field : fields()) {
    if (field.number && field.number(g) && sources_for(g, field.name).empty()) {
      r.fail(field.name, "has no source: list it in a source's 'fields', or add a source without 'fields'");
    }
  }
  return g;
}

}  // namespace

Catalog Catalog::parse(std::string_view toml_text, const std::string& origin) {
  const toml::table root = toml_data::parse(toml_text, origin);
  Catalog catalog;
  catalog.origin_ = origin;
  for (auto&& [key, value] : root) {
    if (key.str() != "gpu" && key.str() != "schema_version" && key.str() != "derivation" && key.str() != "support") {
      throw InputError(fmt::format(
          "{}: unknown top-level key '{}' (accepted: schema_version, derivation, support, gpu)", origin, key.str()));
    }
  }
  if (auto version = root["schema_version"].value<int64_t>(); version && *version != 1) {
    throw InputError(fmt::format("{}: schema_version {} is not supported (this gpusage reads 1)", origin, *version));
  }
  if (const toml::array* rules = root.get_as<toml::array>("derivation")) {
    for (std::size_t i = 0; i < rules->size(); ++i) {
      const toml::table* table = (*rules)[i].as_table();
      if (!table) throw InputError(fmt::format("{}: derivation entry #{} is not a table", origin, i + 1));
      DerivationRule rule = read_rule(*table, origin, i);
      if (catalog.rule(rule.id)) {
        throw InputError(fmt::format("{}: derivation '{}' is defined twice", origin, rule.id));
      }
      catalog.rules_.push_back(std::move(rule));
    }
  }
  if (const toml::array* rules = root.get_as<toml::array>("support")) {
    for (std::size_t i = 0; i < rules->size(); ++i) {
      const toml::table* table = (*rules)[i].as_table();
      if (!table) throw InputError(fmt::format("{}: support entry #{} is not a table", origin, i + 1));
      catalog.support_.push_back(read_support(*table, origin, i));
    }
  }
  const toml::array* gpus = root.get_as<toml::array>("gpu");
  if (!gpus || gpus->empty()) throw InputError(fmt::format("{}: no [[gpu]] tables", origin));
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const toml::table* table = (*gpus)[i].as_table();
    if (!table) throw InputError(fmt::format("{}: gpu entry #{} is not a table", origin, i + 1));
    Gpu gpu = read_gpu(*table, origin, i);
    detail::apply_rules(gpu, catalog.rules_, catalog.support_, origin);
    if (const Gpu* earlier = catalog.find(gpu.id)) {
      throw InputError(fmt::format("{}: gpu '{}': field 'id' repeats entry #{} (ids must be unique)", origin, gpu.id,
                                   earlier - catalog.gpus_.data() + 1));
    }
    catalog.gpus_.push_back(std::move(gpu));
  }
  detail::fill_power_flagships(catalog.gpus_);
  for (const auto& gpu : catalog.gpus_) {
    if (gpu.variant_of && (!catalog.find(*gpu.variant_of) || *gpu.variant_of == gpu.id)) {
      throw InputError(
          fmt::format("{}: gpu '{}': field 'variant_of' names '{}', which is not another gpu of this "
                      "catalog",
                      origin, gpu.id, *gpu.variant_of));
    }
    for (const std::string& other : gpu.default_over) {
      if (!catalog.find(other) || other == gpu.id) {
        throw InputError(
            fmt::format("{}: gpu '{}': field 'default_over' names '{}', which is not another gpu of "
                        "this catalog",
                        origin, gpu.id, other));
      }
    }
  }
  return catalog;
}

Catalog Catalog::load(const std::string& path) { return parse(io::read_file(path, "catalog file"), path); }

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

const DerivationRule* Catalog::rule(std::string_view id) const {
  for (const auto& rule : rules_) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

const Gpu* Catalog::find(std::string_view id) const {
  for (const auto& gpu : gpus_) {
    if (gpu.id == id) return &gpu;
  }
  return nullptr;
}

}  // namespace gpusage::catalog
