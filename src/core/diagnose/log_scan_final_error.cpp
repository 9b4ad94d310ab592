// The run's last error, whatever it is (issue 54): when no family explains a failed run, doctor says so and
// quotes it instead of calling the log clean. Read in the shapes failures end in:
//   - a Python traceback: "Traceback (most recent call last):", frames ('  File ".../site-packages/torch/
//     nn/modules/module.py", line 1501, in _call_impl'), then the exception line ("RuntimeError: …");
//   - a C++ exception that ended the process: "terminate called after throwing an instance of 'c10::Error'";
//   - a fatal signal: "Segmentation fault (core dumped)".
// Only the last one is kept, with the library that raised it: the package of the traceback's last frame
// (site-packages/dist-packages), else the exception's own namespace ("torch" of torch.cuda.OutOfMemoryError).
#include <cctype>

#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::at;
using scan_text::contains;

const std::vector<TriggerWords>& final_error_triggers() {
  static const std::vector<TriggerWords> lists = {
      {gate::final_error,
       {"traceback (most recent call last)", "file \"", "error", "exception", "terminate called after throwing",
        "segmentation fault"}},
  };
  return lists;
}

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The package of a frame line, '  File "/x/lib/python3.10/site-packages/torch/nn/functional.py", line 3'
// -> "torch"; empty for the user's own code.
std::string frame_package(std::string_view frame) {
  for (std::string_view root : {"site-packages", "dist-packages"}) {
    const std::size_t pos = frame.find(root);
    if (pos == std::string_view::npos) continue;
    std::size_t begin = pos + root.size();
    while (begin < frame.size() && (frame[begin] == '/' || frame[begin] == '\\')) ++begin;
    std::size_t end = begin;
    while (end < frame.size() && (is_word_char(frame[end]) || frame[end] == '-')) ++end;
    if (end > begin) return std::string(frame.substr(begin, end - begin));
  }
  return {};
}

// The exception's qualified name when `line` is a traceback's last line ("torch.cuda.OutOfMemoryError: CUDA
// out of memory…", "ValueError", "Exception: boom"); empty otherwise. Python prints it at the start of a
// line: a name of word characters and dots, ending in Error or Exception, then ':' or nothing.
std::string exception_name(std::string_view line) {
  line = trim_view(line);
  std::size_t end = 0;
  while (end < line.size() && (is_word_char(line[end]) || line[end] == '.')) ++end;
  if (end == 0 || (end < line.size() && line[end] != ':')) return {};
  const std::string_view name = line.substr(0, end);
  for (std::string_view suffix : {"Error", "Exception"}) {
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return std::string(name);
  }
  return {};
}

}  // namespace

void LogScanner::note_final_error(std::size_t n, std::string_view line) {
  LogScan& scan = scan_;
  const std::string_view trimmed = trim_view(line);
  if (contains(line, "Exception ignored in")) {
    unraisable_next_ = true;
    return;
  }
  if (contains(line, "Traceback (most recent call last)")) {
    in_traceback_ = true;
    unraisable_traceback_ = unraisable_next_;
    unraisable_next_ = false;
    frame_library_.clear();
    return;
  }
  if (in_traceback_ && trimmed.substr(0, 6) == "File \"") {
    frame_library_ = frame_package(trimmed);
    return;
  }
  if (in_traceback_) {
    const std::string name = exception_name(trimmed);
    if (name.empty()) return;  // the frames' source lines, chained-exception text
    in_traceback_ = false;
    if (unraisable_traceback_) {
      unraisable_traceback_ = false;
      return;
    }
    scan.final_error = at(n, line);
    const std::size_t dot = name.find('.');
    scan.final_error_library =
        !frame_library_.empty() ? frame_library_ : (dot == std::string::npos ? "Python" : name.substr(0, dot));
    return;
  }
  constexpr std::string_view kTerminate = "terminate called after throwing an instance of '";
  if (const std::size_t pos = line.find(kTerminate); pos != std::string_view::npos) {
    // "… of 'c10::Error'": the namespace names the library (c10 is PyTorch's core).
    const std::string_view type = line.substr(pos + kTerminate.size());
    const std::size_t colons = type.find("::");
    scan.final_error = at(n, line);
    scan.final_error_library =
        colons == std::string_view::npos || colons > type.find('\'') ? "C++" : std::string(type.substr(0, colons));
    return;
  }
  if (contains(line, "Segmentation fault")) {
    scan.final_error = at(n, line);
    scan.final_error_library = "the process (signal 11)";
  }
}

}  // namespace gpusage::diagnose
