// cli/language: every command's help has a description in Chinese, and --lang is read before the commands.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/language.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"

namespace gpusage::cli {
namespace {

class Language : public ::testing::Test {
 protected:
  void TearDown() override { i18n::set_language(i18n::Language::en); }
};

void add_commands(CLI::App& app) {
  add_guide_command(app);
  add_gpus_command(app);
  add_plan_command(app);
  add_validate_command(app);
  add_monitor_command(app);
  add_doctor_command(app);
  add_bench_command(app);
  add_report_command(app);
  add_run_command(app);
  add_fit_batch_command(app);
}

// The visible commands and subcommands with their English descriptions.
void visible(const CLI::App& app, std::vector<const CLI::App*>& out) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden (_docs)
    out.push_back(sub);
    visible(*sub, out);
  }
}

TEST_F(Language, EveryCommandHasAChineseDescriptionOrSummary) {
  CLI::App app;
  add_commands(app);
  std::vector<const CLI::App*> commands;
  visible(app, commands);
  ASSERT_GE(commands.size(), 11u);
  i18n::set_language(i18n::Language::zh_CN);
  for (const CLI::App* command : commands) {
    const std::string& english = command->get_description();
    EXPECT_TRUE(has_summary(*command) || i18n::tr(english.c_str()) != english)
        << command->get_name() << ": mark its description with i18n::N_ and translate it, or give it a summary "
        << "in language.cpp's kSummaries";
  }
}

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
