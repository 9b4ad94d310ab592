// The log scanner's prefilter (issue 54): the matcher against a plain search, and the scanner with and
// without it on every fixture log, on every line of them alone, and on lines made from every entry of the
// error-code table. A rule whose trigger words the prefilter lacks makes these fail on the fixture that
// shows it: add the word to the list of the step that runs the rule (log_scan*.cpp, *_triggers()).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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
#include "core/diagnose/log_scan_text.hpp"
#include "core/diagnose/substring.hpp"

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

// The rules' substring test against std::string_view::find: every length around the 16-byte rounds, needles
// at the very start and end, and letters that repeat.
TEST(HasSubstring, AgreesWithFindOnRandomText) {
  std::mt19937 rng(16);
  const std::string alphabet = "aab\xe5\xb7\xb2" "e ";
  for (int round = 0; round < 50000; ++round) {
    std::string haystack(rng() % 70, ' ');
    for (char& c : haystack) c = alphabet[rng() % alphabet.size()];
    std::string needle(rng() % 7, ' ');
    for (char& c : needle) c = alphabet[rng() % alphabet.size()];
    if (round % 5 == 0 && needle.size() <= haystack.size()) needle = haystack.substr(haystack.size() - needle.size());
    ASSERT_EQ(has_substring(haystack, needle), haystack.find(needle) != std::string::npos)
        << "'" << haystack << "' '" << needle << "'";
  }
  EXPECT_TRUE(has_substring("RuntimeError: CUDA out of memory. Tried to allocate", "allocate"));
  EXPECT_FALSE(has_substring("RuntimeError: CUDA out of memory. Tried to allocate", "allocated"));
}

TEST(LiteralMatcher, RefusesAnEmptyWordALineBreakAndAGroupPast63) {
  EXPECT_THROW(LiteralMatcher({{0, {""}}}), std::logic_error);
  EXPECT_THROW(LiteralMatcher({{0, {"two\nlines"}}}), std::logic_error);
  EXPECT_THROW(LiteralMatcher({{64, {"x"}}}), std::logic_error);
}

// The groups of each line of a block, from find_in_block's hits (as the scanner reads them).
std::vector<std::uint64_t> block_groups(const LiteralMatcher& m, const std::string& block) {
  std::vector<BlockHit> hits;
  const auto scratch = m.make_scratch();
  m.find_in_block(block, scratch.get(), hits);
  std::vector<std::uint64_t> groups;
  std::size_t hit = 0;
  for (std::size_t start = 0, nl; (nl = block.find('\n', start)) != std::string::npos; start = nl + 1) {
    groups.push_back(0);
    for (; hit < hits.size() && hits[hit].end <= nl; ++hit) groups.back() |= hits[hit].groups;
  }
  EXPECT_EQ(hit, hits.size());  // no hit past the last line
  return groups;
}

// The automaton line by line (Engine::best too: Hyperscan's database holds only the scanner's words, tested
// below): every line gets the groups a plain search gives it.
TEST(LiteralMatcher, BlocksGiveEachLineItsGroupsWithEitherEngine) {
  const std::vector<TriggerWords> lists = {{0, {"nan", "inf", "non-finite"}},
                                           {1, {"nccl", "cuda"}},
                                           {2, {"cudnn", "status_", "cuda"}},
                                           {3, {"aab", "abab"}},
                                           {63, {"已杀死", "a"}}};
  std::mt19937 rng(5454);
  const std::string alphabet = "abnfiNCcudltsAS_-o \n\n\r";
  for (const auto engine : {LiteralMatcher::Engine::best, LiteralMatcher::Engine::automaton}) {
    const LiteralMatcher m(lists, engine);
    for (int round = 0; round < 300; ++round) {
      std::string block(rng() % 400, ' ');
      for (char& c : block) c = alphabet[rng() % alphabet.size()];
      if (round % 3 == 0) block += "已杀死";
      block += '\n';
      const auto groups = block_groups(m, block);
      std::size_t line = 0;
      for (std::size_t start = 0, nl; (nl = block.find('\n', start)) != std::string::npos; start = nl + 1, ++line) {
        ASSERT_EQ(groups[line], naive_groups(lists, block.substr(start, nl - start))) << m.engine_name() << ": " << block;
      }
    }
  }
}

#ifdef GPUSAGE_TEST_HYPERSCAN
// `pieces` words or their first halves, each followed by one of `separators`.
std::string random_word_text(const std::vector<std::string>& words, std::mt19937& rng, int pieces,
                             std::string_view separators) {
  std::string text;
  for (int piece = 0; piece < pieces; ++piece) {
    const std::string& word = words[rng() % words.size()];
    text += (rng() % 2) ? word : word.substr(0, word.size() / 2);
    text += separators[rng() % separators.size()];
  }
  return text;
}

// The scanner's words were compiled into a Hyperscan database at build time (log_prefilter_embedded.hpp): the
// runtime deserializes it, reports a word where it ends, and gives every line of random blocks made of the
// words the groups the automaton gives it. Other words than the embedded ones get no engine (no compiler).
TEST(ScannerPrefilter, EmbeddedHyperscanDatabaseFindsTheScannersWords) {
  const LiteralMatcher& m = scanner_prefilter();
  ASSERT_EQ(m.engine_name().rfind("hyperscan ", 0), 0u) << m.engine_name();
  auto scratch = m.make_scratch();
  ASSERT_NE(scratch, nullptr);
  const std::string block = "epoch 1\nset NUM_WORKERS=0 here\n";
  std::vector<BlockHit> hits;
  m.find_in_block(block, scratch.get(), hits);
  const std::size_t end = block.find("NUM_WORKERS") + 11;  // 23
  const auto at = std::find_if(hits.begin(), hits.end(), [&](const BlockHit& h) { return h.end == end; });
  ASSERT_NE(at, hits.end());
  EXPECT_EQ(end, 23u);
  EXPECT_NE(at->groups & (std::uint64_t{1} << gate::workers), 0u);

  const LiteralMatcher automaton(scanner_trigger_words(), LiteralMatcher::Engine::automaton);
  const auto& words = automaton.word_list();
  std::mt19937 rng(5454);
  for (int round = 0; round < 200; ++round) {
    const std::string random = random_word_text(words, rng, 20, " \n\tX") + '\n';
    EXPECT_EQ(block_groups(m, random), block_groups(automaton, random)) << random;
  }

  const LiteralMatcher other({{0, {"nan", "inf"}}});
  EXPECT_EQ(other.engine_name(), "aho-corasick");
}

// Where Hyperscan answers, no automaton is built (its table was most of doctor's heap, issue 54), and a single
// line's groups (LogScanner::feed_line) come from the engine: the automaton's, with the scanner's scratch or none.
TEST(ScannerPrefilter, TheEngineAnswersSingleLinesWithoutAnAutomaton) {
  const LiteralMatcher& m = scanner_prefilter();
  EXPECT_EQ(m.states(), 0u);
  const LiteralMatcher automaton(scanner_trigger_words(), LiteralMatcher::Engine::automaton);
  EXPECT_GT(automaton.states(), 1u);
  const auto scratch = m.make_scratch();
  const auto& words = automaton.word_list();
  std::mt19937 rng(54);
  for (int round = 0; round < 300; ++round) {
    std::string line = random_word_text(words, rng, 6, " \tX_");
    if (round % 2)
      std::transform(line.begin(), line.end(), line.begin(), [](unsigned char c) { return std::toupper(c); });
    const std::uint64_t expected = automaton.groups_in(line);
    EXPECT_EQ(m.groups_in(line, scratch.get()), expected) << line;
    EXPECT_EQ(m.groups_in(line), expected) << line;
  }
}
#endif

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

// The whole corpus as one stream (every fixture log, one after another), read in chunks of random sizes: the
// block reading, the lines passed over and the prefilter give what every rule on every line gives, read line by
// line.
TEST(ScannerPrefilter, TheWholeCorpusInRandomChunksGivesWhatEveryRuleOnEveryLineGives) {
  std::string corpus;
  for (const auto& path : fixture_logs()) {
    std::ifstream in(path, std::ios::binary);
    corpus.append(std::istreambuf_iterator<char>(in), {});
    if (!corpus.empty() && corpus.back() != '\n') corpus += '\n';
  }
  const Thresholds& th = RuleTable::builtin().thresholds();
  LogScanner every_rule(th, Prefilter::off);
  for (std::size_t start = 0, nl; start < corpus.size(); start = nl + 1) {
    nl = corpus.find('\n', start);
    every_rule.feed_line(std::string_view(corpus).substr(start, nl - start));
  }
  every_rule.finish();
  std::mt19937 rng(54);
  LogScanner filtered(th, Prefilter::on);
  for (std::size_t at = 0; at < corpus.size();) {
    const std::size_t size = std::min<std::size_t>(corpus.size() - at, rng() % 5000);
    filtered.feed_text(std::string_view(corpus).substr(at, size));
    at += size;
  }
  filtered.finish();
  EXPECT_GT(every_rule.scan().lines, 3000u);
  EXPECT_EQ(findings_text(filtered.scan()), findings_text(every_rule.scan()));
  EXPECT_EQ(filtered.scan().grad_norm_count, every_rule.scan().grad_norm_count);
  EXPECT_EQ(filtered.scan().non_finite.size(), every_rule.scan().non_finite.size());
  EXPECT_EQ(filtered.scan().cuda_oom_count, every_rule.scan().cuda_oom_count);
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
