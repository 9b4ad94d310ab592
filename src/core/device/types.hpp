// The vendor-neutral device model of libgpusage: what a GPU is (probed once) and what it is doing
// (sampled). Every metric a GPU may not report is a std::optional: "not supported" is empty, never 0
// (STYLE.md practice 8). Units are in the names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::device {

// CUDA versions as NVML encodes them (1000 * major + 10 * minor, e.g. 12040 -> 12.4).
struct CudaVersion {
  int major = 0;
  int minor = 0;
  static CudaVersion from_nvml(int encoded) { return {encoded / 1000, (encoded % 1000) / 10}; }
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }
  friend bool operator==(const CudaVersion&, const CudaVersion&) = default;
};

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }
  friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
};

// What does not change while gpusage runs: identity, limits, capabilities. Probed once per GPU.
// This is the query surface `gpusage doctor` uses (see query.hpp).
struct GpuInfo {
  unsigned index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-8d2c…"
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::string> pci_device_id;  // "2684": the PCI device id in lower-case hex (nvmlPciInfo_t)
  std::optional<ComputeCapability> compute_capability;
  // PCIe link: the current link trains down when idle, so current < max at rest is normal; current < max
  // under load means a riser, slot or BIOS setting is holding the card back.
  std::optional<unsigned> pcie_gen_current;
  std::optional<unsigned> pcie_gen_max;
  std::optional<unsigned> pcie_width_current;
  std::optional<unsigned> pcie_width_max;
  // Power limits in watts: the limit in force (what the board caps at), the configured management limit
  // and the vendor default. A limit below the default means someone capped the card.
  std::optional<double> power_limit_enforced_w;
  std::optional<double> power_limit_w;
  std::optional<double> power_limit_default_w;
  std::optional<bool> persistence_mode;
  std::optional<bool> ecc_enabled;
  std::optional<unsigned> sm_clock_max_mhz;
  std::optional<unsigned> memory_clock_max_mhz;
};

// Clock-throttle ("clocks event") reasons. Bit values are NVML's nvmlClocksThrottleReason* constants
// (nvml.h; the same bits as nvmlClocksEventReason* since driver 535).
namespace throttle {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clocks = 0x100;
inline constexpr std::uint64_t thermal_mask = sw_thermal | hw_thermal;
inline constexpr std::uint64_t power_mask = sw_power_cap | hw_power_brake;

struct Reason {
  std::uint64_t bit;
  std::string_view id;     // stable machine name, used in JSON/CSV
  std::string_view label;  // what a person reads
};
// Every known reason, in bit order.
const std::vector<Reason>& reasons();
// The ids of the set bits ("sw_power_cap", …); unknown bits come out as "0x…".
std::vector<std::string> decode_ids(std::uint64_t mask);
// "power cap, thermal (software)"; "none" when no bit is set.
std::string describe(std::uint64_t mask);
}  // namespace throttle

struct GpuProcess {
  unsigned pid = 0;
  std::string name;                                // empty when unknown
  std::optional<std::uint64_t> used_memory_bytes;  // NVML reports "not available" under some setups
  std::optional<double> cpu_percent;               // host CPU use, 100 = one full core (filled by the sampler)
};

// One reading of one GPU.
struct GpuSample {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::optional<unsigned> utilization_gpu_percent;
  std::optional<unsigned> utilization_memory_percent;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  // NVML's energy counter (Volta and newer): millijoules since the driver was loaded. Differences of two
  // readings are energy; the value itself means nothing. In memory only (not a column of the logs).
  std::optional<std::uint64_t> energy_counter_mj;
  std::optional<double> power_limit_w;  // the enforced limit
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> sm_clock_max_mhz;
  std::optional<unsigned> memory_clock_mhz;
  std::optional<unsigned> memory_clock_max_mhz;
  std::optional<unsigned> fan_percent;
  std::optional<unsigned> pstate;  // 0 (P0, max performance) … 15
  std::optional<std::uint64_t> throttle_mask;
  std::optional<unsigned> pcie_gen;
  std::optional<unsigned> pcie_width;
  std::optional<std::uint64_t> pcie_tx_bytes_per_s;
  std::optional<std::uint64_t> pcie_rx_bytes_per_s;
  std::optional<std::uint64_t> ecc_corrected_volatile;
  std::optional<std::uint64_t> ecc_uncorrected_volatile;
  // Uncorrected errors over the GPU's life (the volatile count restarts at each driver load).
  std::optional<std::uint64_t> ecc_uncorrected_aggregate;
  // Memory health (monitor/health_alerts.hpp turns them into alerts). Pages retired by dynamic page retirement (before
  // Ampere): for repeated single-bit errors, for double-bit errors, and 1 while a retirement waits for a
  // reset. Rows remapped by the row remapper (Ampere and later), and its two flags as NVML gives them (0/1).
  // A GPU without the feature (GeForce, no ECC) has none of these fields.
  std::optional<std::uint64_t> retired_pages_single_bit;
  std::optional<std::uint64_t> retired_pages_double_bit;
  std::optional<unsigned> retired_pages_pending;
  std::optional<unsigned> remapped_rows_corrected;
  std::optional<unsigned> remapped_rows_uncorrected;
  std::optional<unsigned> remapped_rows_pending;
  std::optional<unsigned> remapped_rows_failure;
  // XID numbers the driver reported for this GPU since the previous sample (NVML's critical XID events),
  // oldest first. Empty where the driver reports none or cannot report them.
  std::vector<std::uint64_t> xid_events;
  std::vector<GpuProcess> processes;

  std::optional<double> memory_used_fraction() const {
    if (!memory_used_bytes || !memory_total_bytes || *memory_total_bytes == 0) return std::nullopt;
    return static_cast<double>(*memory_used_bytes) / static_cast<double>(*memory_total_bytes);
  }
};

struct HostSample {
  std::optional<double> cpu_percent;  // all cores together, 0..100
  std::optional<unsigned> cpu_count;
  std::optional<std::uint64_t> memory_used_bytes;  // MemTotal - MemAvailable
  std::optional<std::uint64_t> memory_total_bytes;
};

// One reading of the machine.
struct Sample {
  double unix_time_s = 0;
  std::string backend;  // "nvml", "replay"
  bool gpu_available = false;
  std::string gpu_message;  // why no GPU data, one line; empty when available
  std::optional<std::string> driver_version;
  std::optional<CudaVersion> cuda_driver_version;
  std::vector<GpuSample> gpus;
  HostSample host;
};

}  // namespace gpusage::device
