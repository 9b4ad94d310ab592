// Helpers shared by the workload tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::workload::testing {

inline std::string read_fixture(const std::string& name) {
  const std::string path = std::string(GPUSAGE_SOURCE_DIR) + "/tests/unit/workload/fixtures/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline WorkloadOptions at_resolution(int resolution) {
  WorkloadOptions o;
  o.resolution = resolution;
  return o;
}

// A copy of the layer with this exact name (a copy, so that build(...) may be a temporary); fails the
// test when there is none.
inline Layer layer(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << w.id << " has no layer named " << name;
  return Layer{};
}

// Bytes one segment keeps for backward at `element_bytes` per element, plus its fixed bytes.
inline double segment_saved_bytes(const Workload& w, int segment, double element_bytes) {
  double bytes = 0;
  for (const Layer& l : w.layers) {
    if (l.segment == segment) bytes += l.saved_elements * element_bytes + l.saved_fixed_bytes;
  }
  return bytes;
}

// The error message build() / from_hf_config() throws, or "" when nothing is thrown.
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace gpusage::workload::testing
