// Golden outputs, in google/benchmark's output-test style: each case runs the built gpusage as a user would,
// replaces what legitimately varies (timestamps, durations, paths, host facts) with a placeholder such as
// {{TIME}}, and compares the rest byte for byte with tests/golden/expected/NAME.txt. Model figures are never
// placeholders: a changed prediction shows up as a diff to review.
//
// The cases are tests/golden/cases.json. `make golden` (GPUSAGE_GOLDEN_UPDATE=1) rewrites the expected files
// from the current binary; `git diff tests/golden` is then the review.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace gpusage::golden {
namespace {

const std::string kSource = GPUSAGE_SOURCE_DIR;
const std::string kGolden = kSource + "/tests/golden";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// ${SOURCE}, ${FIXTURES}, ${GOLDEN}, ${NVML_STUB}, ${BINARY_DIR} in a case's command line and environment.
std::string expand(std::string text) {
  text = replace_all(text, "${FIXTURES}", kSource + "/tests/fixtures");
  text = replace_all(text, "${GOLDEN}", kGolden);
  text = replace_all(text, "${SOURCE}", kSource);
  text = replace_all(text, "${NVML_STUB}", GPUSAGE_NVML_STUB_MODERN);
  text = replace_all(text, "${BINARY_DIR}", GPUSAGE_BINARY_DIR);
  return text;
}

struct Scrub {
  std::regex pattern;
  std::string placeholder;
};

struct Case {
  std::string name;
  std::string command;  // gpusage's arguments, as a shell command line
  std::string env;      // prefixed to the command ("COLUMNS=120")
  std::vector<Scrub> scrubs;
};

// Applied to every case: what no two runs share.
std::vector<Scrub> common_scrubs() {
  return {{std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z)"), "{{TIME}}"},
          {std::regex(R"(gpusage \d+\.\d+\.\d+( \([^)]*\))?)"), "gpusage {{VERSION}}"}};
}

std::vector<Case> load_cases() {
  const nlohmann::json doc = nlohmann::json::parse(read_text(kGolden + "/cases.json"));
  std::vector<Case> cases;
  for (const auto& c : doc.at("cases")) {
    Case one{c.at("name"), c.at("command"), c.value("env", ""), {}};
    for (const auto& s : c.value("scrub", nlohmann::json::array())) {
      one.scrubs.push_back({std::regex(s.at(0).get<std::string>()), s.at(1).get<std::string>()});
    }
    cases.push_back(std::move(one));
  }
  return cases;
}

// Runs the case and returns its output as the expected file holds it: stdout, then stderr and the exit code.
std::string run_case(const Case& c) {
  const std::string err_path =
      std::string(GPUSAGE_BINARY_DIR) + "/golden-stderr-" + std::to_string(::getpid()) + "-" + c.name + ".txt";
  // LC_ALL=C and a fixed width: the output may not depend on the terminal or the locale of whoever runs it.
  const std::string command = "cd " + kSource + " && env LC_ALL=C COLUMNS=120 " + expand(c.env) + " " +
                              GPUSAGE_CLI + " " + expand(c.command) + " 2>" + err_path;
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return "(could not run: " + command + ")";
  std::array<char, 4096> buffer{};
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  const std::string err = read_text(err_path);
  std::remove(err_path.c_str());
  std::string text = out;
  if (!err.empty()) text += "[stderr]\n" + err;
  text += "[exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "]\n";
  // Paths first (they hold the source directory), then the case's own placeholders, then the common ones.
  text = replace_all(text, GPUSAGE_NVML_STUB_MODERN, "{{NVML_STUB}}");
  text = replace_all(text, GPUSAGE_BINARY_DIR, "{{BINARY_DIR}}");
  text = replace_all(text, kSource, "{{SOURCE}}");
  // Line by line, so that a pattern's ^ and $ are a line's ends.
  std::vector<Scrub> scrubs = c.scrubs;
  for (auto& s : common_scrubs()) scrubs.push_back(std::move(s));
  std::string scrubbed;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    for (const auto& s : scrubs) line = std::regex_replace(line, s.pattern, s.placeholder);
    scrubbed += line + "\n";
  }
  return scrubbed;
}

// gtest prints a parameter that has no printer as its bytes, which ctest shows in every test's name.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, OutputMatchesTheExpectedFile) {
  const Case& c = GetParam();
  const std::string actual = run_case(c);
  const std::string path = kGolden + "/expected/" + c.name + ".txt";
  if (const char* update = std::getenv("GPUSAGE_GOLDEN_UPDATE"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good()) << path << " is missing: run `make golden` and review it";
  EXPECT_EQ(read_text(path), actual) << "gpusage " << c.command << "\nIf the change is intended: make golden, then "
                                     << "review git diff tests/golden";
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace gpusage::golden
