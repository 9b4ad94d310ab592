// What `gpusage doctor` reports: findings, each with a severity, the evidence it saw, the fix and the
// source of the advice. Findings are the output, not failures (the command exits 0 with them).
#pragma once

#include <string>
#include <vector>

namespace gpusage::diagnose {

// not_checked: a check that could not run here (no GPU, no python, no torch); says what is missing.
enum class Severity { error, warning, info, not_checked };
const char* to_string(Severity severity);  // the JSON value
// The severity as the text output shows it, in the reader's language ("error", 错误).
std::string severity_label(Severity severity);

// Where a finding comes from; the table output groups by it.
enum class Category { environment, gpu, log };
const char* to_string(Category category);

struct Finding {
  std::string id;  // the rule id in data/doctor/rules.toml, e.g. "gpu-arch-missing"
  Severity severity = Severity::info;
  Category category = Category::environment;
  std::string title;     // one-line verdict
  std::string evidence;  // what was seen: versions, figures, log lines
  std::string fix;       // what to do
  std::string source_title;
  std::string source_url;
};

// Most severe first (error, warning, info, not_checked), stable within a severity.
void sort_findings(std::vector<Finding>& findings);

}  // namespace gpusage::diagnose
