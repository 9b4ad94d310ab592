// Small text helpers shared by the log scanner's files (log_scan*.cpp). Internal to the diagnose module.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan.hpp"

namespace gpusage::diagnose::scan_text {

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

inline void add_once(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

inline LogLine at(std::size_t line, std::string_view text) {
  std::string t = text::trim(text);
  if (t.size() > 400) {
    // resize + append, not substr + "...": GCC 12 warns falsely (-Warray-bounds) on that concatenation.
    t.resize(397);
    t.append("...");
  }
  return {line, t};
}

// The line as a std::string for std::regex, copied only when a pattern needs one: `str()`.
class RegexLine {
 public:
  explicit RegexLine(std::string_view line) : line_(line) {}
  const std::string& operator()() {
    if (owned_.empty()) owned_.assign(line_);
    return owned_;
  }

 private:
  std::string_view line_;
  std::string owned_;
};

}  // namespace gpusage::diagnose::scan_text
