// `--log FILE`: appends one record per sample, CSV or JSON Lines by the file's extension.
//
// Durability policy: each sample is one write(2) of complete lines on an O_APPEND descriptor, with no
// user-space buffer, so a killed or crashed gpusage loses nothing it had sampled and never leaves half a
// line behind. fdatasync(2) runs at most once per second (and at close), so a power loss or kernel crash
// loses at most about a second of samples, without an fsync per sample at 10 Hz. A full or failing disk
// (AppendFile) costs samples, never the monitor: the log is cut back to its last whole line and retried.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device/types.hpp"
#include "monitor/alerts.hpp"
#include "monitor/append_file.hpp"

namespace gpusage::monitor {

enum class LogFormat { csv, json_lines };

// .csv -> csv; .jsonl, .ndjson, .json -> JSON Lines. Throws InputError for anything else.
LogFormat log_format_for(const std::string& path);

class LogWriter {
 public:
  // Opens (creating) for append. CSV gets its header whenever the file is empty (new, or cut back to
  // nothing after a fault). Throws InputError naming the path when it cannot be opened.
  explicit LogWriter(const std::string& path, double sync_interval_s = 1.0);

  // Appends the sample's lines; false when a disk fault kept them out (see take_warning). The sample's own
  // time is the clock of the retry backoff.
  bool write(const device::Sample& sample, const std::vector<Alert>& alerts);
  LogFormat format() const { return format_; }
  // One warning line after the first disk fault, once.
  std::optional<std::string> take_warning() { return file_.take_warning(); }

 private:
  LogFormat format_;
  AppendFile file_;
  double sync_interval_s_;
  double last_sync_s_ = 0;
};

}  // namespace gpusage::monitor
