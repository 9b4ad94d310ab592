#include "core/device/types.hpp"

#include <fmt/format.h>

namespace gpusage::device::throttle {

const std::vector<Reason>& reasons() {
  // Labels follow nvidia-smi -q's "Clocks Event Reasons" wording, shortened.
  static const std::vector<Reason> all = {
      {gpu_idle, "gpu_idle", "idle"},
      {applications_clocks, "applications_clocks", "application clocks setting"},
      {sw_power_cap, "sw_power_cap", "power cap"},
      {hw_slowdown, "hw_slowdown", "hardware slowdown"},
      {sync_boost, "sync_boost", "sync boost"},
      {sw_thermal, "sw_thermal", "thermal (software)"},
      {hw_thermal, "hw_thermal", "thermal (hardware)"},
      {hw_power_brake, "hw_power_brake", "power brake (hardware)"},
      {display_clocks, "display_clocks", "display clock setting"},
  };
  return all;
}

std::vector<std::string> decode_ids(std::uint64_t mask) {
  std::vector<std::string> ids;
  std::uint64_t known = 0;
  for (const Reason& reason : reasons()) {
    known |= reason.bit;
    if (mask & reason.bit) ids.emplace_back(reason.id);
  }
  if (std::uint64_t unknown = mask & ~known) ids.push_back(fmt::format("{:#x}", unknown));
  return ids;
}

std::string describe(std::uint64_t mask) {
  std::string text;
  std::uint64_t known = 0;
  for (const Reason& reason : reasons()) {
    known |= reason.bit;
    if (mask & reason.bit) text += (text.empty() ? "" : ", ") + std::string(reason.label);
  }
  if (std::uint64_t unknown = mask & ~known) text += (text.empty() ? "" : ", ") + fmt::format("other {:#x}", unknown);
  return text.empty() ? "none" : text;
}

}  // namespace gpusage::device::throttle
