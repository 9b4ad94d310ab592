// `gpusage doctor` as one call: probe the environment, run the environment and GPU rules, read the log
// (when given) and run the log rules. The CLI renders the report; to_json is its `--format json` form:
//   { "findings": [ { "id", "severity", "category", "title", "evidence", "fix", "source" (URL), "source_title" } ],
//     "environment": { "driver": …, "gpus": [ … ], "cuda_toolkit": …, "cudnn": …, "nccl": …, "libtorch": …,
//                      "python": { … } }, "log": { "path", "lines" } | null }
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/environment.hpp"
#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/probe.hpp"

namespace gpusage::diagnose {

struct DoctorRequest {
  ProbeOptions probe;
  std::optional<std::string> log_path;  // streamed from the file when log_text is not set
  std::optional<std::string> log_text;  // the log's text, when the caller has it in memory (tests)
  std::istream* log_stream = nullptr;   // streamed from here when set (`--log -`: standard input); log_path names it
  RunContext run;
};

struct DoctorReport {
  EnvironmentFacts facts;
  // The log's findings first (in the order the problems happened), then the environment's and the GPUs'
  // (most severe first within each).
  std::vector<Finding> findings;
  std::optional<std::string> log_path;
  std::optional<std::size_t> log_lines;
};

DoctorReport run_doctor(Environment& env, const DoctorRequest& request, const RuleTable& rules = RuleTable::builtin());

// Reads a log file whole (small fixtures); throws InputError naming the path when it cannot be read.
std::string read_log_file(const std::string& path);
// Throws InputError naming the path when it is a directory or cannot be opened.
void check_log_file(const std::string& path);

nlohmann::json to_json(const Finding& finding);
nlohmann::json to_json(const EnvironmentFacts& facts);
nlohmann::json to_json(const DoctorReport& report);

}  // namespace gpusage::diagnose
