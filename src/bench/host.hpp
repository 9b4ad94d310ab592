// What the bench needs from the host (Linux /proc), without LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpusage::bench {

std::string cpu_model_name();  // /proc/cpuinfo "model name", "unknown CPU" when absent
int logical_cpus();
std::optional<std::int64_t> available_memory_bytes();  // /proc/meminfo MemAvailable

// Peak resident set tracking: reset_peak_rss() makes VmHWM equal to the current RSS (Linux >= 4.0,
// /proc/self/clear_refs "5") after returning free heap memory to the system (malloc_trim);
// peak_rss_bytes() reads VmHWM. Empty when /proc does not allow it.
bool reset_peak_rss();
std::optional<std::int64_t> current_rss_bytes();
std::optional<std::int64_t> peak_rss_bytes();

}  // namespace gpusage::bench
