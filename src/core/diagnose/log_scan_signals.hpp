// Issue 54's families of the log scanner (log_scan_signals.cpp): failures recognised by exception classes,
// error numbers, library names and the shape of a traceback's end. Internal to the diagnose module.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnose/log_scan.hpp"

namespace gpusage::diagnose {

// Out-of-memory reports a line makes that the scanner files with its others (LogScanner::add_oom).
struct SignalOoms {
  std::optional<OomReport> cuda;
  std::optional<OomReport> tf;
};

// Scans one normalised line for the families above, recording them in `scan`.
SignalOoms scan_signals(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower);

// The steps of scan_signals whose words alone woke the line (signal_triggers: signal_too_old, signal_paths):
// a GPU too old for a kernel library, a Windows path. scan_signals takes both steps itself.
void scan_narrow_signals(LogScan& scan, std::size_t n, std::string_view line, bool too_old_words, bool path_words);

// The same families in further libraries' words (log_scan_wordings.cpp), called by scan_signals.
SignalOoms scan_wordings(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower);

// The host out of memory in the words of the daemons that watch it (the kernel's and systemd's OOM killers,
// earlyoom, macOS), of batch and hosted platforms and of further allocators (log_scan_host_memory.cpp): what
// the line says, or empty.
std::string host_memory_watchers(std::string_view line, std::string_view lower);

// A notebook's kernel or a hosted session that died with no error of its own, or a kill or a shortage of RAM told
// in prose (log_scan_host_memory.cpp): a likely host OOM when nothing else explains the log.
bool host_oom_likely(std::string_view lower);

// Records a host-memory line (once per line) with what it says, when `detail` is not empty; the first detail stays.
void note_host_oom(LogScan& scan, std::size_t n, std::string_view line, const std::string& detail);

namespace scan_text {

// The exception class a line starts with, as a traceback's last line does ("ValueError: …",
// "numpy.core._exceptions._ArrayMemoryError: …" gives "_ArrayMemoryError"), or empty.
std::string_view exception_at_start(std::string_view line);

}  // namespace scan_text
}  // namespace gpusage::diagnose
