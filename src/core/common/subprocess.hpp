// Runs a program as a child process and reads one of its output streams: doctor's probes (nvidia-smi,
// python) with a deadline, and `gpusage bench` streaming gpusage-bench's progress. One runner for both.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::process {

enum class Stream { standard_output, standard_error };

struct Options {
  std::vector<std::string> argv;                        // argv[0] is the program's path (no $PATH search)
  std::optional<std::vector<std::string>> environment;  // "NAME=value" each; empty: this process's
  Stream capture = Stream::standard_output;
  // Probes: stdin and the stream not captured go to /dev/null, and the child gets its own process group,
  // so that a deadline stops whatever it started too (a python that spawned helpers).
  bool detached = false;
  std::optional<double> timeout_s;  // empty: wait for the child however long it takes
  // Called with each chunk read; when empty, the chunks are collected in Result::output.
  std::function<void(std::string_view)> on_output;
};

struct Result {
  bool started = false;    // false: the program could not be run at all
  bool timed_out = false;  // stopped at the deadline; `output` holds what it printed until then
  int exit_code = -1;      // -1 when it was killed by a signal or never started
  std::string output;
};

// Never waits past the deadline. Does not throw for a program that cannot be started (started = false).
Result run(const Options& options);

}  // namespace gpusage::process
