// Whole-file reads with a size limit, and output files that are never half-written. Every reader and writer
// of user files goes through here, so they agree on limits and on the wording of their errors.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gpusage::io {

// config.json, bench results, catalogs and measurement tables are a few KiB; 16 MiB bounds the memory a
// mistaken path (a checkpoint, a dataset shard) can take.
inline constexpr std::uintmax_t kMaxInputFileBytes = 16u << 20;
inline constexpr std::uintmax_t kNoSizeLimit = std::numeric_limits<std::uintmax_t>::max();

// The whole of `path`. `what` names the file for the user ("catalog file", "--bench file"); an unreadable
// file throws InputError "cannot read {what} '{path}'", one over `max_bytes` names its size and the limit.
std::string read_file(const std::string& path, std::string_view what, std::uintmax_t max_bytes = kMaxInputFileBytes);

// The whole of `path`, or nothing when it cannot be opened (probes of /proc and /sys files that may be absent).
std::optional<std::string> try_read_file(const std::string& path);

// Writes `content` to a temporary file beside `path`, then renames it over `path`. Throws InputError when
// the directory cannot be written (a user's bad path).
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace gpusage::io
