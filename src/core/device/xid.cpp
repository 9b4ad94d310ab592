#include "core/device/xid.hpp"

#include <fmt/format.h>

#include <array>

namespace gpusage::device {

namespace {

// Source: NVIDIA, "XID Errors" (https://docs.nvidia.com/deploy/xid-errors/index.html) and its Xid catalog
// (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html). Names are NVIDIA's; the meaning is
// the cause the documentation lists first for a compute job, the action its resolution bucket in words.
constexpr std::array kXids = {
    XidInfo{13, "Graphics Engine Exception",
            "usually the program itself: an out-of-range index or an illegal instruction in a kernel; rarely the "
            "hardware.",
            "restart the job; if it recurs at the same step, run it under compute-sanitizer to find the kernel.",
            false},
    XidInfo{31, "GPU memory page fault",
            "the program touched an address it does not own (an illegal memory access); rarely a driver or "
            "hardware fault.",
            "restart the job; if it recurs, debug the kernel with compute-sanitizer or CUDA_LAUNCH_BLOCKING=1.", false},
    XidInfo{43, "GPU stopped processing",
            "a channel was stopped after a fault in the program; the GPU itself is usually healthy.",
            "restart the job; look at the XIDs just before this one for the cause.", false},
    XidInfo{45, "Preemptive cleanup, due to previous errors",
            "the driver tore down a process's work, normally because it was killed or an earlier error ended it.",
            "nothing on its own; read the XIDs reported just before it.", false},
    XidInfo{48, "Double Bit ECC Error", "an uncorrectable memory error: data the job read may be corrupt.",
            "drain the node and reset the GPU (nvidia-smi -r) so the page is retired; if it recurs, RMA the GPU.",
            true},
    XidInfo{61, "Internal micro-controller breakpoint/warning",
            "the GPU's internal micro-controller stopped on an error (firmware or hardware).",
            "drain the node and reset the GPU (nvidia-smi -r); if it recurs, contact NVIDIA support.", true},
    XidInfo{62, "Internal micro-controller halt",
            "the GPU's internal micro-controller halted (firmware, hardware or overheating).",
            "drain the node, check cooling, and reset the GPU (nvidia-smi -r); if it recurs, contact NVIDIA "
            "support.",
            true},
    XidInfo{63, "ECC page retirement or row remapping recording event",
            "a bad memory page was recorded for retirement (or a row for remapping); it takes effect at the next "
            "GPU reset.",
            "no action for the job; reset the GPU (nvidia-smi -r) when it is idle to apply it.", false},
    XidInfo{64, "ECC page retirement or row remapper recording failure",
            "the GPU could not record a bad memory page or row: the memory keeps failing.",
            "drain the node and reset the GPU (nvidia-smi -r); if it recurs, RMA the GPU.", true},
    XidInfo{74, "NVLink Error", "an NVLink connection between GPUs failed; multi-GPU jobs (NCCL) on it hang or fail.",
            "drain the node and reset the GPUs (nvidia-smi -r); if it recurs, check NVLink bridges and seating, "
            "then contact support.",
            true},
    XidInfo{79, "GPU has fallen off the bus",
            "the GPU stopped answering on PCIe; every process on it is lost (power, thermal, PCIe link or a "
            "failing card).",
            "drain the node and reboot it (a GPU reset cannot reach a GPU off the bus); check seating, power "
            "cables and temperatures; if it recurs, RMA the GPU.",
            true},
    XidInfo{92, "High single-bit ECC error rate",
            "corrected memory errors arrive faster than usual: the memory is degrading.",
            "keep training, but watch the ECC counters (nvidia-smi -q -d ECC); schedule service if it continues.",
            false},
    XidInfo{94, "Contained ECC error",
            "an uncorrectable memory error that the GPU contained to the process that read the memory; that "
            "process is ended, others go on.",
            "restart the job; reset the GPU (nvidia-smi -r) when it is idle so the row is remapped; RMA if it "
            "recurs.",
            false},
    XidInfo{95, "Uncontained ECC error",
            "an uncorrectable memory error the GPU could not contain: every process on the GPU is affected.",
            "drain the node and reset the GPU (nvidia-smi -r) before using it again; if it recurs, RMA the GPU.", true},
    XidInfo{119, "GSP RPC Timeout",
            "the GPU System Processor (GSP firmware) stopped answering the driver; the GPU may be wedged.",
            "drain the node and reset the GPU (nvidia-smi -r) or reboot; update the driver; if it recurs, "
            "contact NVIDIA support.",
            true},
};

}  // namespace

std::optional<XidInfo> find_xid(std::uint64_t xid) {
  for (const XidInfo& info : kXids)
    if (info.xid == xid) return info;
  return std::nullopt;
}

std::string describe_xid(std::uint64_t xid) {
  if (auto info = find_xid(xid))
    return fmt::format("XID {} ({}): {} Next: {}", xid, info->name, info->meaning, info->action);
  return fmt::format(
      "XID {}: a GPU error gpusage has no description of. Next: look it up in NVIDIA's XID list "
      "(https://docs.nvidia.com/deploy/xid-errors/index.html) and check `dmesg` for the driver's "
      "message around it.",
      xid);
}

}  // namespace gpusage::device
