#include "core/diagnose/environment.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/common/io.hpp"
#include "core/common/subprocess.hpp"
#include "core/common/text.hpp"
#include "core/device/query.hpp"

namespace gpusage::diagnose {

namespace {

bool is_executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// Probes run with stdout captured and stdin/stderr on /dev/null, in their own process group (core/common/subprocess).
CommandResult run_with_deadline(const std::vector<std::string>& argv, double timeout_s) {
  process::Options options;
  options.argv = argv;
  options.detached = true;
  options.timeout_s = timeout_s;
  const process::Result r = process::run(options);
  return {r.started, r.timed_out, r.exit_code, r.output};
}

class HostEnvironment : public Environment {
 public:
  explicit HostEnvironment(HostOptions options) : options_(std::move(options)) {
    if (options_.search_path.empty()) {
      if (const char* path = std::getenv("PATH")) options_.search_path = text::split(path, ':');
    }
  }

  device::SystemInfo gpus() override { return device::query_system(options_.nvml); }

  std::optional<std::string> read_file(const std::string& path) override {
    return io::try_read_file(options_.root + path);
  }

  std::optional<std::string> find_program(const std::string& name,
                                          const std::vector<std::string>& extra_dirs) override {
    if (name.find('/') != std::string::npos) {
      if (is_executable(name)) return name;
      return std::nullopt;
    }
    for (const auto& dir : options_.search_path) {
      if (dir.empty()) continue;
      const std::string candidate = dir + "/" + name;
      if (is_executable(candidate)) return candidate;
    }
    for (const auto& dir : extra_dirs) {
      const std::string candidate = options_.root + dir + "/" + name;
      if (is_executable(candidate)) return candidate;
    }
    return std::nullopt;
  }

  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override {
    return run_with_deadline(argv, timeout_s);
  }

  std::optional<std::string> getenv(const std::string& name) override {
    if (const char* value = std::getenv(name.c_str())) return std::string(value);
    return std::nullopt;
  }

  bool exists(const std::string& path) override { return ::access((options_.root + path).c_str(), F_OK) == 0; }

 private:
  HostOptions options_;
};

}  // namespace

std::unique_ptr<Environment> open_host_environment(const HostOptions& options) {
  return std::make_unique<HostEnvironment>(options);
}

std::optional<std::string> ScriptedEnvironment::read_file(const std::string& path) {
  auto it = files.find(path);
  if (it == files.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ScriptedEnvironment::find_program(const std::string& name,
                                                             const std::vector<std::string>& extra_dirs) {
  if (auto it = programs.find(name); it != programs.end()) return it->second;
  for (const auto& dir : extra_dirs) {
    const std::string path = dir + "/" + name;
    for (const auto& [n, p] : programs) {
      if (p == path) return p;
    }
  }
  if (name.find('/') != std::string::npos) {
    for (const auto& [n, p] : programs) {
      if (p == name) return p;
    }
  }
  return std::nullopt;
}

CommandResult ScriptedEnvironment::run(const std::vector<std::string>& argv, double /*timeout_s*/) {
  static std::mutex mutex;  // probe() runs the python probe on its own thread
  const std::lock_guard<std::mutex> lock(mutex);
  runs.push_back(argv);
  if (argv.empty()) return {};
  const std::string key = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
  auto it = commands.find(key);
  if (it == commands.end()) return {};
  return it->second;
}

std::optional<std::string> ScriptedEnvironment::getenv(const std::string& name) {
  auto it = variables.find(name);
  if (it == variables.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpusage::diagnose
