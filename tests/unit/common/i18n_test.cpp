// The message catalogs: the .po reader, plural rules, language choice, and the compiled-in zh_CN catalog's
// entries against their English msgids (fmt placeholders must match, so a translation formats the same
// arguments). The catalog's coverage of the marked messages is the test i18n.catalogs (tests/unit/common).
#include "core/common/i18n.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/common/po_catalog.hpp"

namespace gpusage::i18n {

// Restores English after each test: the language is process-wide.
class I18n : public ::testing::Test {
 protected:
  void TearDown() override { set_language(Language::en); }
};

namespace {

// The fmt replacement fields of a format string as (argument index or name, format spec), sorted: "{} {:.1f}"
// and "{1:.1f} {0}" both give {("0", ""), ("1", ".1f")}; the doctor's rule templates (data/doctor/rules.toml)
// name theirs: "{count}" gives ("count", ""). "{{" and "}}" are literal braces.
std::vector<std::pair<std::string, std::string>> placeholders(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> fields;
  int next = 0;
  bool automatic = false;
  bool manual = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') {
      ++i;
      continue;
    }
    if (s[i] != '{') continue;
    if (i + 1 < s.size() && s[i + 1] == '{') {
      ++i;
      continue;
    }
    const std::size_t end = s.find('}', i);
    if (end == std::string::npos) {
      fields.emplace_back("?", "unclosed");
      break;
    }
    const std::string inside = s.substr(i + 1, end - i - 1);
    const std::size_t colon = inside.find(':');
    const std::string id = inside.substr(0, colon);
    const std::string spec = colon == std::string::npos ? "" : inside.substr(colon + 1);
    const bool numbered = !id.empty() && std::isdigit(static_cast<unsigned char>(id[0]));
    automatic = automatic || id.empty();
    manual = manual || numbered;
    fields.emplace_back(id.empty() ? std::to_string(next++) : id, spec);
    i = end;
  }
  // fmt refuses "{} {1}": the message would fall back to English, so the check reports it.
  if (automatic && manual) fields.emplace_back("?", "automatic and manual indexing mixed");
  std::sort(fields.begin(), fields.end());
  return fields;
}

constexpr const char* kSample = R"(# a comment
msgid ""
msgstr ""
"Language: xx\n"
"Plural-Forms: nplurals=3; plural=n==1 ? 0 : n%10>=2 && n%10<=4 ? 1 : 2;\n"

#: somewhere.cpp
msgid "Name"
msgstr "名称"

msgctxt "gpu field"
msgid "Name"
msgstr "型号名"

msgid ""
"a long "
"message with \"quotes\"\n"
msgstr "长"
"消息\n"

#, fuzzy
msgid "Price"
msgstr "价格"

msgid "Untranslated"
msgstr ""

msgid "{} file"
msgid_plural "{} files"
msgstr[0] "{} plik"
msgstr[1] "{} pliki"
msgstr[2] "{} plików"

#~ msgid "Old"
#~ msgstr "旧"
)";

}  // namespace

TEST_F(I18n, PoReaderKeepsTranslatedEntriesWithTheirContext) {
  const detail::PoCatalog catalog = detail::parse_po(kSample);
  ASSERT_NE(catalog.find("", "Name"), nullptr);
  EXPECT_EQ(catalog.find("", "Name")->forms.front(), "名称");
  EXPECT_EQ(catalog.find("gpu field", "Name")->forms.front(), "型号名");
  EXPECT_EQ(catalog.find("", "a long message with \"quotes\"\n")->forms.front(), "长消息\n");
}

TEST_F(I18n, PoReaderLeavesOutFuzzyUntranslatedAndObsoleteEntries) {
  const detail::PoCatalog catalog = detail::parse_po(kSample);
  EXPECT_EQ(catalog.find("", "Price"), nullptr);
  EXPECT_EQ(catalog.find("", "Untranslated"), nullptr);
  EXPECT_EQ(catalog.find("", "Old"), nullptr);
  EXPECT_EQ(catalog.entries.size(), 4u);
}

TEST_F(I18n, PoReaderNamesTheLineOfAMalformedEntry) {
  try {
    detail::parse_po("msgid \"a\"\nmsgstr \"b\"\nmsgstrr \"c\"\n");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "po catalog line 3: unknown keyword 'msgstrr'");
  }
  EXPECT_THROW(detail::parse_po("msgid \"a\nmsgstr \"b\"\n"), std::runtime_error);
}

TEST_F(I18n, PluralFormsFollowTheHeaderRule) {
  const detail::PoCatalog catalog = detail::parse_po(kSample);
  EXPECT_EQ(catalog.plurals, 3u);
  EXPECT_EQ(catalog.plural_index(1), 0u);
  EXPECT_EQ(catalog.plural_index(3), 1u);
  EXPECT_EQ(catalog.plural_index(24), 1u);
  EXPECT_EQ(catalog.plural_index(5), 2u);
  EXPECT_EQ(catalog.plural_index(11), 2u);
}

TEST_F(I18n, PluralExpressionsEvaluateLikeC) {
  EXPECT_EQ(detail::evaluate_plural("0", 7), 0u);
  EXPECT_EQ(detail::evaluate_plural("n != 1", 1), 0u);
  EXPECT_EQ(detail::evaluate_plural("n != 1", 2), 1u);
  EXPECT_EQ(detail::evaluate_plural("(n > 1)", 0), 0u);
  // Russian's rule (GNU gettext manual, "Plural forms").
  const char* russian = "n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2";
  EXPECT_EQ(detail::evaluate_plural(russian, 21), 0u);
  EXPECT_EQ(detail::evaluate_plural(russian, 12), 2u);
  EXPECT_EQ(detail::evaluate_plural(russian, 22), 1u);
  EXPECT_THROW(detail::evaluate_plural("n +", 1), std::runtime_error);
  EXPECT_THROW(detail::evaluate_plural("n % 0", 1), std::runtime_error);
}

TEST_F(I18n, LanguageNamesAcceptedByLang) {
  EXPECT_EQ(parse_language("zh"), Language::zh_CN);
  EXPECT_EQ(parse_language("zh_CN"), Language::zh_CN);
  EXPECT_EQ(parse_language("ZH-cn"), Language::zh_CN);
  EXPECT_EQ(parse_language("en"), Language::en);
  EXPECT_EQ(parse_language("fr"), std::nullopt);
  EXPECT_EQ(parse_language(""), std::nullopt);
}

TEST_F(I18n, TheFirstSetLocaleVariableDecides) {
  EXPECT_EQ(language_from_locale(nullptr, nullptr, "zh_CN.UTF-8"), Language::zh_CN);
  EXPECT_EQ(language_from_locale(nullptr, "zh_TW.UTF-8", "en_US.UTF-8"), Language::zh_CN);
  EXPECT_EQ(language_from_locale("C", nullptr, "zh_CN.UTF-8"), Language::en);  // LC_ALL overrides LANG
  EXPECT_EQ(language_from_locale("", "", "zh_CN.UTF-8"), Language::zh_CN);     // empty counts as unset
  EXPECT_EQ(language_from_locale(nullptr, nullptr, nullptr), Language::en);
  EXPECT_EQ(language_from_locale(nullptr, nullptr, "de_DE.UTF-8"), Language::en);
}

TEST_F(I18n, EnglishIsTheMsgidItself) {
  EXPECT_EQ(tr("VRAM"), "VRAM");
  EXPECT_EQ(trf("GPU comparison: {}", "rtx50"), "GPU comparison: rtx50");
  EXPECT_EQ(trn("{} GPU", "{} GPUs", 1, 1), "1 GPU");
  EXPECT_EQ(trn("{} GPU", "{} GPUs", 2, 2), "2 GPUs");
  EXPECT_STREQ(html_lang(Language::en), "en");
}

TEST_F(I18n, ChineseComesFromTheCompiledInCatalog) {
  set_language(Language::zh_CN);
  EXPECT_EQ(tr("VRAM"), "显存");
  EXPECT_EQ(trf("GPU comparison: {}", "rtx50"), "GPU 对比：rtx50");
  EXPECT_EQ(tr("a message no catalog has"), "a message no catalog has");
  EXPECT_STREQ(html_lang(Language::zh_CN), "zh-CN");
}

TEST_F(I18n, ATranslationMayReorderItsArguments) {
  set_language(Language::zh_CN);
  EXPECT_EQ(trf("{} of {}", "FP16 张量", "GeForce RTX 5060"), "GeForce RTX 5060 的 FP16 张量");
}

TEST_F(I18n, AFormatStringThatDoesNotSuitTheArgumentsFallsBackToEnglish) {
  EXPECT_EQ(format_message("{2} broken", "{} fine", 7), "7 fine");
}

TEST_F(I18n, EveryZhCnEntryHasTheEnglishPlaceholders) {
  const std::vector<Entry> entries = catalog_entries(Language::zh_CN);
  ASSERT_GT(entries.size(), 50u);
  for (const Entry& entry : entries) {
    for (std::size_t form = 0; form < entry.forms.size(); ++form) {
      const std::string& english = entry.msgid_plural.empty() ? entry.msgid : entry.msgid_plural;
      EXPECT_EQ(placeholders(entry.forms[form]), placeholders(english))
          << "msgid \"" << entry.msgid << "\"\nmsgstr \"" << entry.forms[form] << "\"";
    }
  }
}

TEST_F(I18n, ThePlaceholderCheckSeesReorderedAndChangedFields) {
  EXPECT_EQ(placeholders("{} of {}"), placeholders("{1} 的 {0}"));
  EXPECT_NE(placeholders("{:.1f} GiB"), placeholders("{} GiB"));
  EXPECT_NE(placeholders("{} and {}"), placeholders("{}"));
  EXPECT_EQ(placeholders("{{literal}} {}"), placeholders("{{字面}}{}"));
  EXPECT_NE(placeholders("{} {}"), placeholders("{} {1}"));  // fmt cannot mix automatic and manual indexing
  EXPECT_EQ(placeholders("{count} x {summary}"), placeholders("{summary}（{count} 次）"));
  EXPECT_NE(placeholders("{count}"), placeholders("{counted}"));
}

}  // namespace gpusage::i18n
