// train.log: the child's bytes as they come. A full or failing disk stops the log, never the run (the output
// still reaches the terminal): the file is cut back to its last complete line, and after a fault the bytes up
// to the next line end are dropped, so that the log resumes at the start of a line when the disk has room.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "monitor/append_file.hpp"
#include "run/child.hpp"

namespace gpusage::run {

class TrainLog {
 public:
  explicit TrainLog(const std::filesystem::path& path)
      : file_(path.string(), monitor::AppendFile::Open::truncate, "--log-dir") {}
  void write(std::string_view bytes) {
    if (mid_line_) {
      const std::size_t newline = bytes.find('\n');
      if (newline == std::string_view::npos) return;
      bytes.remove_prefix(newline + 1);
      mid_line_ = false;
      if (bytes.empty()) return;
    }
    const std::size_t last_newline = bytes.rfind('\n');
    const std::size_t whole = last_newline == std::string_view::npos ? 0 : last_newline + 1;
    if (!file_.append(bytes, whole, monotonic_s())) mid_line_ = bytes.back() != '\n';
  }
  std::optional<std::string> take_warning() { return file_.take_warning(); }

 private:
  monitor::AppendFile file_;
  bool mid_line_ = false;  // bytes were dropped that did not end a line
};

}  // namespace gpusage::run
