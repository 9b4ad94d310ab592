// The device query API for front ends that need facts rather than a stream (`gpusage doctor`):
// driver and CUDA driver versions, and per GPU its name, memory, compute capability, PCIe link (current vs
// max), power limits (enforced, configured, default) and persistence mode. All fields are optional where the
// hardware may not report them; see types.hpp (GpuInfo) and backend.hpp (SystemInfo).
//
//   auto info = gpusage::device::query_system();
//   if (!info.available) print(info.message);          // "NVIDIA driver not found (…)"
//   for (const auto& gpu : info.gpus)
//     if (gpu.pcie_gen_current < gpu.pcie_gen_max) …   // compare the optionals only when both are set
#pragma once

#include "core/device/backend.hpp"

namespace gpusage::device {

// Loads NVML (NvmlOptions: $GPUSAGE_NVML_LIBRARY overrides the path), reads SystemInfo, unloads.
// Never throws for a missing driver; `available` says whether anything could be read.
SystemInfo query_system(const NvmlOptions& options = {});

// PCIe link running below what card and slot can do (both values known and current < max).
bool pcie_link_degraded(const GpuInfo& gpu);

// The configured power limit is below the default (someone capped the card), when both are known.
bool power_limit_reduced(const GpuInfo& gpu);

}  // namespace gpusage::device
