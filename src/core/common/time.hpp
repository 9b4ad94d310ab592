// Wall-clock time as gpusage writes it: seconds since the Unix epoch inside, ISO 8601 UTC outside.
#pragma once

#include <string>

namespace gpusage::wallclock {

double unix_now_s();

// "2025-12-02T15:50:00Z"; with `milliseconds`, "2025-12-02T15:50:00.900Z" (rounded to the nearest
// millisecond, so 0.9 s stays .900 despite binary floating point).
std::string iso_utc(double unix_time_s, bool milliseconds = true);

// "20251202T155000Z": the compact form for file and directory names.
std::string compact_utc(double unix_time_s);

}  // namespace gpusage::wallclock
