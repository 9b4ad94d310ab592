#include "run/log_watch.hpp"

#include "core/diagnose/log_scan.hpp"

namespace gpusage::run {

void LogWatch::add(std::string line) {
  lines_.push_back(std::move(line));
  if (lines_.size() > window_) lines_.pop_front();
  dirty_ = true;
}

std::vector<diagnose::Finding> LogWatch::scan() {
  std::vector<diagnose::Finding> fresh;
  if (!dirty_) return fresh;
  dirty_ = false;
  std::string text;
  for (const auto& l : lines_) text += l + "\n";
  for (auto& f : diagnose::check_log(diagnose::scan_log(text), context_))
    if (announced_.insert(f.id).second) fresh.push_back(std::move(f));
  return fresh;
}

}  // namespace gpusage::run
