#include "core/diagnose/rules.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"

namespace gpusage::diagnose {

extern const char* const kBuiltinDoctorRules;  // generated from data/doctor/rules.toml

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "info";
    case Severity::not_checked: return "not_checked";
  }
  return "?";
}

std::string severity_label(Severity severity) {
  switch (severity) {
    case Severity::error: return i18n::trc("severity", "error");
    case Severity::warning: return i18n::trc("severity", "warning");
    case Severity::info: return i18n::trc("severity", "info");
    case Severity::not_checked: return i18n::trc("severity", "not_checked");
  }
  return "?";
}

const char* to_string(Category category) {
  switch (category) {
    case Category::environment: return "environment";
    case Category::gpu: return "gpu";
    case Category::log: return "log";
  }
  return "?";
}

void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) < static_cast<int>(b.severity);
  });
}

std::optional<Version> Version::parse(std::string_view text) {
  Version v;
  std::size_t i = 0;
  while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return std::nullopt;
  while (i < text.size()) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (ec != std::errc{}) break;
    v.parts.push_back(value);
    i = static_cast<std::size_t>(end - text.data());
    // Another part only after a dot followed by a digit ("2.7.1+cu128" stops at '+').
    if (i + 1 < text.size() && text[i] == '.' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  if (v.parts.empty()) return std::nullopt;
  return v;
}

std::string Version::to_string() const {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "." : "") + std::to_string(parts[i]);
  return s;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const std::size_t n = std::max(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int x = i < a.parts.size() ? a.parts[i] : 0;
    const int y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

std::string fill(std::string_view pattern, const Args& args) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {  // "}}" is a literal brace
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {  // "{{" is a literal brace
      out += '{';
      ++i;
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    if (close == std::string_view::npos)
      throw std::logic_error(fmt::format("unclosed '{{' in rule text '{}'", pattern));
    const std::string_view name = pattern.substr(i + 1, close - i - 1);
    auto it = std::find_if(args.begin(), args.end(), [&](const auto& a) { return a.first == name; });
    if (it == args.end()) {
      throw std::logic_error(fmt::format("rule text '{}' needs a value for {{{}}}", pattern, name));
    }
    out += it->second;
    i = close;
  }
  return out;
}

namespace {

std::string need_string(const toml::table& t, std::string_view key, const std::string& where) {
  auto value = t[key].value<std::string>();
  if (!value) throw InputError(fmt::format("{}: missing text field '{}'", where, key));
  return *value;
}

Version need_version(const toml::table& t, std::string_view key, const std::string& where) {
  auto v = Version::parse(need_string(t, key, where));
  if (!v) throw InputError(fmt::format("{}: '{}' is not a version", where, key));
  return *v;
}

std::optional<Severity> parse_severity(std::string_view s) {
  for (Severity v : {Severity::error, Severity::warning, Severity::info, Severity::not_checked}) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

}  // namespace

RuleTable RuleTable::parse(std::string_view toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: {} (line {})", origin, e.description(), e.source().begin.line));
  }
  RuleTable table;
  if (auto* sources = root["sources"].as_table()) {
    for (const auto& [key, node] : *sources) {
      const auto* entry = node.as_table();
      const std::string where = fmt::format("{}: sources.{}", origin, key.str());
      if (!entry) throw InputError(where + ": expected { title, url }");
      table.sources_.emplace_back(std::string(key.str()),
                                  SourceRef{need_string(*entry, "title", where), need_string(*entry, "url", where)});
    }
  }
  auto check_source = [&](const std::string& key, const std::string& where) {
    if (!table.has_source(key)) throw InputError(fmt::format("{}: unknown source '{}'", where, key));
  };
  if (auto* list = root["cuda_driver"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: cuda_driver[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      CudaDriverFact fact{need_version(*entry, "cuda", where), need_string(*entry, "linux_driver", where),
                          need_string(*entry, "source", where)};
      check_source(fact.source, where);
      table.cuda_drivers_.push_back(std::move(fact));
    }
  }
  std::sort(table.cuda_drivers_.begin(), table.cuda_drivers_.end(),
            [](const CudaDriverFact& a, const CudaDriverFact& b) { return a.cuda > b.cuda; });
  if (auto* list = root["minor_version_compatibility"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: minor_version_compatibility[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      MinorCompatFact fact{static_cast<int>((*entry)["cuda_major"].value_or<std::int64_t>(0)),
                           need_string(*entry, "linux_driver", where), need_string(*entry, "source", where)};
      check_source(fact.source, where);
      table.minor_compat_.push_back(std::move(fact));
    }
  }
  if (auto* list = root["architecture"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: architecture[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      ArchitectureFact fact;
      const Version cc = need_version(*entry, "compute_capability", where);
      fact.major = cc.major();
      fact.minor = cc.minor();
      fact.name = need_string(*entry, "name", where);
      fact.first_cuda = need_version(*entry, "first_cuda", where);
      if ((*entry)["dropped_in_cuda"]) fact.dropped_in_cuda = need_version(*entry, "dropped_in_cuda", where);
      if (auto v = (*entry)["pytorch_min"].value<std::string>()) fact.pytorch_min = *v;
      if (auto v = (*entry)["pytorch_wheel"].value<std::string>()) fact.pytorch_wheel = *v;
      if (auto* sources = (*entry)["sources"].as_array()) {
        for (const auto& s : *sources) {
          if (auto key = s.value<std::string>()) {
            check_source(*key, where);
            fact.sources.push_back(*key);
          }
        }
      }
      if (fact.sources.empty()) throw InputError(where + ": needs at least one source");
      table.architectures_.push_back(std::move(fact));
    }
  }
  if (auto* t = root["thresholds"].as_table()) {
    Thresholds& th = table.thresholds_;
    th.grad_norm_explosion_factor = (*t)["grad_norm_explosion_factor"].value_or(th.grad_norm_explosion_factor);
    th.grad_norm_min_history =
        static_cast<int>((*t)["grad_norm_min_history"].value_or<std::int64_t>(th.grad_norm_min_history));
    th.fragmentation_fraction = (*t)["fragmentation_fraction"].value_or(th.fragmentation_fraction);
    th.overflow_skips = static_cast<int>((*t)["overflow_skips"].value_or<std::int64_t>(th.overflow_skips));
    th.python_timeout_s = (*t)["python_timeout_s"].value_or(th.python_timeout_s);
    th.loss_scale_floor = (*t)["loss_scale_floor"].value_or(th.loss_scale_floor);
  }
  if (auto* list = root["rule"].as_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* entry = list->get(i)->as_table();
      const std::string where = fmt::format("{}: rule[{}]", origin, i);
      if (!entry) throw InputError(where + ": expected a table");
      RuleText rule;
      rule.id = need_string(*entry, "id", where);
      const std::string severity = need_string(*entry, "severity", where);
      auto parsed = parse_severity(severity);
      if (!parsed) {
        throw InputError(
            fmt::format("{} ({}): severity '{}' is not error, warning, info or not_checked", where, rule.id, severity));
      }
      rule.severity = *parsed;
      rule.title = need_string(*entry, "title", where);
      rule.evidence = need_string(*entry, "evidence", where);
      rule.fix = need_string(*entry, "fix", where);
      rule.source = need_string(*entry, "source", where);
      check_source(rule.source, where + " (" + rule.id + ")");
      table.rules_.push_back(std::move(rule));
    }
  }
  if (auto* t = root["cudnn_advice"].as_table()) {
    for (const auto& [key, node] : *t) {
      auto text = node.value<std::string>();
      if (!text) continue;
      if (key.str() == "default") {
        table.cudnn_default_advice_ = *text;
      } else {
        table.cudnn_advice_.emplace_back(std::string(key.str()), *text);
      }
    }
  }
  return table;
}

const RuleTable& RuleTable::builtin() {
  static const RuleTable table = parse(kBuiltinDoctorRules, "data/doctor/rules.toml");
  return table;
}

const RuleText& RuleTable::rule(std::string_view id) const {
  for (const auto& r : rules_) {
    if (r.id == id) return r;
  }
  throw std::logic_error(fmt::format("the doctor rule table has no rule '{}'", id));
}

bool RuleTable::has_source(std::string_view key) const {
  return std::any_of(sources_.begin(), sources_.end(), [&](const auto& s) { return s.first == key; });
}

const SourceRef& RuleTable::source(std::string_view key) const {
  for (const auto& [k, s] : sources_) {
    if (k == key) return s;
  }
  throw std::logic_error(fmt::format("the doctor rule table has no source '{}'", key));
}

const ArchitectureFact* RuleTable::architecture(int major, int minor) const {
  for (const auto& a : architectures_) {
    if (a.major == major && a.minor == minor) return &a;
  }
  return nullptr;
}

const CudaDriverFact* RuleTable::min_driver_for(const Version& cuda) const {
  const Version wanted{{cuda.major(), cuda.minor()}};
  for (const auto& fact : cuda_drivers_) {  // newest first: the first entry not newer than wanted
    if (fact.cuda <= wanted) return &fact;
  }
  return nullptr;
}

const MinorCompatFact* RuleTable::minor_compat(int cuda_major) const {
  for (const auto& fact : minor_compat_) {
    if (fact.cuda_major == cuda_major) return &fact;
  }
  return nullptr;
}

std::string RuleTable::cudnn_advice(std::string_view status) const {
  for (const auto& [key, text] : cudnn_advice_) {
    if (key == status) return i18n::tr(text.c_str());  // extracted from rules.toml like the rules' texts
  }
  return i18n::tr(cudnn_default_advice_.c_str());
}

// A rule's text in the reader's language (the catalog's entry for the English template, extracted from
// rules.toml by scripts/i18n-update), filled; a translation that names a placeholder the rule does not give
// falls back to the English template.
static std::string fill_translated(const std::string& pattern, const Args& args) {
  if (pattern.empty()) return pattern;
  const std::string translated = i18n::tr(pattern.c_str());
  if (translated != pattern) {
    try {
      return fill(translated, args);
    } catch (const std::logic_error&) {
    }
  }
  return fill(pattern, args);
}

Finding RuleTable::make(std::string_view id, Category category, const Args& args, std::string evidence, std::string fix,
                        std::string_view source_key) const {
  const RuleText& r = rule(id);
  Finding f;
  f.id = r.id;
  f.severity = r.severity;
  f.category = category;
  f.title = fill_translated(r.title, args);
  f.evidence = evidence.empty() ? fill_translated(r.evidence, args) : std::move(evidence);
  f.fix = fix.empty() ? fill_translated(r.fix, args) : std::move(fix);
  const SourceRef& s = source(source_key.empty() ? std::string_view(r.source) : source_key);
  f.source_title = s.title;
  f.source_url = s.url;
  return f;
}

}  // namespace gpusage::diagnose
