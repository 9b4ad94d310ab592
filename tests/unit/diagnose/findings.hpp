// Test helpers shared by the diagnose tests (one definition, so that a unity batch of them compiles).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/finding.hpp"

namespace gpusage::diagnose {

// The finding with `id`, as a copy: the findings are often a temporary.
inline std::optional<Finding> find(const std::vector<Finding>& findings, const std::string& id) {
  auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
  if (it == findings.end()) return std::nullopt;
  return *it;
}

// The findings' ids, in order.
inline std::vector<std::string> ids(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.id);
  return out;
}

}  // namespace gpusage::diagnose
