#include "monitor/views.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <set>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "core/device/metric_fields.hpp"
#include "core/device/sample_json.hpp"
#include "report/table.hpp"

namespace gpusage::monitor {

using device::GpuSample;
using device::Sample;

namespace {

// "n/a" in the reader's language (the text view only: CSV, JSON and Prometheus write no such word).
std::string na() { return i18n::tr("n/a"); }

template <class T>
std::string or_na(const std::optional<T>& value, const char* suffix = "") {
  return value ? fmt::format("{}{}", *value, suffix) : na();
}

std::string gib(const std::optional<std::uint64_t>& bytes) {
  return bytes ? units::format_bytes(static_cast<double>(*bytes)) : na();
}

std::string pair_text(const std::string& a, const std::string& b, const char* unit) {
  if (a == na() && b == na()) return na();
  return fmt::format("{} / {}{}", a, b, unit);
}

std::string watts(const std::optional<double>& w) { return w ? fmt::format("{:.0f}", *w) : na(); }

std::string rate(const std::optional<std::uint64_t>& bytes_per_s) {
  return bytes_per_s ? units::format_bytes(static_cast<double>(*bytes_per_s)) + "/s" : na();
}

// An alert's severity ("warning", "critical": the JSON value) as the text view shows it.
std::string severity_label(const std::string& severity) {
  if (severity == "critical") return i18n::trc("severity", "critical");
  if (severity == "warning") return i18n::trc("severity", "warning");
  return severity;
}

}  // namespace

std::string render_summary(const Sample& sample, const std::vector<Alert>& alerts, int width) {
  std::string out = i18n::trf("gpusage monitor  {}  driver {}  CUDA {}\n", wallclock::iso_utc(sample.unix_time_s),
                              sample.driver_version.value_or(na()),
                              sample.cuda_driver_version ? sample.cuda_driver_version->to_string() : na());
  const auto& host = sample.host;
  out += i18n::trf("Host: CPU {} of {} cores, memory {} of {}\n",
                   host.cpu_percent ? fmt::format("{:.0f}%", *host.cpu_percent) : na(), or_na(host.cpu_count),
                   gib(host.memory_used_bytes), gib(host.memory_total_bytes));
  if (!sample.gpu_available) {
    out += i18n::trf("GPU: {}; showing host CPU and memory only\n", sample.gpu_message);
    return out;
  }
  if (sample.gpus.empty()) return out + i18n::tr("GPU: none found\n");

  // Two tables so that each fits a usual terminal: what the GPU is doing, then its clocks and links.
  report::Table gpus;
  using i18n::tr;
  gpus.columns = {{"GPU", "", report::Align::left},
                  {tr("Name"), "", report::Align::left},
                  {tr("Util"), "%"},
                  {tr("Mem util"), "%", report::Align::right, 3},
                  {tr("Memory used / total"), ""},
                  {tr("Temp"), "C"},
                  {tr("Power/limit"), "W"},
                  {tr("Fan"), "%", report::Align::right, 2},
                  {tr("Perf"), "", report::Align::right, 1}};
  report::Table links;
  links.columns = {{"GPU", "", report::Align::left},
                   {tr("SM clock / max"), "MHz"},
                   {tr("Mem clock / max"), "MHz"},
                   {"PCIe", ""},
                   {"PCIe TX / RX", "", report::Align::right, 2},
                   {tr("ECC corrected / uncorrected"), "", report::Align::right, 3}};
  report::Table processes;
  processes.columns = {{"GPU", "", report::Align::left},
                       {"PID", ""},
                       {tr("Process"), "", report::Align::left},
                       {tr("GPU memory"), ""},
                       {"CPU", tr("% of a core")}};
  std::string throttle_lines;
  for (const GpuSample& g : sample.gpus) {
    std::string memory = pair_text(gib(g.memory_used_bytes), gib(g.memory_total_bytes), "");
    if (auto f = g.memory_used_fraction()) memory += fmt::format(" ({:.0f}%)", *f * 100);
    std::string pcie =
        g.pcie_gen || g.pcie_width ? i18n::trf("gen {} x{}", or_na(g.pcie_gen), or_na(g.pcie_width)) : na();
    gpus.add_row({std::to_string(g.index), g.name, or_na(g.utilization_gpu_percent),
                  or_na(g.utilization_memory_percent), memory, or_na(g.temperature_c),
                  pair_text(watts(g.power_w), watts(g.power_limit_w), ""), or_na(g.fan_percent),
                  g.pstate ? fmt::format("P{}", *g.pstate) : na()});
    links.add_row({std::to_string(g.index), pair_text(or_na(g.sm_clock_mhz), or_na(g.sm_clock_max_mhz), ""),
                   pair_text(or_na(g.memory_clock_mhz), or_na(g.memory_clock_max_mhz), ""), pcie,
                   pair_text(rate(g.pcie_tx_bytes_per_s), rate(g.pcie_rx_bytes_per_s), ""),
                   pair_text(or_na(g.ecc_corrected_volatile), or_na(g.ecc_uncorrected_volatile), "")});
    throttle_lines +=
        i18n::trf("  GPU {}: {}\n", g.index, g.throttle_mask ? device::throttle::describe(*g.throttle_mask) : na());
    for (const auto& p : g.processes)
      processes.add_row({std::to_string(g.index), std::to_string(p.pid), p.name.empty() ? na() : p.name,
                         gib(p.used_memory_bytes), p.cpu_percent ? fmt::format("{:.0f}", *p.cpu_percent) : na()});
  }
  for (report::Table* t : {&gpus, &links, &processes})
    t->dropped_hint = i18n::N_("use --format json or csv for every metric");
  out += "\n" + report::render_text(gpus, width) + "\n" + report::render_text(links, width);
  out += tr("\nClock throttle reasons:\n") + throttle_lines;
  out += tr("\nProcesses:\n");
  out += processes.rows.empty() ? tr("  no GPU processes\n") : report::render_text(processes, width);
  if (!alerts.empty()) {
    out += tr("\nAlerts:\n");
    for (const Alert& a : alerts) out += fmt::format("  [{}] {}\n", severity_label(a.severity), a.message);
  }
  return out;
}

namespace {

template <class T>
std::string csv_value(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "";
}

}  // namespace

std::string csv_header() {
  std::string header = "time_utc,unix_time_s,gpu,name,uuid";
  GpuSample gpu;
  device::for_each_metric(gpu, [&](const char* key, const auto&) { header += std::string(",") + key; });
  header += ",throttle_reasons,xid_events,process_count,process_memory_bytes";
  device::HostSample host;
  device::for_each_metric(host, [&](const char* key, const auto&) { header += std::string(",host_") + key; });
  return header + "\n";
}

std::string csv_rows(const Sample& sample) {
  std::string host;
  device::for_each_metric(sample.host, [&](const char*, const auto& v) { host += "," + csv_value(v); });
  std::string time = fmt::format("{},{:.3f}", wallclock::iso_utc(sample.unix_time_s), sample.unix_time_s);
  if (sample.gpus.empty()) {
    std::string empty;
    const GpuSample none;
    device::for_each_metric(none, [&](const char*, const auto&) { empty += ","; });
    return time + ",,," + empty + ",,,," + host + "\n";
  }
  std::string out;
  for (const GpuSample& g : sample.gpus) {
    std::string row = fmt::format("{},{},{},{}", time, g.index, text::csv_field(g.name), text::csv_field(g.uuid));
    device::for_each_metric(g, [&](const char*, const auto& v) { row += "," + csv_value(v); });
    std::string reasons;
    if (g.throttle_mask)
      for (const auto& id : device::throttle::decode_ids(*g.throttle_mask))
        reasons += (reasons.empty() ? "" : "|") + id;
    std::optional<std::uint64_t> process_bytes;
    for (const auto& p : g.processes)
      if (p.used_memory_bytes) process_bytes = process_bytes.value_or(0) + *p.used_memory_bytes;
    std::string xids;  // "79|48": the XID events of this sample, in order
    for (std::uint64_t xid : g.xid_events) xids += fmt::format("{}{}", xids.empty() ? "" : "|", xid);
    row += fmt::format(",{},{},{},{}", reasons, xids, g.processes.size(), csv_value(process_bytes));
    out += row + host + "\n";
  }
  return out;
}

nlohmann::json sample_json(const Sample& sample, const std::vector<Alert>& alerts) {
  nlohmann::json j = device::to_json(sample);
  j["time_utc"] = wallclock::iso_utc(sample.unix_time_s);
  nlohmann::json events = nlohmann::json::array();
  for (const Alert& a : alerts) events.push_back(to_json(a));
  j["alerts"] = std::move(events);
  return j;
}

namespace {

// Label values escape backslash, double quote and newline (Prometheus exposition format).
std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Family {
  const char* name;
  const char* help;
  std::string lines;
};

}  // namespace

std::string prometheus_text(const Sample& sample, const std::vector<Alert>& alerts) {
  std::vector<Family> families;
  auto family = [&](const char* name, const char* help) -> Family& {
    for (auto& f : families)
      if (std::string_view(f.name) == name) return f;
    families.push_back({name, help, {}});
    return families.back();
  };
  auto gauge = [&](const char* name, const char* help, const std::string& labels, auto value) {
    if (!value) return;
    if (labels.empty())
      family(name, help).lines += fmt::format("{} {}\n", name, *value);
    else
      family(name, help).lines += fmt::format("{}{{{}}} {}\n", name, labels, *value);
  };
  auto mib = [&](std::optional<std::uint64_t> bytes) {
    return bytes ? std::optional<double>(static_cast<double>(*bytes) / units::kMiB) : std::nullopt;
  };
  for (const GpuSample& g : sample.gpus) {
    std::string labels =
        fmt::format("gpu=\"{}\",uuid=\"{}\",name=\"{}\"", g.index, label_value(g.uuid), label_value(g.name));
    gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", labels, g.utilization_gpu_percent);
    gauge("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", labels, g.utilization_memory_percent);
    // dcgm-exporter reports framebuffer memory in MiB.
    gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", labels, mib(g.memory_used_bytes));
    std::optional<std::uint64_t> free_bytes;
    if (g.memory_used_bytes && g.memory_total_bytes)
      free_bytes = *g.memory_total_bytes - std::min(*g.memory_total_bytes, *g.memory_used_bytes);
    gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", labels, mib(free_bytes));
    gauge("DCGM_FI_DEV_FB_TOTAL", "Framebuffer memory total (in MiB).", labels, mib(g.memory_total_bytes));
    gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", labels, g.temperature_c);
    gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", labels, g.power_w);
    gauge("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power limit in force (in W).", labels, g.power_limit_w);
    gauge("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", labels, g.sm_clock_mhz);
    gauge("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", labels, g.memory_clock_mhz);
    gauge("DCGM_FI_DEV_MAX_SM_CLOCK", "Maximum SM clock frequency (in MHz).", labels, g.sm_clock_max_mhz);
    gauge("DCGM_FI_DEV_MAX_MEM_CLOCK", "Maximum memory clock frequency (in MHz).", labels, g.memory_clock_max_mhz);
    gauge("DCGM_FI_DEV_FAN_SPEED", "Fan speed (in %).", labels, g.fan_percent);
    gauge("DCGM_FI_DEV_PSTATE", "Performance state (0 = P0, maximum performance).", labels, g.pstate);
    gauge("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Clock throttle reasons (NVML bitmask).", labels, g.throttle_mask);
    gauge("DCGM_FI_DEV_PCIE_LINK_GEN", "PCIe current link generation.", labels, g.pcie_gen);
    gauge("DCGM_FI_DEV_PCIE_LINK_WIDTH", "PCIe current link width (lanes).", labels, g.pcie_width);
    gauge("gpusage_pcie_tx_bytes_per_second", "PCIe transmit throughput (bytes/s).", labels, g.pcie_tx_bytes_per_s);
    gauge("gpusage_pcie_rx_bytes_per_second", "PCIe receive throughput (bytes/s).", labels, g.pcie_rx_bytes_per_s);
    // NVML's corrected/uncorrected volatile totals are DCGM's single-/double-bit volatile totals.
    gauge("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Corrected (single-bit) ECC errors since the driver loaded.", labels,
          g.ecc_corrected_volatile);
    gauge("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Uncorrected (double-bit) ECC errors since the driver loaded.", labels,
          g.ecc_uncorrected_volatile);
    gauge("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "Uncorrected (double-bit) ECC errors over the GPU's life.", labels,
          g.ecc_uncorrected_aggregate);
    // Memory health under dcgm-exporter's names (retired pages before Ampere, remapped rows from Ampere on).
    gauge("DCGM_FI_DEV_RETIRED_SBE", "Pages retired for repeated single-bit errors.", labels,
          g.retired_pages_single_bit);
    gauge("DCGM_FI_DEV_RETIRED_DBE", "Pages retired for double-bit errors.", labels, g.retired_pages_double_bit);
    gauge("DCGM_FI_DEV_RETIRED_PENDING", "1 while a page retirement waits for a GPU reset.", labels,
          g.retired_pages_pending);
    gauge("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Rows remapped for correctable errors.", labels,
          g.remapped_rows_corrected);
    gauge("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Rows remapped for uncorrectable errors.", labels,
          g.remapped_rows_uncorrected);
    gauge("gpusage_remapped_rows_pending", "1 while a row remap waits for a GPU reset.", labels,
          g.remapped_rows_pending);
    gauge("DCGM_FI_DEV_ROW_REMAP_FAILURE", "1 when a row remapping has failed.", labels, g.remapped_rows_failure);
    if (!g.xid_events.empty())  // present only in the sample that received the event
      gauge("DCGM_FI_DEV_XID_ERRORS", "The last XID the driver reported (in this sample).", labels,
            std::optional<std::uint64_t>(g.xid_events.back()));
    if (g.throttle_mask)
      for (const auto& reason : device::throttle::reasons())
        gauge("gpusage_clock_throttle_active", "1 while the clock-throttle reason holds.",
              labels + fmt::format(",reason=\"{}\"", reason.id),
              std::optional<int>((*g.throttle_mask & reason.bit) ? 1 : 0));
    for (const auto& p : g.processes) {
      std::string plabels = labels + fmt::format(",pid=\"{}\",process=\"{}\"", p.pid, label_value(p.name));
      gauge("gpusage_process_gpu_memory_bytes", "GPU memory used by a process (bytes).", plabels, p.used_memory_bytes);
      gauge("gpusage_process_cpu_percent", "Host CPU use of a GPU process (100 = one core).", plabels, p.cpu_percent);
    }
  }
  gauge("gpusage_host_cpu_utilization_percent", "Host CPU utilization, all cores (in %).", "", sample.host.cpu_percent);
  gauge("gpusage_host_memory_used_bytes", "Host memory used (MemTotal - MemAvailable).", "",
        sample.host.memory_used_bytes);
  gauge("gpusage_host_memory_total_bytes", "Host memory total.", "", sample.host.memory_total_bytes);
  gauge("gpusage_gpu_available", "1 when GPU metrics could be read.", "",
        std::optional<int>(sample.gpu_available ? 1 : 0));
  std::set<std::string> alert_series;  // two XID events in one sample are one series: each appears once
  for (const Alert& a : alerts) {
    std::string alert_labels = fmt::format("gpu=\"{}\",uuid=\"{}\",kind=\"{}\",severity=\"{}\"", a.gpu,
                                           label_value(a.uuid), to_string(a.kind), a.severity);
    if (alert_series.insert(alert_labels).second)
      gauge("gpusage_alert_active", "1 while an alert holds.", alert_labels, std::optional<int>(1));
  }
  std::string out;
  for (const Family& f : families)
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", f.name, f.help, f.name, f.lines);
  return out;
}

}  // namespace gpusage::monitor
