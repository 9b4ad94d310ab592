// An append-only log file that survives a full or failing disk (ENOSPC, EIO, EDQUOT): `monitor --log`,
// `run`'s gpu.jsonl and train.log.
//
// A failed or short write is cut back (ftruncate) to the end of the last whole record, so a reader never
// meets half a line. The caller keeps running; writes are then skipped until a retry time that backs off
// from 1 s, doubling, to 60 s of the caller's clock (sample time for the monitor). The first failure yields
// one warning line for the caller to print; later failures and recoveries are silent, so a disk that stays
// full costs one line on stderr, not one per sample.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpusage::monitor {

class AppendFile {
 public:
  enum class Open { append, truncate };
  // Throws InputError naming `path` (and `what`, e.g. "--log") when the file cannot be opened.
  AppendFile(std::string path, Open mode, std::string what);
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile();

  // Writes `bytes` at the end, all of them or (after a fault) none. The first `whole` bytes end on a
  // record boundary: a later fault cuts the file back to there at most (the monitor passes bytes.size(),
  // train.log the end of its last complete line). Returns false when the bytes were not written (a fault
  // now, or waiting for the retry time after one).
  bool append(std::string_view bytes, std::size_t whole, double now_s);
  bool append(std::string_view bytes, double now_s) { return append(bytes, bytes.size(), now_s); }

  // The warning about the first fault, once; nullopt before it and after it was taken.
  std::optional<std::string> take_warning() { return std::exchange(warning_, std::nullopt); }
  // Bytes in the file now (after any cut-back).
  std::size_t size() const { return end_; }
  void sync();

 private:
  void fail(int error, double now_s);
  std::string path_;
  std::string what_;
  int fd_ = -1;
  std::size_t end_ = 0;       // where the next write lands
  std::size_t boundary_ = 0;  // end of the last whole record
  bool failing_ = false;
  bool cut_pending_ = false;  // the cut-back itself failed: retried before the next write
  bool warned_ = false;
  double retry_at_s_ = 0;
  double backoff_s_ = kFirstBackoffS;
  std::optional<std::string> warning_;
  static constexpr double kFirstBackoffS = 1;
  static constexpr double kLastBackoffS = 60;
};

}  // namespace gpusage::monitor
