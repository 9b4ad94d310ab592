// gpusage in Chinese, against the built binary: --lang and the locale, what is never translated (JSON and
// CSV), the help, and tables whose lines line up by display width.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/text.hpp"
#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

using Json = nlohmann::json;

// Every key path of a JSON document ("[].derived.fp16_tflops_per_usd"), array elements merged: the shape a
// script reads, whatever the values.
void key_paths(const Json& j, const std::string& at, std::set<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      out.insert(at + "." + key);
      key_paths(value, at + "." + key, out);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) key_paths(value, at + "[]", out);
  }
}

std::set<std::string> keys_of(const std::string& text) {
  std::set<std::string> out;
  key_paths(Json::parse(text), "", out);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(I18nE2e, GpusJsonAndCsvAreTheSameBytesInChinese) {
  for (const char* args : {"gpus --format json", "gpus --family all --format csv", "gpus show rtx5090 --format json"}) {
    CliResult en = run_cli(std::string(args) + " --lang en");
    CliResult zh = run_cli(std::string(args) + " --lang zh");
    ASSERT_EQ(en.exit_code, 0) << args << en.err;
    ASSERT_EQ(zh.exit_code, 0) << args << zh.err;
    EXPECT_EQ(en.out, zh.out) << args;
  }
}

TEST(I18nE2e, JsonKeysAreTheSameInBothLanguages) {
  // Commands whose text is (or will be) translated: their JSON keeps every key, whatever the language.
  for (const char* args : {"plan resnet50 --gpu rtx5090,rtx4090 --batch 64 --format json",
                           "plan llama3-8b --qlora --seq-len 2048 --gpu rtx5090 --format json",
                           "plan resnet50 --gpu rtx5090 --epochs 90 --cost --format json"}) {
    CliResult en = run_cli(std::string(args) + " --lang en");
    CliResult zh = run_cli(std::string(args) + " --lang zh");
    ASSERT_EQ(en.exit_code, 0) << args << en.err;
    ASSERT_EQ(zh.exit_code, 0) << args << zh.err;
    const std::set<std::string> keys = keys_of(en.out);
    EXPECT_GT(keys.size(), 10u) << args;
    EXPECT_EQ(keys, keys_of(zh.out)) << args;
  }
}

TEST(I18nE2e, TheLocaleChoosesChineseAndLangEnWinsOverIt) {
  CliResult locale = run_cli("gpus --gpu rtx5090", "LC_ALL= LC_MESSAGES= LANG=zh_CN.UTF-8");
  ASSERT_EQ(locale.exit_code, 0) << locale.err;
  EXPECT_NE(locale.out.find("显存"), std::string::npos) << locale.out;
  CliResult english = run_cli("gpus --gpu rtx5090 --lang en", "LC_ALL= LC_MESSAGES= LANG=zh_CN.UTF-8");
  EXPECT_EQ(english.out.find("显存"), std::string::npos) << english.out;
  EXPECT_NE(english.out.find("VRAM"), std::string::npos) << english.out;
  CliResult c_locale = run_cli("gpus --gpu rtx5090", "LC_ALL=C LANG=zh_CN.UTF-8");
  EXPECT_NE(c_locale.out.find("VRAM"), std::string::npos) << c_locale.out;
}

TEST(I18nE2e, LangGoesBeforeOrAfterTheCommand) {
  CliResult before = run_cli("--lang zh gpus --gpu rtx5090");
  CliResult after = run_cli("gpus --gpu rtx5090 --lang=zh");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  EXPECT_NE(before.out.find("显存"), std::string::npos);
}

TEST(I18nE2e, AnUnknownLanguageIsOneLineAndExitTwo) {
  CliResult bad = run_cli("gpus --lang fr");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "gpusage: --lang: 'fr' is not a language gpusage speaks; accepted: en, zh\n");
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(run_cli("gpus --lang eng").err,
            "gpusage: --lang: 'eng' is not a language gpusage speaks; accepted: en, zh (nearest: en)\n");
  CliResult missing = run_cli("gpus --lang");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "gpusage: --lang needs a value; accepted: en, zh\n");
}

TEST(I18nE2e, AChildProgramsLangIsNotOurs) {
  // After `--` the words belong to the program run wraps: its --lang is not gpusage's.
  CliResult help = run_cli("run --help -- python train.py --lang fr");
  EXPECT_EQ(help.exit_code, 0) << help.err;
}

TEST(I18nE2e, HelpListsEveryCommandWithAChineseSummary) {
  CliResult help = run_cli("--help --lang zh");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* words : {"用法", "子命令", "选哪块 GPU", "对比数据目录中的 GPU",
                            "预测模型在各 GPU 上训练的显存占用和速度",
                            "选卡指南", "逐个尝试批大小"}) {
    EXPECT_NE(help.out.find(words), std::string::npos) << words << "\n" << help.out;
  }
  // One line a command in the list: the English details stay in the command's own help.
  EXPECT_EQ(help.out.find("Examples:"), std::string::npos) << help.out;
  // Every command listed has a Chinese line: a description marked with i18n::N_ and translated, or a summary
  // in language.cpp's kSummaries.
  bool in_list = false;
  std::size_t commands = 0;
  for (const std::string& line : lines_of(help.out)) {
    if (line == "子命令:") {
      in_list = true;
    } else if (in_list && !line.empty()) {
      ++commands;
      // A CJK character takes 3 bytes and 2 columns: a line with one is longer in bytes than in columns.
      EXPECT_GT(line.size(), text::display_width(line)) << "no Chinese in: " << line;
    }
  }
  EXPECT_GE(commands, 10u);
  CliResult plan = run_cli("plan --help --lang zh");
  EXPECT_NE(plan.out.find("预测模型"), std::string::npos);
  EXPECT_NE(plan.out.find("--lang"), std::string::npos);
}

TEST(I18nE2e, ChineseTableLinesHaveOneDisplayWidth) {
  for (const char* args : {"gpus --lang zh", "gpus --family all --lang zh --wide", "gpus --lang zh --sort tdp_w"}) {
    CliResult zh = run_cli(args, "COLUMNS=120");
    ASSERT_EQ(zh.exit_code, 0) << zh.err;
    // The table is the block down to the first note; its last column is right-aligned, so every line ends at
    // the same column.
    std::vector<std::string> table;
    for (const std::string& line : lines_of(zh.out)) {
      if (line.empty() || line.starts_with("FP16、") || line.starts_with("按 ")) break;
      table.push_back(line);
    }
    ASSERT_GT(table.size(), 4u) << args;
    for (const std::string& line : table) {
      EXPECT_EQ(text::display_width(line), text::display_width(table.front())) << args << "\n" << line;
    }
    if (std::string(args).find("--wide") == std::string::npos) {
      EXPECT_LE(text::display_width(table.front()), 120u);
    }
  }
}

}  // namespace
}  // namespace gpusage::testing
