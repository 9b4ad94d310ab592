// The log scanner's prefilter (issue 54): the matcher against a plain search, and the scanner with and
// without it on every fixture log, on every line of them alone, and on lines made from every entry of the
// error-code table. A rule whose trigger words the prefilter lacks makes these fail on the fixture that
// shows it: add the word to the list of the step that runs the rule (log_scan*.cpp, *_triggers()).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/diagnose/error_codes.hpp"
#include "core/diagnose/log_prefilter.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"

namespace gpusage::diagnose {
namespace {

std::uint64_t naive_groups(const std::vector<TriggerWords>& lists, std::string text) {
  for (char& c : text) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  std::uint64_t found = 0;
  for (const auto& list : lists) {
    for (std::string_view word : list.words) {
      std::string w(word);
      for (char& c : w) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      if (text.find(w) != std::string::npos) found |= std::uint64_t{1} << list.group;
    }
  }
  return found;
}

TEST(LiteralMatcher, FindsEveryGroupWhoseWordOccursIgnoringAsciiCase) {
  const LiteralMatcher m({{0, {"he", "she"}}, {1, {"hers"}}, {5, {"已杀死"}}, {63, {"cuda out of memory"}}});
  EXPECT_EQ(m.groups_in(""), 0u);
  EXPECT_EQ(m.groups_in("nothing here?"), 1u);  // "here" holds "he"
  EXPECT_EQ(m.groups_in("usHERS"), 0b11u);      // "she", "he" and "hers" overlap
  EXPECT_EQ(m.groups_in("xhe"), 1u);            // at the very end
  EXPECT_EQ(m.groups_in("已杀死"), 1u << 5);
  EXPECT_EQ(m.groups_in("RuntimeError: CUDA out of memory."), std::uint64_t{1} << 63);
  EXPECT_EQ(m.groups_in("CUDA out of memor"), 0u);
}

TEST(LiteralMatcher, AgreesWithAPlainSearchOnRandomText) {
  const std::vector<TriggerWords> lists = {
      {0, {"nan", "inf", "non-finite"}}, {1, {"nccl", "cuda"}}, {2, {"cudnn", "status_"}}, {3, {"aab", "abab"}}};
  const LiteralMatcher m(lists);
  std::mt19937 rng(54);
  const std::string alphabet = "abnfiNCcudltsAS_-o ";
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 24, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(m.groups_in(text), naive_groups(lists, text)) << "'" << text << "'";
  }
}

TEST(LiteralMatcher, RefusesAnEmptyWordAndAGroupPast63) {
  EXPECT_THROW(LiteralMatcher({{0, {""}}}), std::logic_error);
  EXPECT_THROW(LiteralMatcher({{64, {"x"}}}), std::logic_error);
}

TEST(ScannerPrefilter, HoldsTheErrorCodeTablesWords) {
  const auto words = scanner_prefilter().word_list();
  for (ErrorGate gate : {ErrorGate::cuda, ErrorGate::nccl, ErrorGate::cudnn, ErrorGate::absl}) {
    for (std::string_view w : ErrorCodeTable::builtin().trigger_words(gate)) {
      EXPECT_NE(std::find(words.begin(), words.end(), std::string(w)), words.end()) << w;
    }
  }
}

// Everything a finding says: the same with and without the prefilter.
std::string findings_text(const LogScan& scan) {
  std::string out = std::to_string(scan.lines) + " lines\n";
  for (const auto& f : check_log(scan, RunContext{})) {
    out += f.id + " | " + f.title + " | " + f.evidence + " | " + f.fix + "\n";
  }
  return out;
}

std::vector<std::string> fixture_logs() {
  std::vector<std::string> paths;
  const std::string root = std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/";
  for (const char* dir : {"real", "logs"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root + dir)) {
      if (entry.path().extension() == ".log") paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ScannerPrefilter, EveryFixtureLogGivesTheSameFindingsWithAndWithoutIt) {
  const auto paths = fixture_logs();
  ASSERT_GE(paths.size(), 300u);
  const Thresholds& th = RuleTable::builtin().thresholds();
  for (const auto& path : paths) {
    EXPECT_EQ(findings_text(scan_log_file(path, th, Prefilter::on)), findings_text(scan_log_file(path, th, Prefilter::off)))
        << path;
  }
}

// A line alone: a rule the prefilter hid would show here even where another line of its log explains the log.
TEST(ScannerPrefilter, EveryFixtureLineAloneGivesTheSameFindingsWithAndWithoutIt) {
  std::size_t lines = 0;
  for (const auto& path : fixture_logs()) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      ++lines;
      const std::string on = findings_text(scan_log(line, Prefilter::on));
      const std::string off = findings_text(scan_log(line, Prefilter::off));
      ASSERT_EQ(on, off) << path << ": " << line;
    }
  }
  EXPECT_GE(lines, 1500u);
}

// Lines the way libraries print each entry of the error-code table: its names, its message.
TEST(ScannerPrefilter, EveryErrorCodeLineGivesTheSameFindingsWithAndWithoutIt) {
  for (const ErrorCode& c : ErrorCodeTable::builtin().codes()) {
    std::vector<std::string> lines;
    lines.push_back("RuntimeError: " + c.name);
    for (const auto& alias : c.aliases) lines.push_back("error: " + alias + ": failed");
    if (!c.message.empty()) {
      lines.push_back("RuntimeError: CUDA error: " + c.message);
      lines.push_back("RuntimeError: NCCL error in: x.cpp:1, " + c.message);
      lines.push_back(c.message);
    }
    lines.push_back(c.family + " error " + std::to_string(c.number));
    for (const auto& line : lines) {
      EXPECT_EQ(findings_text(scan_log(line, Prefilter::on)), findings_text(scan_log(line, Prefilter::off))) << line;
    }
  }
}

}  // namespace
}  // namespace gpusage::diagnose
