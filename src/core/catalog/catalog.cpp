#include "core/catalog/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/common/toml_data.hpp"

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

const char* to_string(FigureStatus status) {
  switch (status) {
    case FigureStatus::sourced: return "sourced";
    case FigureStatus::derived: return "derived";
    case FigureStatus::unpublished: return "unpublished";
    case FigureStatus::unsupported: return "unsupported";
  }
  return "?";
}

const Derivation* Gpu::derivation(std::string_view field) const {
  for (const auto& d : derivations) {
    if (d.field == field) return &d;
  }
  return nullptr;
}

bool Gpu::is_unsupported(std::string_view field) const {
  return std::find(unsupported.begin(), unsupported.end(), field) != unsupported.end();
}

bool is_market_group(std::string_view name) {
  const std::string lower = text::to_lower(text::trim(name));
  for (const char* group : kMarketGroups) {
    if (lower == group) return true;
  }
  return false;
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
  static const std::set<std::string> types{"GDDR6", "GDDR6X", "GDDR7", "HBM2", "HBM2e", "HBM3", "HBM3e", "LPDDR5X"};
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
};

// The tensor rates a derivation rule may compute, by TOML key.
struct RateMember {
  const char* field;
  std::optional<double> Gpu::*member;
};
constexpr RateMember kRateMembers[] = {
    {"tf32_tflops", &Gpu::tf32_tflops},   {"fp16_tflops", &Gpu::fp16_tflops},
    {"fp16_acc16_tflops", &Gpu::fp16_acc16_tflops}, {"bf16_tflops", &Gpu::bf16_tflops},
    {"fp8_tflops", &Gpu::fp8_tflops},     {"fp8_acc16_tflops", &Gpu::fp8_acc16_tflops},
    {"fp4_tflops", &Gpu::fp4_tflops},     {"int8_tops", &Gpu::int8_tops},
};
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

}  // namespace

bool is_tensor_rate(std::string_view field) { return rate_member(field) != nullptr; }

std::string ratio_text(double ratio) {
  const double inverse = 1 / ratio;
  if (inverse == static_cast<double>(static_cast<long long>(inverse))) return fmt::format("1/{}", inverse);
  return fmt::format("{}", ratio);
}

namespace {

// "1/16" or "0.5": a positive ratio.
std::optional<double> parse_ratio(const std::string& text) {
  const auto slash = text.find('/');
  char* end = nullptr;
  if (slash == std::string::npos) {
    double v = std::strtod(text.c_str(), &end);
    return end && *end == '\0' && v > 0 ? std::optional<double>(v) : std::nullopt;
  }
  const std::string a = text::trim(text.substr(0, slash)), b = text::trim(text.substr(slash + 1));
  double num = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0') return std::nullopt;
  double den = std::strtod(b.c_str(), &end);
  if (b.empty() || *end != '\0' || !(num > 0) || !(den > 0)) return std::nullopt;
  return num / den;
}

DerivationRule read_rule(const toml::table& table, const std::string& origin, std::size_t index) {
  std::string id = fmt::format("#{}", index + 1);
  if (auto node = table.get("id"); node && node->is_string()) id = **node->as_string();
  GpuReader r(table, origin, fmt::format("derivation '{}'", id));
  for (auto&& [key, value] : table) {
    const std::string_view k = key.str();
    if (k != "id" && k != "basis" && k != "ratios" && k != "sources") {
      r.fail(k, "is not a derivation key (accepted: id, basis, ratios, sources)");
    }
  }
  DerivationRule rule;
  rule.id = r.string("id");
  rule.basis = r.string("basis");
  const toml::table* ratios = table.get_as<toml::table>("ratios");
  if (!ratios || ratios->empty()) r.fail("ratios", "is required: { field = \"1/2\", ... }");
  for (auto&& [key, value] : *ratios) {
    const std::string field(key.str());
    if (!rate_member(field)) {
      r.fail("ratios", fmt::format("names '{}', which is not a tensor rate (accepted: {})", field, rate_names()));
    }
    std::optional<double> ratio;
    if (value.is_string()) {
      ratio = parse_ratio(**value.as_string());
    } else if (value.is_floating_point() || value.is_integer()) {
      ratio = value.is_integer() ? static_cast<double>(**value.as_integer()) : **value.as_floating_point();
      if (!(*ratio > 0)) ratio.reset();
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
    if (k != "fields" && k != "min_compute_capability" && k != "sources") {
      r.fail(k, "is not a support key (accepted: fields, min_compute_capability, sources)");
    }
  }
  SupportRule rule;
  const toml::array* fields = table.get_as<toml::array>("fields");
  if (!fields || fields->empty()) r.fail("fields", "is required: the tensor rates the rule is about");
  for (const toml::node& f : *fields) {
    if (!f.is_string() || !rate_member(**f.as_string())) {
      r.fail("fields", fmt::format("must list tensor rates (accepted: {})", rate_names()));
    }
    rule.fields.push_back(**f.as_string());
  }
  rule.min_compute_capability = r.string("min_compute_capability");
  rule.sources = r.sources();
  return rule;
}

// Computes what the GPU's rule derives from its AI TOPS, and marks what its compute capability lacks.
void apply_rules(Gpu& g, const std::vector<DerivationRule>& rules, const std::vector<SupportRule>& support,
                 const std::string& origin) {
  auto fail = [&](std::string_view field, std::string_view problem) {
    throw InputError(fmt::format("{}: gpu '{}': field '{}' {}", origin, g.id, field, problem));
  };
  if (g.ai_tops.has_value() != g.ai_tops_rule.has_value()) {
    fail(g.ai_tops ? "ai_tops_rule" : "ai_tops", "is required with the other: a published AI TOPS figure and the "
                                                 "rule that reads it go together");
  }
  if (g.ai_tops_rule) {
    const DerivationRule* rule = nullptr;
    for (const auto& candidate : rules) {
      if (candidate.id == *g.ai_tops_rule) rule = &candidate;
    }
    if (!rule) {
      std::vector<std::string> ids;
      for (const auto& candidate : rules) ids.push_back(candidate.id);
      fail("ai_tops_rule", fmt::format("'{}' is not a [[derivation]] of this catalog (accepted: {})",
                                       *g.ai_tops_rule, ids.empty() ? "none defined" : text::join(ids)));
    }
    // A published figure wins: the rule only fills what the spec sheets leave empty.
    for (const auto& [field, ratio] : rule->ratios) {
      auto member = rate_member(field);
      if (g.*member) continue;
      Derivation d{field, rule->id, "ai_tops", *g.ai_tops, ratio};
      g.*member = d.value();
      g.derivations.push_back(std::move(d));
    }
  }
  for (const auto& rule : support) {
    if (g.compute_capability_value() >= std::strtod(rule.min_compute_capability.c_str(), nullptr)) continue;
    for (const auto& field : rule.fields) {
      if (g.*rate_member(field)) {
        fail(field, fmt::format("is set, but compute capability {} lacks it (the catalog's support rule: {} and "
                                "later)",
                                g.compute_capability, rule.min_compute_capability));
      }
      g.unsupported.push_back(field);
    }
  }
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
  g.boost_clock_mhz = r.optional_number("boost_clock_mhz");
  g.memory_gb = r.number("memory_gb");
  g.memory_type = r.string("memory_type");
  if (!known_memory_types().count(g.memory_type)) {
    r.fail("memory_type",
           fmt::format("'{}' is not a known memory type (GDDR6, GDDR6X, GDDR7, HBM2, HBM2e, HBM3, HBM3e, LPDDR5X)",
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
  g.ai_tops = r.optional_number("ai_tops");
  g.ai_tops_rule = r.optional_string("ai_tops_rule");
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

}  // namespace

Catalog Catalog::parse(std::string_view toml_text, const std::string& origin) {
  const toml::table root = toml_data::parse(toml_text, origin);
  Catalog catalog;
  catalog.origin_ = origin;
  for (auto&& [key, value] : root) {
    if (key.str() != "gpu" && key.str() != "schema_version" && key.str() != "derivation" &&
        key.str() != "support") {
      throw InputError(fmt::format("{}: unknown top-level key '{}' (accepted: schema_version, derivation, support, gpu)",
                                   origin, key.str()));
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
    apply_rules(gpu, catalog.rules_, catalog.support_, origin);
    if (const Gpu* earlier = catalog.find(gpu.id)) {
      throw InputError(fmt::format("{}: gpu '{}': field 'id' repeats entry #{} (ids must be unique)", origin,
                                   gpu.id, earlier - catalog.gpus_.data() + 1));
    }
    catalog.gpus_.push_back(std::move(gpu));
  }
  fill_power_flagships(catalog.gpus_);
  for (const auto& gpu : catalog.gpus_) {
    if (gpu.variant_of && (!catalog.find(*gpu.variant_of) || *gpu.variant_of == gpu.id)) {
      throw InputError(fmt::format("{}: gpu '{}': field 'variant_of' names '{}', which is not another gpu of this "
                                   "catalog",
                                   origin, gpu.id, *gpu.variant_of));
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

std::vector<std::string> name_tokens(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  int kind = 0;  // 1: letters, 2: digits
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    const int k = std::isalpha(u) ? 1 : std::isdigit(u) ? 2 : 0;
    if ((k == 0 || k != kind) && !current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
    if (k) current += static_cast<char>(std::tolower(u));
    kind = k;
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  // Vendor and brand words: CUDA and NVML say "NVIDIA GeForce RTX 4090", users say "4090".
  std::erase_if(tokens, [](const std::string& t) { return t == "nvidia" || t == "geforce" || t == "tesla"; });
  return tokens;
}

namespace {

// A typed token stands for a name token when equal. The last typed word may be shortened ("4080 s" for
// SUPER, as one types); no other word ("h200" is not "HGX B200"), and a number never: "20" is not "200".
bool token_matches(const std::string& typed, const std::string& token, bool last) {
  if (typed == token) return true;
  return last && std::isalpha(static_cast<unsigned char>(typed[0])) && std::isalpha(static_cast<unsigned char>(token[0])) &&
         token.starts_with(typed);
}

enum class Fit { none, partial, complete, exact };

// How `typed` fits one spelling of a GPU: its tokens in order within the spelling's (none if not); exact
// when they are the same tokens; complete when the spelling has nothing more than the series word "rtx"
// ("5090" is all of "GeForce RTX 5090", only part of "RTX 5090 D").
Fit fit(const std::vector<std::string>& typed, const std::vector<std::string>& tokens) {
  std::size_t at = 0;
  std::vector<bool> used(tokens.size(), false);
  for (std::size_t i = 0; i < typed.size(); ++i) {
    const std::string& t = typed[i];
    while (at < tokens.size() && !token_matches(t, tokens[at], i + 1 == typed.size())) ++at;
    if (at == tokens.size()) return Fit::none;
    used[at++] = true;
  }
  if (typed == tokens) return Fit::exact;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!used[i] && tokens[i] != "rtx") return Fit::partial;
  }
  return Fit::complete;
}

}  // namespace

const Gpu& Catalog::resolve(std::string_view name) const {
  if (const Gpu* exact = find(text::to_lower(text::trim(name)))) return *exact;
  const std::vector<std::string> typed = name_tokens(name);
  if (typed.empty()) throw InputError("empty GPU name");
  std::vector<std::pair<const Gpu*, Fit>> matches;
  for (const auto& gpu : gpus_) {
    const Fit best = std::max(fit(typed, name_tokens(gpu.id)), fit(typed, name_tokens(gpu.name)));
    if (best != Fit::none) matches.emplace_back(&gpu, best);
  }
  // The best fit wins when it is alone at its level: "5070" is the RTX 5070, not the 5070 Ti.
  for (Fit level : {Fit::exact, Fit::complete, Fit::partial}) {
    std::vector<const Gpu*> at_level;
    for (const auto& [gpu, f] : matches) {
      if (f == level) at_level.push_back(gpu);
    }
    if (at_level.size() == 1) return *at_level.front();
    if (at_level.size() > 1) {
      std::vector<std::string> ids;
      for (const Gpu* gpu : at_level) ids.push_back(gpu->id);
      throw InputError(fmt::format("GPU name '{}' is ambiguous: it matches {}", name, text::join(ids)));
    }
  }
  std::vector<std::string> all_ids;
  for (const auto& gpu : gpus_) all_ids.push_back(gpu.id);
  auto close = text::closest(name, all_ids);
  if (close.empty()) {
    // Neighbours by model: the ids that begin with the same letters ("a10" -> the A100s).
    for (const auto& gpu : gpus_) {
      const auto tokens = name_tokens(gpu.id);
      if (!tokens.empty() && tokens.front() == typed.front() && close.size() < 4) close.push_back(gpu.id);
    }
  }
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

std::vector<const Gpu*> Catalog::market(std::string_view group) const {
  std::vector<const Gpu*> out;
  for (const auto& gpu : gpus_) {
    if (gpu.market && text::to_lower(*gpu.market) == text::to_lower(group)) out.push_back(&gpu);
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
    } else if (is_market_group(part)) {
      for (const Gpu* gpu : market(text::trim(part))) add(gpu);
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
