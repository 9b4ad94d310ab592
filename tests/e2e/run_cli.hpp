// Runs the built gpusage binary as a user would and captures what it printed and its exit code.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace gpusage::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `args` is appended to the binary path as a shell command line; `env` is prefixed (e.g. "COLUMNS=80").
// The locale variables are cleared first, so that a developer's Chinese locale does not turn the English
// output the tests expect into Chinese; a test that wants a locale names it in `env`, which comes after.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  std::string err_path = std::string(GPUSAGE_BINARY_DIR) + "/e2e-stderr-" + std::to_string(::getpid()) + "-" +
                         std::to_string(counter++) + ".txt";
  std::string command = "LC_ALL= LC_MESSAGES= LANG=C.UTF-8 " + env + (env.empty() ? "" : " ") +
                        std::string(GPUSAGE_CLI) + " " + args + " 2>" + err_path;
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
  std::remove(err_path.c_str());
  return result;
}

inline std::string fixture(const std::string& relative) {
  return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/" + relative;
}

}  // namespace gpusage::testing
