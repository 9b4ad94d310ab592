// The environment and GPU rules: probed facts in, findings out (pure: no I/O).
#pragma once

#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"
#include "core/diagnose/probe.hpp"
#include "core/diagnose/rules.hpp"

namespace gpusage::diagnose {

std::vector<Finding> check_environment(const EnvironmentFacts& facts, const RuleTable& rules = RuleTable::builtin());

// Whether a binary compiled for `arch_list` ("sm_80", "sm_90a", "compute_90" …) runs on compute capability
// major.minor: a cubin runs on the same major with the same or a higher minor ("a" variants only on their
// exact target); PTX is JIT-compiled for any equal or newer GPU (Blackwell Compatibility Guide, §1.2).
bool arch_list_covers(const std::vector<std::string>& arch_list, int major, int minor);

// The newest CUDA version a driver supports according to the table (the driver column of Table 3).
std::optional<Version> cuda_for_driver(const std::string& driver, const RuleTable& rules);

// What to install for a GPU of compute capability major.minor: "PyTorch 2.7 or newer built for CUDA 12.8
// (pip install torch --index-url https://download.pytorch.org/whl/cu128)".
std::string torch_requirement(int major, int minor, const RuleTable& rules);

}  // namespace gpusage::diagnose
