// Lookup by what users type: name tokens, resolve, and the selections of --gpu (families, markets, all).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {

bool is_market_group(std::string_view name) {
  const std::string lower = text::to_lower(text::trim(name));
  for (const char* group : kMarketGroups) {
    if (lower == group) return true;
  }
  return false;
}

std::optional<Family> parse_family(std::string_view name) {
  for (Family f : kFamilies) {
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
  return last && std::isalpha(static_cast<unsigned char>(typed[0])) &&
         std::isalpha(static_cast<unsigned char>(token[0])) && token.starts_with(typed);
}

enum class Fit { none, partial, complete, exact };

// Words that make a name another card: a typed name without them never fits a card that has them ("RTX 4070 Ti"
// is not the 4070 Ti SUPER, "L40" not the L40S, "4090" not the 4090 Laptop GPU or the 4090 D, "H100" not the H100
// NVL). Memory sizes, form factors and generation words may be left out: "A800" fits every A800, and asks which.
bool names_another_card(const std::string& token) {
  static const char* const kWords[] = {"ti", "super", "s", "d", "laptop", "nvl", "max", "q", "x", "xp", "mobile"};
  for (const char* word : kWords) {
    if (token == word) return true;
  }
  return false;
}

// How `typed` fits one spelling of a GPU: its tokens in order within the spelling's (none if not); exact
// when they are the same tokens; complete when the spelling has nothing more than the series word "rtx"
// ("5090" is all of "GeForce RTX 5090", only part of "RTX 5090 D"); none when what is left over names
// another card (names_another_card).
Fit fit(const std::vector<std::string>& typed, const std::vector<std::string>& tokens) {
  std::size_t at = 0;
  std::vector<bool> used(tokens.size(), false);
  bool abbreviated = false;  // the last word stood for a longer one: at best a partial fit ("4070 ti" of "tisuper")
  for (std::size_t i = 0; i < typed.size(); ++i) {
    const std::string& t = typed[i];
    while (at < tokens.size() && !token_matches(t, tokens[at], i + 1 == typed.size())) ++at;
    if (at == tokens.size()) return Fit::none;
    abbreviated = abbreviated || t != tokens[at];
    used[at++] = true;
  }
  if (typed == tokens) return Fit::exact;
  Fit result = abbreviated ? Fit::partial : Fit::complete;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (used[i] || tokens[i] == "rtx") continue;
    if (names_another_card(tokens[i])) return Fit::none;
    result = Fit::partial;
  }
  return result;
}

std::string candidates_text(const std::vector<const Gpu*>& gpus) {
  std::vector<std::string> out;
  for (const Gpu* gpu : gpus) out.push_back(fmt::format("{} ({})", gpu->id, gpu->name));
  return text::join(out);
}

}  // namespace

const Gpu& Catalog::resolve_plain(std::string_view name) const {
  if (const Gpu* exact = find(text::to_lower(text::trim(name)))) return *exact;
  const std::vector<std::string> typed = name_tokens(name);
  if (typed.empty()) throw InputError(i18n::tr("empty GPU name"));
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
    if (const Gpu* taken = default_variant(name, at_level)) return *taken;
    if (at_level.size() > 1) {
      throw InputError(i18n::trf("GPU name '{}' is ambiguous: it matches {}; give the id of the one you mean", name,
                                 candidates_text(at_level)));
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
    throw InputError(i18n::trf("unknown GPU '{}' (see `gpusage gpus --family all` for the ids)", name));
  }
  throw InputError(i18n::trf("unknown GPU '{}'; did you mean: {}", name, text::join(close)));
}

const Gpu* Catalog::default_variant(std::string_view name, const std::vector<const Gpu*>& fits) const {
  for (const Gpu* candidate : fits) {
    std::vector<std::string> others;
    for (const Gpu* other : fits) {
      if (other == candidate) continue;
      const auto& over = candidate->default_over;
      if (std::find(over.begin(), over.end(), other->id) == over.end()) break;
      others.push_back(fmt::format("--gpu {} ({})", other->id, other->name));
    }
    if (fits.size() < 2 || others.size() + 1 != fits.size()) continue;
    Gpu taken = *candidate;
    taken.default_note =
        i18n::trf("'{}' is taken as the {} ({}): {}; for another variant give {}", text::trim(name), candidate->name,
                  candidate->id, candidate->default_why.value_or(""), text::join(others, i18n::tr(" or ")));
    for (const Gpu& made : defaulted_) {
      if (made.default_note == taken.default_note) return &made;
    }
    return &defaulted_.emplace_back(std::move(taken));
  }
  return nullptr;
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
  // By id: a name taken as a default variant ("h800") is the catalog entry with a note, a copy at another
  // address, and must not list the card twice beside its id ("h800,h800-sxm5-80gb").
  auto add = [&out](const Gpu* gpu) {
    if (std::none_of(out.begin(), out.end(), [gpu](const Gpu* g) { return g->id == gpu->id; })) out.push_back(gpu);
  };
  for (const std::string& part : text::split(spec, ',')) {
    if (part.empty()) throw InputError(i18n::trf("empty GPU name in '{}'", spec));
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

}  // namespace gpusage::catalog
