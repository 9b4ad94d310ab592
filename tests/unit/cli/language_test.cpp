// cli/language: --lang is read before the commands are built (every command's Chinese help: tests/e2e/i18n).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/language.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"

namespace gpusage::cli {
namespace {

class Language : public ::testing::Test {
 protected:
  void TearDown() override { i18n::set_language(i18n::Language::en); }
};

TEST_F(Language, LangIsReadUpToTheChildProgramsWords) {
  std::vector<const char*> args{"gpusage", "run", "--", "python", "train.py", "--lang", "xx"};
  // "xx" would be an error were it gpusage's; the locale decides instead.
  EXPECT_NO_THROW(select_language(static_cast<int>(args.size()), const_cast<char**>(args.data())));
  EXPECT_EQ(i18n::language(), i18n::language_from_environment());
  std::vector<const char*> zh{"gpusage", "gpus", "--lang=zh"};
  select_language(static_cast<int>(zh.size()), const_cast<char**>(zh.data()));
  EXPECT_EQ(i18n::language(), i18n::Language::zh_CN);
}

TEST_F(Language, AnUnknownLanguageNamesTheValueAndTheChoices) {
  std::vector<const char*> args{"gpusage", "--lang", "zn", "gpus"};
  try {
    select_language(static_cast<int>(args.size()), const_cast<char**>(args.data()));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--lang: 'zn' is not a language gpusage speaks; accepted: en, zh (nearest: zh)");
  }
}

}  // namespace
}  // namespace gpusage::cli
