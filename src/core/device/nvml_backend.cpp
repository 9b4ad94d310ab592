// The NVML implementation of GpuBackend. Each metric is probed on first use: NOT_SUPPORTED (or a symbol the
// driver lacks) marks it unsupported for that GPU for good, so it is shown as n/a and never asked again;
// other errors make this one reading empty and the next reading tries again.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "core/device/backend.hpp"
#include "core/device/nvml_api.hpp"

// The call-site macro (STYLE.md practice 9): every NVML call in NvmlBackend goes through it, so the last
// failure is recorded with the entry point, file:line and return code (CallRecord).
#define GPUSAGE_NVML_CALL(fn, ...) call(#fn, __FILE__, __LINE__, api().fn __VA_OPT__(, ) __VA_ARGS__)

namespace gpusage::device {

namespace {

using nvml::Api;

// Every per-GPU query that may be unsupported, probed independently.
enum class Metric : std::size_t {
  utilization,
  memory,
  temperature,
  power,
  sm_clock,
  memory_clock,
  fan,
  pstate,
  throttle,
  pcie_gen,
  pcie_width,
  pcie_tx,
  pcie_rx,
  ecc_corrected,
  ecc_uncorrected,
  ecc_uncorrected_aggregate,
  retired_pages,
  retired_pages_pending,
  remapped_rows,
  processes,
  energy,
  count
};

enum class Probe : unsigned char { unknown, supported, unsupported };

struct GpuState {
  nvmlDevice_t handle = nullptr;
  GpuInfo info;
  std::array<Probe, static_cast<std::size_t>(Metric::count)> probes{};
};

bool unsupported_result(nvmlReturn_t rc) {
  return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND;
}

template <class T>
std::optional<T> if_ok(nvmlReturn_t rc, const T& value) {  // by reference: read after the call ran
  return rc == NVML_SUCCESS ? std::optional<T>(value) : std::nullopt;
}

class NvmlBackend final : public GpuBackend {
 public:
  explicit NvmlBackend(const NvmlOptions& options) {
    info_.backend = "nvml";
    std::string path = options.library_path;
    if (path.empty())
      if (const char* env = std::getenv("GPUSAGE_NVML_LIBRARY"); env && *env) path = env;
    std::string error;
    if (!library_.open(path, error)) {
      info_.message = path.empty() ? fmt::format("no NVIDIA driver found ({})", error)
                                   : fmt::format("cannot load NVML from GPUSAGE_NVML_LIBRARY={} ({})", path, error);
      return;
    }
    if (!api().init) {
      info_.message = fmt::format("{} does not export nvmlInit_v2 or nvmlInit", library_.loaded_path());
      return;
    }
    if (nvmlReturn_t rc = GPUSAGE_NVML_CALL(init); rc != NVML_SUCCESS) {
      info_.message =
          fmt::format("NVIDIA driver present but NVML failed to start: {} (nvmlInit returned {})", error_text(rc), rc);
      return;
    }
    initialized_ = true;
    info_.available = true;
    probe_system();
    register_xid_events();
  }

  ~NvmlBackend() override {
    if (events_ && api().event_set_free) api().event_set_free(events_);
    if (initialized_ && api().shutdown) api().shutdown();
  }

  const SystemInfo& system() override { return info_; }

  std::vector<GpuSample> sample() override {
    std::vector<GpuSample> out;
    if (!initialized_) return out;
    out.reserve(gpus_.size());
    std::map<nvmlDevice_t, std::vector<std::uint64_t>> xids = drain_xid_events();
    for (GpuState& gpu : gpus_) {
      out.push_back(sample_gpu(gpu));
      if (auto it = xids.find(gpu.handle); it != xids.end()) out.back().xid_events = std::move(it->second);
    }
    return out;
  }

 private:
  template <class Fn, class... Args>
  nvmlReturn_t call(const char* name, const char* file, int line, Fn fn, Args... args) {
    ++record_.calls;
    if (!fn) return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlReturn_t rc = fn(args...);
    if (rc != NVML_SUCCESS) {
      ++record_.failures;
      record_.function = name;
      record_.file = file;
      record_.line = line;
      record_.result = rc;
    }
    return rc;
  }

  const Api& api() const { return library_.api(); }

  std::string error_text(nvmlReturn_t rc) const {
    const char* text = api().error_string ? api().error_string(rc) : nullptr;
    return text ? text : fmt::format("NVML error {}", rc);
  }

  // Runs `query` unless `metric` is known unsupported on this GPU; returns whether it succeeded.
  template <class Query>
  bool probe(GpuState& gpu, Metric metric, Query&& query) {
    Probe& state = gpu.probes[static_cast<std::size_t>(metric)];
    if (state == Probe::unsupported) return false;
    nvmlReturn_t rc = query();
    if (rc == NVML_SUCCESS) {
      state = Probe::supported;
      return true;
    }
    if (unsupported_result(rc)) state = Probe::unsupported;
    return false;
  }

  void probe_system() {
    std::array<char, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE> version{};
    if (GPUSAGE_NVML_CALL(system_get_driver_version, version.data(), static_cast<unsigned>(version.size())) ==
        NVML_SUCCESS)
      info_.driver_version = std::string(version.data());
    int cuda = 0;
    if (GPUSAGE_NVML_CALL(system_get_cuda_driver_version, &cuda) == NVML_SUCCESS)
      info_.cuda_driver_version = CudaVersion::from_nvml(cuda);
    unsigned count = 0;
    if (nvmlReturn_t rc = GPUSAGE_NVML_CALL(device_get_count, &count); rc != NVML_SUCCESS) {
      info_.available = false;
      info_.message = fmt::format("NVML cannot count GPUs: {} (nvmlDeviceGetCount returned {})", error_text(rc), rc);
      return;
    }
    for (unsigned i = 0; i < count; ++i) {
      GpuState gpu;
      // A GPU NVML cannot open (no permission, lost) is skipped rather than shown with invented values.
      if (GPUSAGE_NVML_CALL(device_get_handle_by_index, i, &gpu.handle) != NVML_SUCCESS) continue;
      probe_info(gpu, i);
      gpus_.push_back(std::move(gpu));
      info_.gpus.push_back(gpus_.back().info);
    }
  }

  // One event set for every GPU that can deliver XID critical-error events. A driver without the event
  // symbols, or a GPU that does not support the type (NOT_SUPPORTED), simply reports no XIDs.
  void register_xid_events() {
    if (GPUSAGE_NVML_CALL(event_set_create, &events_) != NVML_SUCCESS) {
      events_ = nullptr;
      return;
    }
    bool any = false;
    for (GpuState& gpu : gpus_) {
      unsigned long long supported = 0;
      if (GPUSAGE_NVML_CALL(device_get_supported_event_types, gpu.handle, &supported) != NVML_SUCCESS ||
          !(supported & nvmlEventTypeXidCriticalError))
        continue;
      any = GPUSAGE_NVML_CALL(device_register_events, gpu.handle, nvmlEventTypeXidCriticalError, events_) ==
                NVML_SUCCESS ||
            any;
    }
    if (!any) {
      GPUSAGE_NVML_CALL(event_set_free, events_);
      events_ = nullptr;
    }
  }

  // The XID events that arrived since the last sample, per GPU. A zero timeout: the sampling thread never
  // waits here (NVML returns NVML_ERROR_TIMEOUT at once when none is queued). At most kMaxEvents per sample,
  // so an XID storm cannot hold up the reading; the rest are taken at the next sample.
  std::map<nvmlDevice_t, std::vector<std::uint64_t>> drain_xid_events() {
    constexpr int kMaxEvents = 64;
    std::map<nvmlDevice_t, std::vector<std::uint64_t>> out;
    if (!events_) return out;
    for (int i = 0; i < kMaxEvents; ++i) {
      nvmlEventData_t data{};
      if (GPUSAGE_NVML_CALL(event_set_wait, events_, &data, 0u) != NVML_SUCCESS) break;
      if (data.eventType & nvmlEventTypeXidCriticalError) out[data.device].push_back(data.eventData);
    }
    return out;
  }

  void probe_info(GpuState& gpu, unsigned index) {
    GpuInfo& info = gpu.info;
    nvmlDevice_t h = gpu.handle;
    info.index = index;
    std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> text{};
    if (GPUSAGE_NVML_CALL(device_get_name, h, text.data(), static_cast<unsigned>(text.size())) == NVML_SUCCESS)
      info.name = text.data();
    text.fill('\0');
    if (GPUSAGE_NVML_CALL(device_get_uuid, h, text.data(), static_cast<unsigned>(text.size())) == NVML_SUCCESS)
      info.uuid = text.data();
    nvmlMemory_t memory{};
    if (GPUSAGE_NVML_CALL(device_get_memory_info, h, &memory) == NVML_SUCCESS) info.memory_total_bytes = memory.total;
    nvmlPciInfo_t pci{};
    if (GPUSAGE_NVML_CALL(device_get_pci_info, h, &pci) == NVML_SUCCESS && pci.pciDeviceId != 0) {
      info.pci_device_id = fmt::format("{:04x}", pci.pciDeviceId >> 16);
    }
    int major = 0, minor = 0;
    if (GPUSAGE_NVML_CALL(device_get_cuda_compute_capability, h, &major, &minor) == NVML_SUCCESS)
      info.compute_capability = ComputeCapability{major, minor};
    unsigned value = 0;
    info.pcie_gen_current = if_ok(GPUSAGE_NVML_CALL(device_get_curr_pcie_link_generation, h, &value), value);
    info.pcie_gen_max = if_ok(GPUSAGE_NVML_CALL(device_get_max_pcie_link_generation, h, &value), value);
    info.pcie_width_current = if_ok(GPUSAGE_NVML_CALL(device_get_curr_pcie_link_width, h, &value), value);
    info.pcie_width_max = if_ok(GPUSAGE_NVML_CALL(device_get_max_pcie_link_width, h, &value), value);
    // NVML reports power in milliwatts.
    auto watts = [](std::optional<unsigned> mw) { return mw ? std::optional<double>(*mw / 1000.0) : std::nullopt; };
    info.power_limit_enforced_w = watts(if_ok(GPUSAGE_NVML_CALL(device_get_enforced_power_limit, h, &value), value));
    info.power_limit_w = watts(if_ok(GPUSAGE_NVML_CALL(device_get_power_management_limit, h, &value), value));
    info.power_limit_default_w =
        watts(if_ok(GPUSAGE_NVML_CALL(device_get_power_management_default_limit, h, &value), value));
    nvmlEnableState_t state = 0, pending = 0;
    if (GPUSAGE_NVML_CALL(device_get_persistence_mode, h, &state) == NVML_SUCCESS) info.persistence_mode = state != 0;
    if (GPUSAGE_NVML_CALL(device_get_ecc_mode, h, &state, &pending) == NVML_SUCCESS) info.ecc_enabled = state != 0;
    info.sm_clock_max_mhz = if_ok(GPUSAGE_NVML_CALL(device_get_max_clock_info, h, NVML_CLOCK_SM, &value), value);
    info.memory_clock_max_mhz = if_ok(GPUSAGE_NVML_CALL(device_get_max_clock_info, h, NVML_CLOCK_MEM, &value), value);
  }

  GpuSample sample_gpu(GpuState& gpu) {
    GpuSample s;
    const GpuInfo& info = gpu.info;
    nvmlDevice_t h = gpu.handle;
    s.index = info.index;
    s.name = info.name;
    s.uuid = info.uuid;
    s.power_limit_w = info.power_limit_enforced_w ? info.power_limit_enforced_w : info.power_limit_w;
    s.sm_clock_max_mhz = info.sm_clock_max_mhz;
    s.memory_clock_max_mhz = info.memory_clock_max_mhz;

    nvmlUtilization_t util{};
    if (probe(gpu, Metric::utilization, [&] { return GPUSAGE_NVML_CALL(device_get_utilization_rates, h, &util); })) {
      s.utilization_gpu_percent = util.gpu;
      s.utilization_memory_percent = util.memory;
    }
    nvmlMemory_t memory{};
    if (probe(gpu, Metric::memory, [&] { return GPUSAGE_NVML_CALL(device_get_memory_info, h, &memory); })) {
      s.memory_used_bytes = memory.used;
      s.memory_total_bytes = memory.total;
    }
    unsigned value = 0;
    auto read_unsigned = [&](Metric metric, auto&& query) -> std::optional<unsigned> {
      return probe(gpu, metric, query) ? std::optional<unsigned>(value) : std::nullopt;
    };
    s.temperature_c = read_unsigned(Metric::temperature, [&] {
      return GPUSAGE_NVML_CALL(device_get_temperature, h, NVML_TEMPERATURE_GPU, &value);
    });
    if (auto mw = read_unsigned(Metric::power, [&] { return GPUSAGE_NVML_CALL(device_get_power_usage, h, &value); }))
      s.power_w = *mw / 1000.0;
    unsigned long long energy_mj = 0;
    if (probe(gpu, Metric::energy,
              [&] { return GPUSAGE_NVML_CALL(device_get_total_energy_consumption, h, &energy_mj); }))
      s.energy_counter_mj = energy_mj;
    s.sm_clock_mhz = read_unsigned(Metric::sm_clock,
                                   [&] { return GPUSAGE_NVML_CALL(device_get_clock_info, h, NVML_CLOCK_SM, &value); });
    s.memory_clock_mhz = read_unsigned(
        Metric::memory_clock, [&] { return GPUSAGE_NVML_CALL(device_get_clock_info, h, NVML_CLOCK_MEM, &value); });
    s.fan_percent = read_unsigned(Metric::fan, [&] { return GPUSAGE_NVML_CALL(device_get_fan_speed, h, &value); });
    nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
    if (probe(gpu, Metric::pstate, [&] { return GPUSAGE_NVML_CALL(device_get_performance_state, h, &pstate); }) &&
        pstate >= 0 && pstate <= 15)
      s.pstate = static_cast<unsigned>(pstate);
    unsigned long long mask = 0;
    if (probe(gpu, Metric::throttle, [&] { return GPUSAGE_NVML_CALL(device_get_clocks_event_reasons, h, &mask); }))
      s.throttle_mask = mask;
    s.pcie_gen = read_unsigned(Metric::pcie_gen,
                               [&] { return GPUSAGE_NVML_CALL(device_get_curr_pcie_link_generation, h, &value); });
    s.pcie_width = read_unsigned(Metric::pcie_width,
                                 [&] { return GPUSAGE_NVML_CALL(device_get_curr_pcie_link_width, h, &value); });
    // nvmlDeviceGetPcieThroughput reports KB/s (1 KB = 1024 bytes in NVML's documentation).
    if (auto kbs = read_unsigned(Metric::pcie_tx, [&] {
          return GPUSAGE_NVML_CALL(device_get_pcie_throughput, h, NVML_PCIE_UTIL_TX_BYTES, &value);
        }))
      s.pcie_tx_bytes_per_s = std::uint64_t{*kbs} * 1024;
    if (auto kbs = read_unsigned(Metric::pcie_rx, [&] {
          return GPUSAGE_NVML_CALL(device_get_pcie_throughput, h, NVML_PCIE_UTIL_RX_BYTES, &value);
        }))
      s.pcie_rx_bytes_per_s = std::uint64_t{*kbs} * 1024;
    if (info.ecc_enabled.value_or(false)) {
      unsigned long long errors = 0;
      if (probe(gpu, Metric::ecc_corrected, [&] {
            return GPUSAGE_NVML_CALL(device_get_total_ecc_errors, h, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                     NVML_VOLATILE_ECC, &errors);
          }))
        s.ecc_corrected_volatile = errors;
      if (probe(gpu, Metric::ecc_uncorrected, [&] {
            return GPUSAGE_NVML_CALL(device_get_total_ecc_errors, h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                     NVML_VOLATILE_ECC, &errors);
          }))
        s.ecc_uncorrected_volatile = errors;
      if (probe(gpu, Metric::ecc_uncorrected_aggregate, [&] {
            return GPUSAGE_NVML_CALL(device_get_total_ecc_errors, h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                     NVML_AGGREGATE_ECC, &errors);
          }))
        s.ecc_uncorrected_aggregate = errors;
    }
    read_memory_health(gpu, s);
    read_processes(gpu, s);
    return s;
  }

  // Retired pages (before Ampere) and remapped rows (Ampere and later). Each GPU supports at most one of the
  // two; the other answers NOT_SUPPORTED once and is not asked again.
  void read_memory_health(GpuState& gpu, GpuSample& s) {
    nvmlDevice_t h = gpu.handle;
    // pageCount 0 with no buffer asks for the count; drivers answer SUCCESS or INSUFFICIENT_SIZE with it set.
    auto retired = [&](nvmlPageRetirementCause_t cause, unsigned& count) {
      count = 0;
      nvmlReturn_t rc = GPUSAGE_NVML_CALL(device_get_retired_pages, h, cause, &count, nullptr);
      return rc == NVML_ERROR_INSUFFICIENT_SIZE ? NVML_SUCCESS : rc;
    };
    unsigned single_bit = 0, double_bit = 0;
    if (probe(gpu, Metric::retired_pages, [&] {
          nvmlReturn_t rc = retired(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, single_bit);
          return rc == NVML_SUCCESS ? retired(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, double_bit) : rc;
        })) {
      s.retired_pages_single_bit = single_bit;
      s.retired_pages_double_bit = double_bit;
    }
    nvmlEnableState_t pending = 0;
    if (probe(gpu, Metric::retired_pages_pending,
              [&] { return GPUSAGE_NVML_CALL(device_get_retired_pages_pending_status, h, &pending); }))
      s.retired_pages_pending = pending != 0 ? 1u : 0u;
    unsigned corrected = 0, uncorrected = 0, remap_pending = 0, failure = 0;
    if (probe(gpu, Metric::remapped_rows, [&] {
          return GPUSAGE_NVML_CALL(device_get_remapped_rows, h, &corrected, &uncorrected, &remap_pending, &failure);
        })) {
      s.remapped_rows_corrected = corrected;
      s.remapped_rows_uncorrected = uncorrected;
      s.remapped_rows_pending = remap_pending != 0 ? 1u : 0u;
      s.remapped_rows_failure = failure != 0 ? 1u : 0u;
    }
  }

  void read_processes(GpuState& gpu, GpuSample& s) {
    nvmlDevice_t h = gpu.handle;
    std::vector<std::pair<unsigned, unsigned long long>> found;  // pid, used bytes
    auto collect = [&](auto& buffer, auto fn_query) {
      unsigned count = static_cast<unsigned>(buffer.size());
      nvmlReturn_t rc = fn_query(&count, buffer.data());
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {  // more processes than room: NVML set `count` to what it needs
        buffer.resize(count + 8);
        count = static_cast<unsigned>(buffer.size());
        rc = fn_query(&count, buffer.data());
      }
      if (rc == NVML_SUCCESS)
        for (unsigned i = 0; i < count && i < buffer.size(); ++i)
          found.emplace_back(buffer[i].pid, buffer[i].usedGpuMemory);
      return rc;
    };
    bool ok = probe(gpu, Metric::processes, [&] {
      if (api().device_get_compute_running_processes_v2) {
        process_buffer_v2_.resize(std::max<std::size_t>(process_buffer_v2_.size(), 64));
        return collect(process_buffer_v2_, [&](unsigned* count, nvmlProcessInfo_v2_t* infos) {
          return GPUSAGE_NVML_CALL(device_get_compute_running_processes_v2, h, count, infos);
        });
      }
      process_buffer_v1_.resize(std::max<std::size_t>(process_buffer_v1_.size(), 64));
      return collect(process_buffer_v1_, [&](unsigned* count, nvmlProcessInfo_v1_t* infos) {
        return GPUSAGE_NVML_CALL(device_get_compute_running_processes_v1, h, count, infos);
      });
    });
    if (!ok) return;
    for (auto [pid, used] : found) {
      GpuProcess process;
      process.pid = pid;
      if (used != NVML_VALUE_NOT_AVAILABLE_ULL) process.used_memory_bytes = used;
      auto cached = process_names_.find(pid);
      if (cached == process_names_.end()) {
        std::array<char, 256> name{};
        std::string text;
        if (GPUSAGE_NVML_CALL(system_get_process_name, pid, name.data(), static_cast<unsigned>(name.size())) ==
            NVML_SUCCESS)
          text = name.data();
        cached = process_names_.emplace(pid, std::move(text)).first;
      }
      process.name = cached->second;
      s.processes.push_back(std::move(process));
    }
  }
#undef GPUSAGE_NVML_CALL

  nvml::Library library_;
  bool initialized_ = false;
  SystemInfo info_;
  std::vector<GpuState> gpus_;
  nvmlEventSet_t events_ = nullptr;  // XID events of every GPU that delivers them; null: none
  nvml::CallRecord record_;
  std::vector<nvmlProcessInfo_v2_t> process_buffer_v2_;
  std::vector<nvmlProcessInfo_v1_t> process_buffer_v1_;
  // Process names are looked up once per pid (a name does not change; pids are rarely reused within a run).
  std::map<unsigned, std::string> process_names_;
};

}  // namespace

std::unique_ptr<GpuBackend> open_nvml_backend(const NvmlOptions& options) {
  return std::make_unique<NvmlBackend>(options);
}

}  // namespace gpusage::device
