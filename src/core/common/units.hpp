// Units as gpusage prints them: bytes in binary units (as nvidia-smi and CUDA report memory), and what one
// sample is when a throughput is printed.
#pragma once

#include <fmt/format.h>

#include <string>

namespace gpusage::units {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

inline double to_gib(double bytes) { return bytes / kGiB; }

// "12.3 GiB", "512 MiB", "4 KiB", "17 B": the largest binary unit the value reaches (memory, transfer rates).
inline std::string format_bytes(double bytes) {
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  if (bytes >= kMiB) return fmt::format("{:.0f} MiB", bytes / kMiB);
  if (bytes >= kKiB) return fmt::format("{:.0f} KiB", bytes / kKiB);
  return fmt::format("{:.0f} B", bytes);
}

// "11.3 GiB"
inline std::string format_gib(double bytes, int decimals = 1) {
  return fmt::format("{:.{}f} GiB", to_gib(bytes), decimals);
}

// Throughput's unit: images for vision models, sequences for language models (tokens/s is printed beside).
enum class SampleKind { image, sequence };
inline const char* per_second(SampleKind kind) { return kind == SampleKind::image ? "img/s" : "seq/s"; }

}  // namespace gpusage::units
