#include "core/common/time.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>

namespace gpusage::wallclock {

namespace {

std::string format_utc(std::time_t seconds, const char* layout) {
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, layout, &tm);
  return text;
}

}  // namespace

double unix_now_s() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string iso_utc(double unix_time_s, bool milliseconds) {
  if (!milliseconds) return format_utc(static_cast<std::time_t>(std::floor(unix_time_s)), "%Y-%m-%dT%H:%M:%SZ");
  const long long total_ms = std::llround(unix_time_s * 1000);
  const long long seconds = total_ms >= 0 ? total_ms / 1000 : (total_ms - 999) / 1000;
  const int ms = static_cast<int>(total_ms - seconds * 1000);
  return fmt::format("{}.{:03d}Z", format_utc(static_cast<std::time_t>(seconds), "%Y-%m-%dT%H:%M:%S"), ms);
}

std::string compact_utc(double unix_time_s) {
  return format_utc(static_cast<std::time_t>(std::floor(unix_time_s)), "%Y%m%dT%H%M%SZ");
}

}  // namespace gpusage::wallclock
