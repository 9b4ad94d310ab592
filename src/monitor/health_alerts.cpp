#include "monitor/health_alerts.hpp"

#include <fmt/format.h>

#include <utility>

#include "core/common/i18n.hpp"
#include "core/common/time.hpp"
#include "core/device/xid.hpp"
#include "monitor/alerts.hpp"

namespace gpusage::monitor {

namespace {

template <class A, class B>
std::optional<std::uint64_t> sum(const std::optional<A>& a, const std::optional<B>& b) {
  if (!a && !b) return std::nullopt;
  return std::uint64_t{a.value_or(0)} + std::uint64_t{b.value_or(0)};
}

// How far `now` is above `since` (0 when either is missing, or when a counter went back: a driver reload
// restarts the volatile counts).
std::uint64_t rise(std::optional<std::uint64_t> since, std::optional<std::uint64_t> now) {
  return since && now && *now > *since ? *now - *since : 0;
}

}  // namespace

GpuHealthWatch::Counters GpuHealthWatch::read(const device::GpuSample& gpu) {
  Counters c;
  c.uncorrected = gpu.ecc_uncorrected_volatile ? gpu.ecc_uncorrected_volatile : gpu.ecc_uncorrected_aggregate;
  c.corrected = gpu.ecc_corrected_volatile;
  c.retired_pages = sum(gpu.retired_pages_single_bit, gpu.retired_pages_double_bit);
  c.remapped_rows = sum(gpu.remapped_rows_corrected, gpu.remapped_rows_uncorrected);
  return c;
}

std::vector<HealthCondition> GpuHealthWatch::evaluate(const device::GpuSample& gpu) {
  const Counters now = read(gpu);
  // A counter the first reading lacked (a read that failed once) takes its first value as the baseline.
  if (!first_) first_ = now;
  for (auto member : {&Counters::uncorrected, &Counters::corrected, &Counters::retired_pages, &Counters::remapped_rows})
    if (!((*first_).*member)) (*first_).*member = now.*member;
  const Counters previous = std::exchange(last_, now);
  return {ecc(gpu, previous, now), retired_pages(gpu, previous, now), remapped_rows(gpu, previous, now)};
}

// ECC: uncorrected errors are critical (data read may be corrupt); corrected ones only matter when rising.
HealthCondition GpuHealthWatch::ecc(const device::GpuSample& gpu, const Counters& previous, const Counters& now) const {
  HealthCondition c{AlertKind::ecc_errors};
  if (const std::uint64_t fresh = rise(first_->uncorrected, now.uncorrected); fresh > 0) {
    c.message = i18n::trf(
        "GPU {}: {} uncorrected ECC memory errors while gpusage watched (the driver's count went {} to {}): "
        "data the job read may be corrupt and it may crash. Fix: stop the job, drain the node and reset the "
        "GPU (nvidia-smi -r); if they recur, RMA the GPU.",
        gpu.index, fresh, *first_->uncorrected, *now.uncorrected);
    c.severity = "critical";
    c.rose = rise(previous.uncorrected, now.uncorrected) > 0;
  } else if (now.uncorrected.value_or(0) > 0) {
    c.message = i18n::trf(
        "GPU {}: {} uncorrected ECC memory errors before gpusage started watching: results may be corrupt "
        "and the job may crash. Stop, check `nvidia-smi -q -d ECC`, and have the GPU reset or serviced.",
        gpu.index, *now.uncorrected);
    c.severity = "critical";
  } else if (const std::uint64_t corrected = rise(first_->corrected, now.corrected); corrected > 0) {
    c.message = i18n::trf("GPU {}: {} new corrected ECC errors: memory is degrading; watch for uncorrected ones.",
                          gpu.index, corrected);
  }
  return c;
}

// Retired pages (dynamic page retirement, Kepler to Volta).
HealthCondition GpuHealthWatch::retired_pages(const device::GpuSample& gpu, const Counters& previous,
                                              const Counters& now) const {
  HealthCondition c{AlertKind::retired_pages};
  const std::uint64_t pages_new = rise(first_->retired_pages, now.retired_pages);
  const bool pending = gpu.retired_pages_pending.value_or(0) != 0;
  if (pages_new == 0 && !pending) return c;
  std::string what =
      pages_new > 0 ? i18n::trf(
                          "{} retired while gpusage watched ({} in all: {} for repeated single-bit errors, {} for "
                          "double-bit errors)",
                          i18n::trn("{} memory page", "{} memory pages", pages_new, pages_new), *now.retired_pages,
                          gpu.retired_pages_single_bit.value_or(0), gpu.retired_pages_double_bit.value_or(0))
                    : i18n::trf("{} retired", i18n::trn("{} memory page", "{} memory pages",
                                                        now.retired_pages.value_or(0), now.retired_pages.value_or(0)));
  c.message = i18n::trf(
      "GPU {}: {}{}. Fix: {}; if pages keep being retired, drain the node and RMA the GPU.", gpu.index, what,
      pending ? i18n::tr(", and a retirement is pending: the bad page stays in use until the GPU is reset") : "",
      pending ? i18n::tr("when the job ends, reset the GPU (nvidia-smi -r) or reboot the node")
              : i18n::tr("the job may go on; check `nvidia-smi -q -d PAGE_RETIREMENT` after it"));
  c.rose = rise(previous.retired_pages, now.retired_pages) > 0;
  return c;
}

// Row remapping (Ampere and later).
HealthCondition GpuHealthWatch::remapped_rows(const device::GpuSample& gpu, const Counters& previous,
                                              const Counters& now) const {
  HealthCondition c{AlertKind::remapped_rows};
  const std::uint64_t rows_new = rise(first_->remapped_rows, now.remapped_rows);
  const bool pending = gpu.remapped_rows_pending.value_or(0) != 0;
  if (gpu.remapped_rows_failure.value_or(0) != 0) {
    c.message = i18n::trf(
        "GPU {}: the row remapper failed to remap a bad memory row (remapping failure): the memory has a "
        "fault the GPU cannot repair. Fix: drain the node, reset the GPU (nvidia-smi -r); if "
        "`nvidia-smi -q -d ROW_REMAPPER` still shows the failure, RMA the GPU.",
        gpu.index);
    c.severity = "critical";
    return c;
  }
  if (rows_new == 0 && !pending) return c;
  std::string what = rows_new > 0
                         ? i18n::trf(
                               "{} remapped while gpusage watched ({} for correctable, {} for "
                               "uncorrectable errors in all)",
                               i18n::trn("{} memory row", "{} memory rows", rows_new, rows_new),
                               gpu.remapped_rows_corrected.value_or(0), gpu.remapped_rows_uncorrected.value_or(0))
                         : i18n::tr("a memory row is waiting to be remapped");
  c.message = i18n::trf("GPU {}: {}{}. Fix: {}.", gpu.index, what,
                        pending && rows_new > 0 ? i18n::tr(", and the remap is pending") : "",
                        pending ? i18n::tr("the remap takes effect at the next GPU reset: when the job ends, drain "
                                           "the node and reset the GPU (nvidia-smi -r)")
                                : i18n::tr("the job may go on; if rows keep being remapped, drain the node and RMA "
                                           "the GPU"));
  c.rose = rise(previous.remapped_rows, now.remapped_rows) > 0;
  return c;
}

std::vector<Alert> xid_alerts(const device::GpuSample& gpu, double unix_time_s) {
  std::vector<Alert> out;
  for (std::uint64_t xid : gpu.xid_events) {
    const auto info = device::find_xid(xid);
    Alert a{AlertKind::xid_error,
            gpu.index,
            gpu.uuid,
            info && info->hardware ? "critical" : "warning",
            i18n::trf("GPU {} at {}: {}", gpu.index, wallclock::iso_utc(unix_time_s, false), device::describe_xid(xid)),
            unix_time_s};
    a.xid = xid;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpusage::monitor
