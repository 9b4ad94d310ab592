// Doctor's log rules on a stream: the recent lines of the child's output are scanned with diagnose::scan_log
// and diagnose::check_log (the same rules as `doctor --log`), and each finding is announced once, when it
// first appears. The window is bounded, so a long run costs the same per scan as a short one; the summary at
// the end scans the whole log again (line numbers and counts there are the log's own).
#pragma once

#include <cstddef>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_rules.hpp"

namespace gpusage::run {

class LogWatch {
 public:
  explicit LogWatch(diagnose::RunContext context, std::size_t window_lines = 2000)
      : context_(context), window_(window_lines) {}

  void add(std::string line);
  // Scans the window when lines arrived since the last scan; returns the findings not announced before.
  std::vector<diagnose::Finding> scan();

 private:
  diagnose::RunContext context_;
  std::size_t window_;
  std::deque<std::string> lines_;
  bool dirty_ = false;
  std::set<std::string> announced_;
};

}  // namespace gpusage::run
