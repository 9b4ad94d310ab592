// What an XID means. The NVIDIA driver reports a GPU error as an XID number (in the kernel log, and to NVML's
// event listeners); the number alone tells a person little. This is the table of the XIDs training jobs meet,
// each with its meaning and NVIDIA's documented next step, from NVIDIA's "XID Errors" documentation:
//   https://docs.nvidia.com/deploy/xid-errors/index.html (the XID list and their causes) and
//   https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (the catalog's "resolution bucket":
//   RESTART_APP, RESET_GPU, RESTART_BM (reboot the node), CONTACT_SUPPORT, IGNORE).
// Pure data: no NVML here (the backend delivers the numbers, monitor/health_alerts.cpp words the alerts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusage::device {

struct XidInfo {
  std::uint64_t xid = 0;
  std::string_view name;     // NVIDIA's short description: "GPU has fallen off the bus"
  std::string_view meaning;  // what usually caused it, in a training job's terms
  std::string_view action;   // the documented next step
  // The GPU or the node needs attention (a reset, a reboot, service), not only the program: a critical alert.
  bool hardware = false;
};

// The entry for `xid`, or nullopt for an XID not in the table.
std::optional<XidInfo> find_xid(std::uint64_t xid);

// "XID 79 (GPU has fallen off the bus): <meaning> Next: <action>"; for an XID not in the table a generic line
// that points at NVIDIA's list.
std::string describe_xid(std::uint64_t xid);

}  // namespace gpusage::device
