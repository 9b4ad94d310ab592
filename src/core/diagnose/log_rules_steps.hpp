// The steps of check_log (log_rules.hpp) that read the GPU software and the libraries, and the list of
// findings they add to. Internal to the diagnose module.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_rules_families.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/rules.hpp"

namespace gpusage::diagnose {

// The findings so far, each beside the line it starts at (for the order they happened in).
struct FindingList {
  const RuleTable& rules;
  std::vector<Finding> out;
  std::vector<std::size_t> first_line;

  void push(Finding f, std::size_t line) {
    out.push_back(std::move(f));
    first_line.push_back(line);
  }
  void add(const char* id, const Matches& matches, Args args = {}) {
    if (matches.empty()) return;
    args.emplace_back("count", std::to_string(matches.size()));
    push(rules.make(id, Category::log, args, evidence_of(matches)), matches.first_line());
  }
  bool has(Severity severity) const {
    return std::any_of(out.begin(), out.end(), [&](const Finding& f) { return f.severity == severity; });
  }
  // In the order they happened.
  std::vector<Finding> in_order() {
    std::vector<std::size_t> order(out.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return first_line[a] < first_line[b]; });
    std::vector<Finding> sorted;
    for (std::size_t i : order) sorted.push_back(std::move(out[i]));
    return sorted;
  }
};

inline std::string wrapped(const std::optional<std::string>& detail, const char* before, const char* after) {
  return detail ? before + *detail + after : std::string();
}

// No kernel image for the GPU, with the framework build that has one.
void check_no_kernel_image(FindingList& list, const LogScan& scan);
// A driver too old for the CUDA runtime, with the minimum driver from the driver <-> CUDA table.
void check_driver_too_old(FindingList& list, const LogScan& scan, const RunContext& ctx);
// NCCL errors and timeouts, or the evidence of an earlier error when they follow one.
void check_nccl(FindingList& list, const LogScan& scan);
// cuDNN errors that are not a consequence of an OOM or of the wrong cuDNN.
void check_cudnn(FindingList& list, const LogScan& scan, bool any_oom);
// The fallback for a failed run no family explains.
void check_unrecognised(FindingList& list, const LogScan& scan);

}  // namespace gpusage::diagnose
