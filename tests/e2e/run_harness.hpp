// Helpers of gpusage run's end-to-end tests (run_e2e_test.cpp, run_watch_e2e_test.cpp): the built CLI
// supervising scripted children (tests/fixtures/run) with the scripted NVML library
// (tests/fixtures/nvml_stub).
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/common/text.hpp"
#include "e2e/process.hpp"
#include "e2e/run_cli.hpp"

namespace gpusage::testing {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const std::string kStub = GPUSAGE_NVML_STUB_MODERN;

inline std::string child(const std::string& name) { return fixture("run/" + name); }

inline std::string temp_path(const std::string& name) {
  return (fs::path(GPUSAGE_BINARY_DIR) / ("e2e-run-" + std::to_string(::getpid()) + "-" + name)).string();
}

// A fresh log directory path (not created: gpusage run creates it).
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_path(name);
  fs::remove_all(dir);
  return dir;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline bool wait_for(const std::function<bool()>& ready, double limit_s = 60) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

inline std::string resolve_tmux() {
  return std::system("command -v tmux >/dev/null 2>&1") == 0 ? "tmux" : "";
}

inline json read_json(const std::string& path) { return json::parse(read_text(path)); }

inline std::vector<json> read_jsonl(const std::string& path) {
  std::vector<json> out;
  for (const auto& line : text::split(read_text(path), '\n'))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// The environment that points a spawned gpusage at the NVML stub with `nvml_script`, or at no NVML at all.
inline std::vector<std::string> stub_env(const std::string& nvml_script) {
  return {"GPUSAGE_NVML_LIBRARY=" + (nvml_script.empty() ? "/nonexistent/libnvidia-ml.so" : kStub),
          "GPUSAGE_NVML_STUB_SCRIPT=" + nvml_script};
}

struct RunResult {
  int exit_code = -1;
  std::string out, err, dir;
};

// `gpusage run --interval 0.1 --log-dir DIR OPTIONS -- CMD…`; "{dir}" and "{err}" in CMD are replaced by
// the log directory and the path of gpusage's stderr file.
inline RunResult run_gpusage(const std::string& name, const std::vector<std::string>& options,
                             std::vector<std::string> command,
                             const std::string& nvml_script = child("gpu_busy.json")) {
  RunResult r;
  r.dir = fresh_dir(name);
  const std::string out = temp_path(name + ".out"), err = temp_path(name + ".err");
  for (auto& a : command) {
    if (a == "{dir}") a = r.dir;
    if (a == "{err}") a = err;
  }
  std::vector<std::string> argv = {GPUSAGE_CLI, "run", "--interval", "0.1", "--log-dir", r.dir};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  Process p(argv, stub_env(nvml_script), out, err);
  r.exit_code = p.wait();
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace gpusage::testing
