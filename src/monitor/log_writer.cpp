#include "monitor/log_writer.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "monitor/sampler.hpp"
#include "monitor/views.hpp"

namespace gpusage::monitor {

LogFormat log_format_for(const std::string& path) {
  std::string ext = text::to_lower(std::filesystem::path(path).extension().string());
  if (ext == ".csv") return LogFormat::csv;
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return LogFormat::json_lines;
  throw InputError(
      fmt::format("--log '{}': cannot tell the format from the extension; use .csv, or .jsonl for "
                  "JSON Lines",
                  path));
}

LogWriter::LogWriter(const std::string& path, double sync_interval_s)
    : format_(log_format_for(path)),
      file_(path, AppendFile::Open::append, "--log"),
      sync_interval_s_(sync_interval_s) {}

bool LogWriter::write(const device::Sample& sample, const std::vector<Alert>& alerts) {
  std::string text;
  if (format_ == LogFormat::csv)
    text = (file_.size() == 0 ? csv_header() : "") + csv_rows(sample);
  else
    text = sample_json(sample, alerts).dump() + "\n";
  if (!file_.append(text, sample.unix_time_s)) return false;
  double now = unix_now_s();
  if (now - last_sync_s_ >= sync_interval_s_) {
    file_.sync();
    last_sync_s_ = now;
  }
  return true;
}

}  // namespace gpusage::monitor
