// Test helper shared by the report tests.
#pragma once

#include <cstddef>
#include <string>

namespace gpusage::report {

// How often `needle` occurs in `text` (overlapping occurrences counted).
inline std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

}  // namespace gpusage::report
