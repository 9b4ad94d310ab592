// GPU health as alerts: XID events, uncorrected ECC errors, retired pages (before Ampere) and remapped rows
// (Ampere and later). Pure: one GPU's sample and what was seen before in, conditions out; AlertEngine keeps
// them beside its other rules, so they reach every place an alert goes (the live line, gpu.jsonl, run's
// summary and report, notifications, Prometheus).
//
// Counters are judged against the first reading of the watch: a GPU that already had retired pages or
// remapped rows when gpusage started is not news; a count that rises while the job runs is. A flag (a pending
// retirement or remap, a remapping failure) holds whenever it is set. A GPU that does not report a counter
// (NOT_SUPPORTED: GeForce cards, ECC off) has no such field and raises nothing.
//
// Sources: NVIDIA, "XID Errors" (https://docs.nvidia.com/deploy/xid-errors/index.html; core/device/xid.hpp),
// "Dynamic Page Retirement" (https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html: a retirement
// takes effect after the GPU is reset or the driver reloaded), and "NVIDIA A100 GPU Memory Error Management"
// (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html: a pending remap needs a GPU reset; a
// remapping failure means the GPU should be serviced).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device/types.hpp"

namespace gpusage::monitor {

// Defined in alerts.hpp, which includes this header for AlertEngine's per-GPU watches.
enum class AlertKind;
struct Alert;

// One rule's verdict for one sample.
struct HealthCondition {
  AlertKind kind{};
  std::optional<std::string> message = std::nullopt;  // empty: the condition does not hold
  const char* severity = "warning";
  bool rose = false;  // a counter rose with this sample: raise the alert again even if it is active
};

// The counters of one GPU as the watch first saw them, and at the previous sample.
class GpuHealthWatch {
 public:
  // The ECC, retired-page and remapped-row conditions of this sample (one per kind, always all three).
  std::vector<HealthCondition> evaluate(const device::GpuSample& gpu);

 private:
  struct Counters {
    std::optional<std::uint64_t> uncorrected;  // volatile, or the aggregate where volatile is not reported
    std::optional<std::uint64_t> corrected;
    std::optional<std::uint64_t> retired_pages;
    std::optional<std::uint64_t> remapped_rows;
  };
  static Counters read(const device::GpuSample& gpu);
  HealthCondition ecc(const device::GpuSample& gpu, const Counters& previous, const Counters& now) const;
  HealthCondition retired_pages(const device::GpuSample& gpu, const Counters& previous, const Counters& now) const;
  HealthCondition remapped_rows(const device::GpuSample& gpu, const Counters& previous, const Counters& now) const;
  std::optional<Counters> first_;
  Counters last_;
};

// One alert per XID event in the sample (critical for XIDs that need the GPU or node seen to, else warning),
// each naming the XID, the GPU, the time it was read and what to do.
std::vector<Alert> xid_alerts(const device::GpuSample& gpu, double unix_time_s);

}  // namespace gpusage::monitor
