// Calibration: the model constants in force, plus per-device step-time corrections measured by
// `gpusage bench` on the user's own GPU (`gpusage plan --calibration RESULTS.json`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate/constants.hpp"

namespace gpusage::estimate {

struct Calibration {
  ModelConstants constants = default_constants();
  // GPU id -> measured / predicted step time (median over the measured runs for that GPU).
  std::map<std::string, double> step_time_scale;
  std::vector<std::string> notes;  // what was calibrated from what, for reports

  double scale_for(const std::string& gpu_id) const {
    auto it = step_time_scale.find(gpu_id);
    return it == step_time_scale.end() ? 1.0 : it->second;
  }
};

}  // namespace gpusage::estimate
