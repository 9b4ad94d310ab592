// Issue 30's log rules (log_rules_families.cpp): findings for the families log_scan_families.cpp finds and
// for the error codes with a fix of their own. Internal to the diagnose module; check_log (log_rules.hpp)
// merges them with the others in the order they happened.
#pragma once

#include <cstddef>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/rules.hpp"

namespace gpusage::diagnose {

struct PlacedFinding {
  Finding finding;
  std::size_t line = 0;  // where it starts in the log
};

// Whether the log's XLA out-of-memory lines are JAX's (else TensorFlow's, reported as log-tf-oom).
bool xla_oom_is_jax(const LogScan& scan);

// Kernel faults, device-side asserts, JAX OOM, cuDNN and driver mismatches, compilers without the GPU's
// architecture.
std::vector<PlacedFinding> check_error_families(const LogScan& scan, const RuleTable& rules);

// The codes whose only finding is their own fix (CUDA "unknown error", XLA "INTERNAL", …): asked for only
// when nothing more specific explains the log.
std::vector<PlacedFinding> check_generic_codes(const LogScan& scan, const RuleTable& rules);

// "line 12: <text>; 3 more at lines 40, 52, 77".
std::string evidence_of(const Matches& matches);

}  // namespace gpusage::diagnose
