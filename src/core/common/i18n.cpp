#include "core/common/i18n.hpp"

#include <atomic>
#include <cstdlib>
#include <iterator>

#include "core/common/po_catalog.hpp"
#include "core/common/text.hpp"

namespace gpusage::i18n {

// po/zh_CN.po, compiled in by cmake/EmbedText.cmake (src/core/CMakeLists.txt).
extern const char* const kCatalogZhCN;

namespace {

std::atomic<Language> current{Language::en};

// One row per translated language: a zh_TW catalog is a po file, an embed line and a row here.
struct Translation {
  Language language;
  const char* const* po_text;
};
constexpr Translation kTranslations[] = {{Language::zh_CN, &kCatalogZhCN}};

// Read once, at the first lookup in a language other than English; they live as long as the process.
const detail::PoCatalog* catalog_of(Language language) {
  if (language == Language::en) return nullptr;
  static const std::vector<detail::PoCatalog> catalogs = [] {
    std::vector<detail::PoCatalog> read;
    for (const Translation& t : kTranslations) read.push_back(detail::parse_po(*t.po_text));
    return read;
  }();
  for (std::size_t i = 0; i < std::size(kTranslations); ++i) {
    if (kTranslations[i].language == language) return &catalogs[i];
  }
  return nullptr;
}

}  // namespace

std::optional<Language> parse_language(std::string_view name) {
  const std::string lower = text::to_lower(name);
  if (lower == "en" || lower == "en_us" || lower == "en-us" || lower == "c") return Language::en;
  if (lower == "zh" || lower == "zh_cn" || lower == "zh-cn" || lower == "zh-hans") return Language::zh_CN;
  return std::nullopt;
}

std::string accepted_languages() { return "en, zh"; }

Language language_from_locale(const char* lc_all, const char* lc_messages, const char* lang) {
  for (const char* value : {lc_all, lc_messages, lang}) {
    if (value == nullptr || *value == '\0') continue;
    return std::string_view(value).starts_with("zh") ? Language::zh_CN : Language::en;
  }
  return Language::en;
}

Language language_from_environment() {
  return language_from_locale(std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"), std::getenv("LANG"));
}

void set_language(Language language) { current.store(language, std::memory_order_relaxed); }

Language language() { return current.load(std::memory_order_relaxed); }

const char* html_lang(Language language) { return language == Language::zh_CN ? "zh-CN" : "en"; }

std::string tr(const char* msgid) { return trc("", msgid); }

std::string trc(const char* context, const char* msgid) {
  if (const detail::PoCatalog* catalog = catalog_of(language())) {
    if (const Entry* entry = catalog->find(context, msgid)) return entry->forms.front();
  }
  return msgid;
}

std::string trn_text(const char* msgid, const char* msgid_plural, unsigned long n) {
  if (const detail::PoCatalog* catalog = catalog_of(language())) {
    if (const Entry* entry = catalog->find("", msgid)) {
      const std::size_t form = catalog->plural_index(n);
      if (form < entry->forms.size()) return entry->forms[form];
    }
  }
  return n == 1 ? msgid : msgid_plural;
}

std::vector<Entry> catalog_entries(Language language) {
  const detail::PoCatalog* catalog = catalog_of(language);
  return catalog ? catalog->entries : std::vector<Entry>{};
}

}  // namespace gpusage::i18n
