// `--log FILE`: appends one record per sample, CSV or JSON Lines by the file's extension.
//
// Durability policy: each sample is one write(2) of complete lines on an O_APPEND descriptor, with no
// user-space buffer, so a killed or crashed gpusage loses nothing it had sampled and never leaves half a
// line behind. fdatasync(2) runs at most once per second (and at close), so a power loss or kernel crash
// loses at most about a second of samples, without an fsync per sample at 10 Hz.
#pragma once

#include <string>
#include <vector>

#include "core/device/types.hpp"
#include "monitor/alerts.hpp"

namespace gpusage::monitor {

enum class LogFormat { csv, json_lines };

// .csv -> csv; .jsonl, .ndjson, .json -> JSON Lines. Throws InputError for anything else.
LogFormat log_format_for(const std::string& path);

class LogWriter {
 public:
  // Opens (creating) for append. CSV gets its header only when the file is new or empty.
  // Throws InputError naming the path when it cannot be opened.
  explicit LogWriter(const std::string& path, double sync_interval_s = 1.0);
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  ~LogWriter();

  void write(const device::Sample& sample, const std::vector<Alert>& alerts);
  LogFormat format() const { return format_; }

 private:
  void write_all(const std::string& text);
  std::string path_;
  LogFormat format_;
  int fd_ = -1;
  double sync_interval_s_;
  double last_sync_s_ = 0;
};

}  // namespace gpusage::monitor
