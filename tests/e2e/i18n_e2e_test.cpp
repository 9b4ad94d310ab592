// gpusage in Chinese, against the built binary: --lang and the locale, what is never translated (JSON and
// CSV), the help, and tables whose lines line up by display width.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
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

// doctor on a scripted machine (tests/e2e/doctor_e2e_test.cpp's RTX 5090 with an old PyTorch).
std::string doctor_machine() {
  const std::string root = fixture("doctor/envs/rtx5090-old-torch");
  return "GPUSAGE_NVML_LIBRARY=" + std::string(GPUSAGE_NVML_STUB_MODERN) +
         " GPUSAGE_NVML_STUB_SCRIPT=" + fixture("doctor/nvml/rtx5090.json") + " GPUSAGE_DOCTOR_ROOT=" + root +
         " PATH=" + root + "/bin" + " CUDA_HOME= LIBTORCH= TF_FORCE_GPU_ALLOW_GROWTH= COLUMNS=120";
}

TEST(I18nE2e, DoctorGpusAndValidateJsonKeepTheirKeysInChinese) {
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-i18n-validate.csv";
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,metric,value,software_date\n"
                        "resnet50,rtx4090,fp16,256,train_throughput,1500,2024-04\n"
                        "resnet50,a100-sxm4-80gb,fp16,256,train_throughput,2500,2023-01\n";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"doctor --format json --log " + fixture("doctor/logs/oom_pytorch2.log") + " --model resnet50 --batch 512",
       doctor_machine()},
      {"doctor --format json --log " + fixture("doctor/logs/nan_loss.log"), doctor_machine()},
      {"gpus --gpu rtx5090,h100-sxm5-80gb --format json", ""},
      {"validate " + csv + " --format json", ""}};
  for (const auto& [args, env] : commands) {
    CliResult en = run_cli(args + " --lang en", env);
    CliResult zh = run_cli(args + " --lang zh", env);
    ASSERT_EQ(en.exit_code, 0) << args << en.err;
    ASSERT_EQ(zh.exit_code, 0) << args << zh.err;
    const std::set<std::string> keys = keys_of(en.out);
    EXPECT_GT(keys.size(), 5u) << args;
    EXPECT_EQ(keys, keys_of(zh.out)) << args;
  }
  std::remove(csv.c_str());
}

TEST(I18nE2e, DoctorsOomFixSpeaksOfBatchAndAccumulationWithTheNumbers) {
  CliResult zh = run_cli("doctor --lang zh --log " + fixture("doctor/logs/oom_pytorch2.log") +
                             " --model resnet50 --batch 512 --gpu rtx4090",
                         doctor_machine());
  ASSERT_EQ(zh.exit_code, 0) << zh.err;
  EXPECT_NE(zh.out.find("解决办法："), std::string::npos) << zh.out;
  // The failing batch 512 on an RTX 4090 splits into micro-batches with accumulation steps: both numbers are
  // in the sentence, in Chinese.
  EXPECT_THAT(zh.out, ::testing::ContainsRegex("保持有效批大小 512：批大小 [0-9]+，梯度累积步数 [0-9]+。")) << zh.out;
  EXPECT_THAT(zh.out, ::testing::ContainsRegex("混合精度（bf16 autocast）可将批大小提高到 [0-9]+。")) << zh.out;
  EXPECT_EQ(zh.out.find("Lower the batch size"), std::string::npos) << zh.out;
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
                            "预测模型在各 GPU 上训练的显存占用和速度", "选卡指南", "逐个尝试批大小"}) {
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

// The display columns of `line`, one string per column (a CJK character is one entry that takes two columns).
std::vector<std::string> columns_of(const std::string& line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size();) {
    std::size_t len = 1;
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    const std::string ch = line.substr(i, len);
    for (std::size_t w = text::display_width(ch); w > 0; --w) out.push_back(ch);
    i += len;
  }
  return out;
}

// Every text table in `out` (found by its dashed rule under the header) lines up by display width: no line is
// wider than the rule, the two-space gaps between the rule's columns are blank on every line, and when the
// header reaches the rule's end (its last column is right-aligned) every line ends there too. Returns the
// number of tables checked.
std::size_t expect_tables_line_up(const std::string& out, const std::string& what) {
  const std::vector<std::string> lines = lines_of(out);
  std::size_t tables = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& rule = lines[i];
    if (rule.find("--") == std::string::npos || rule.find_first_not_of("- ") != std::string::npos) continue;
    ++tables;
    const std::size_t width = text::display_width(rule);
    std::vector<std::size_t> gaps;
    for (std::size_t c = 0; c < rule.size(); ++c)
      if (rule[c] == ' ') gaps.push_back(c);
    // The header (one line, or two when units have their own line) and the rows down to the first line that is
    // not part of the table (a note, a blank line).
    std::size_t first = i - 1;
    if (first > 0 && !lines[first - 1].empty() && text::display_width(lines[first - 1]) <= width &&
        columns_of(lines[first - 1]).size() > 0 && lines[first - 1].find("  ") != std::string::npos)
      --first;
    const bool right_aligned_end = text::display_width(lines[i - 1]) == width;
    for (std::size_t j = first; j < lines.size(); ++j) {
      if (j == i) continue;
      const std::string& line = lines[j];
      if (j > i && (line.empty() || text::display_width(line) > width)) break;
      const std::vector<std::string> cells = columns_of(line);
      bool in_columns = true;
      for (std::size_t g : gaps)
        if (g < cells.size() && cells[g] != " ") in_columns = false;
      if (j > i && !in_columns) break;  // a note under the table
      EXPECT_TRUE(in_columns) << what << ": a column starts off its rule\n" << rule << "\n" << line;
      EXPECT_LE(text::display_width(line), width) << what << "\n" << rule << "\n" << line;
      if (right_aligned_end && j > i) {
        EXPECT_EQ(text::display_width(line), width) << what << "\n" << rule << "\n" << line;
      }
    }
  }
  return tables;
}

TEST(I18nE2e, GuideAndPlanTablesLineUpInChinese) {
  for (const char* args :
       {"guide --lang zh", "guide --lang zh --cost", "plan resnet50 --gpu rtx50 --batch 32,64,128,256 --lang zh",
        "plan resnet50 --gpu rtx5090,rtx4090 --batch 256 --lang zh",
        "plan llama3-8b --qlora --seq-len 2048 --gpu rtx5090,rtx4090,h100-sxm5-80gb --lang zh",
        "plan llama3-8b --qlora --seq-len 2048 --gpu rtx5090,8xh100-sxm5-80gb --tokens 1e9 --cost --lang zh"}) {
    for (const char* columns : {"COLUMNS=120", "COLUMNS=80"}) {
      CliResult zh = run_cli(args, std::string(columns) + " GPUSAGE_TODAY=2026-12-05");
      ASSERT_EQ(zh.exit_code, 0) << args << zh.err;
      EXPECT_NE(zh.out.find("批大小"), std::string::npos) << args << "\n" << zh.out;
      EXPECT_GE(expect_tables_line_up(zh.out, std::string(args) + " " + columns), 1u) << zh.out;
    }
  }
}

TEST(I18nE2e, TheReportPageIsChineseWithAChineseFontStack) {
  const std::string out = std::string(GPUSAGE_BINARY_DIR) + "/e2e-i18n-report.html";
  std::remove(out.c_str());
  CliResult zh = run_cli("report --lang zh --gpu rtx5090,rtx4090 --model resnet50 --batch 64,128 --out " + out);
  ASSERT_EQ(zh.exit_code, 0) << zh.err;
  EXPECT_NE(zh.out.find("已写入"), std::string::npos) << zh.out;
  const std::string html = read_text(out);
  std::remove(out.c_str());
  EXPECT_NE(html.find("<html lang=\"zh-CN\">"), std::string::npos);
  for (const char* words : {"<h2>选哪块 GPU？显卡参数对比</h2>", "<h2>放得下吗，有多快？ResNet-50 训练预测</h2>",
                            "各精度的张量核心算力", "每块 GPU 的预测显存峰值（GiB）", "点击排序", ">来源</a>"}) {
    EXPECT_NE(html.find(words), std::string::npos) << words;
  }
  // System fonts with the Chinese characters on macOS, Windows and Linux, in the page and the charts.
  for (const char* font :
       {"\"PingFang SC\"", "\"Microsoft YaHei\"", "\"Noto Sans CJK SC\"", "\"WenQuanYi Micro Hei\""}) {
    EXPECT_NE(html.find(font), std::string::npos) << font;
  }
  EXPECT_EQ(html.find("Will it fit, and how fast?"), std::string::npos);
}

}  // namespace
}  // namespace gpusage::testing
