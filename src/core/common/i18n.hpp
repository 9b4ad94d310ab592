// The language gpusage speaks, and the lookup of its messages in the catalogs compiled in (po/*.po).
//
// English is the source language: a message is written in English in the code, marked with one of the
// functions below, and looked up in the current language's catalog; what a catalog lacks stays English.
// xgettext finds the marked messages by these names (scripts/i18n-extract):
//   tr("msgid")                          a message
//   trf("msgid {}", args...)             a message that is an fmt format string, formatted with args
//   trc("context", "msgid")              a message whose translation depends on where it stands
//   trn("one {}", "many {}", n, args...) a message with plural forms, formatted with n's form and args
//   N_("msgid")                          marks a message in a table; translate it where it is shown: tr(label)
// Never translated: JSON and CSV keys, enum values, metric names, finding ids, model and GPU ids, units and
// numbers (docs/i18n/README.md).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::i18n {

// Simplified Chinese first; a zh_TW catalog is a new po/zh_TW.po and one row in i18n.cpp's table.
enum class Language { en, zh_CN };

// "en", "zh", "zh_CN", "zh-CN", "zh-Hans" (case-insensitive); nullopt for anything else.
std::optional<Language> parse_language(std::string_view name);
// The values --lang accepts, for its help and its error message: "en, zh".
std::string accepted_languages();
// POSIX precedence: the first non-empty of LC_ALL, LC_MESSAGES, LANG decides; "zh…" is Chinese (zh_TW and
// zh_HK read the Simplified catalog until a Traditional one exists), anything else English.
Language language_from_locale(const char* lc_all, const char* lc_messages, const char* lang);
// The same, from this process's environment.
Language language_from_environment();

// The process-wide language (English until set). Set once at start-up, before any message is built.
void set_language(Language language);
Language language();
// The BCP 47 tag for HTML's lang attribute: "en", "zh-CN".
const char* html_lang(Language language);

// The catalog lookups (current language). Each returns the English text when the catalog has no entry.
std::string tr(const char* msgid);
std::string trc(const char* context, const char* msgid);
// The plural form for n: English's "one"/"other", or the catalog's Plural-Forms rule.
std::string trn_text(const char* msgid, const char* msgid_plural, unsigned long n);

// A marker for messages in tables (xgettext's keyword), translated later where they are shown.
constexpr const char* N_(const char* msgid) { return msgid; }

// fmt's runtime formatting of a translated format string. A catalog whose placeholders do not suit the
// arguments (the placeholder test catches it first) falls back to the English string, never to an exception.
template <typename... Args>
std::string format_message(const std::string& translated, const char* english, const Args&... args) {
  try {
    return fmt::format(fmt::runtime(translated), args...);
  } catch (const fmt::format_error&) {
    return fmt::format(fmt::runtime(english), args...);
  }
}

template <typename... Args>
std::string trf(const char* msgid, const Args&... args) {
  return format_message(tr(msgid), msgid, args...);
}

template <typename... Args>
std::string trn(const char* msgid, const char* msgid_plural, unsigned long n, const Args&... args) {
  return format_message(trn_text(msgid, msgid_plural, n), n == 1 ? msgid : msgid_plural, args...);
}

// A compiled-in catalog, for tests: every entry of the language's .po (msgctxt, msgid, msgid_plural, forms).
struct Entry {
  std::string context;
  std::string msgid;
  std::string msgid_plural;
  std::vector<std::string> forms;  // msgstr, or msgstr[0..n-1]
};
std::vector<Entry> catalog_entries(Language language);

}  // namespace gpusage::i18n
