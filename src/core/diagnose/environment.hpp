// Where the doctor's facts come from, behind one interface: the live machine (HostEnvironment: files,
// programs on PATH, NVML) or a script (ScriptedEnvironment: maps of files, programs and their output), so
// the probing code is the same for real and scripted machines (DESIGN.md: hardware behind interfaces).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device/backend.hpp"

namespace gpusage::diagnose {

struct CommandResult {
  bool started = false;    // false: the program could not be run at all
  bool timed_out = false;  // stopped at the deadline; `out` holds what it printed until then
  int exit_code = -1;
  std::string out;  // standard output (standard error is discarded)
};

class Environment {
 public:
  virtual ~Environment() = default;
  // GPUs and driver as NVML reports them; `available` false when there is no driver.
  virtual device::SystemInfo gpus() = 0;
  // The text of a file at its live-system path ("/proc/driver/nvidia/version"); empty when unreadable.
  virtual std::optional<std::string> read_file(const std::string& path) = 0;
  // The path of an executable: `name` itself when it contains '/', else the first match on PATH, then in
  // `extra_dirs` (live-system paths such as /usr/local/cuda/bin).
  virtual std::optional<std::string> find_program(const std::string& name,
                                                  const std::vector<std::string>& extra_dirs = {}) = 0;
  // Runs argv[0] (a path from find_program) with the arguments; never blocks past `timeout_s`. Called from
  // two threads at once (probe() runs the python probe beside the rest); the other calls from one.
  virtual CommandResult run(const std::vector<std::string>& argv, double timeout_s) = 0;
  virtual std::optional<std::string> getenv(const std::string& name) = 0;
  // Whether a file exists at its live-system path, without reading it (WSL2's libcuda.so.1 is megabytes).
  virtual bool exists(const std::string& path) { return read_file(path).has_value(); }
};

struct HostOptions {
  // Prefix for file reads and extra program dirs ("" on a live system; tests point it at a fixture tree).
  std::string root;
  // Program search path; empty: $PATH.
  std::vector<std::string> search_path;
  device::NvmlOptions nvml;
};

// The live machine. Commands run in their own process group and are killed at the deadline.
std::unique_ptr<Environment> open_host_environment(const HostOptions& options = {});

// A scripted machine for tests: every answer comes from the maps.
class ScriptedEnvironment : public Environment {
 public:
  device::SystemInfo system;                      // gpus()
  std::map<std::string, std::string> files;       // path -> text
  std::map<std::string, std::string> programs;    // name -> path
  std::map<std::string, CommandResult> commands;  // argv[0] + " " + argv[1] -> result
  std::map<std::string, std::string> variables;   // environment
  std::vector<std::vector<std::string>> runs;     // every argv run, in order (tests inspect it)

  device::SystemInfo gpus() override { return system; }
  std::optional<std::string> read_file(const std::string& path) override;
  std::optional<std::string> find_program(const std::string& name, const std::vector<std::string>& extra_dirs) override;
  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override;
  std::optional<std::string> getenv(const std::string& name) override;
};

}  // namespace gpusage::diagnose
