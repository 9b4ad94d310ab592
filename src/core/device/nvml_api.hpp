// INTERNAL: the subset of NVML gpusage uses, declared here instead of including nvml.h (as nvtop does), and
// the table of function pointers filled by dlopen/dlsym. Names, signatures and constants are NVML's own
// (NVIDIA NVML API Reference; nvml.h). Only nvml_api.cpp and nvml_backend.cpp include this file, plus the
// scripted stand-in library in tests/fixtures/nvml_stub, which exports the same signatures.
#pragma once

#include <string>

extern "C" {

struct nvmlDevice_st;  // opaque, owned by the driver
typedef struct nvmlDevice_st* nvmlDevice_t;

typedef int nvmlReturn_t;  // an enum in nvml.h; int-sized in the ABI
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

typedef int nvmlEnableState_t;  // NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1
typedef int nvmlTemperatureSensors_t;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;
typedef int nvmlClockType_t;
inline constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
inline constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
inline constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;
typedef int nvmlPstates_t;  // NVML_PSTATE_0 = 0 … NVML_PSTATE_15 = 15, NVML_PSTATE_UNKNOWN = 32
inline constexpr nvmlPstates_t NVML_PSTATE_UNKNOWN = 32;
typedef int nvmlPcieUtilCounter_t;
inline constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_RX_BYTES = 1;
typedef int nvmlMemoryErrorType_t;
inline constexpr nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
inline constexpr nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
typedef int nvmlEccCounterType_t;
inline constexpr nvmlEccCounterType_t NVML_VOLATILE_ECC = 0;
inline constexpr nvmlEccCounterType_t NVML_AGGREGATE_ECC = 1;

typedef int nvmlPageRetirementCause_t;
inline constexpr nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

// Events (NVML API Reference, "Event Handling Methods" and "Event Types":
// https://docs.nvidia.com/deploy/nvml-api/group__nvmlEvents.html). gpusage registers only XID critical
// errors: ECC errors and page retirements are read from their counters on every sample, which also covers
// drivers that deliver no events (Windows, some containers).
struct nvmlEventSet_st;  // opaque, owned by the driver
typedef struct nvmlEventSet_st* nvmlEventSet_t;
inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x1;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x2;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;

// What nvmlEventSetWait_v2 fills. The plain nvmlEventSetWait fills only the first three members (the struct
// grew at the end), so one buffer of this type serves both symbols.
typedef struct nvmlEventData_st {
  nvmlDevice_t device;           // the GPU the event is about
  unsigned long long eventType;  // one nvmlEventType* bit
  unsigned long long eventData;  // for nvmlEventTypeXidCriticalError: the XID number
  unsigned int gpuInstanceId;    // MIG: the instance, or ~0 for the whole GPU
  unsigned int computeInstanceId;
} nvmlEventData_t;

// Buffer sizes from nvml.h.
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE (-1)

// What nvmlDeviceGetPciInfo_v3/_v2 fill (nvml.h, nvmlPciInfo_t). The plain nvmlDeviceGetPciInfo fills an
// older, shorter layout whose members up to pciSubSystemId sit at the same offsets, so this buffer serves all.
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // the device id in the upper 16 bits, the vendor id (0x10de) in the lower
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel was running over the past sample period
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlProcessInfo_v1_st {  // nvmlDeviceGetComputeRunningProcesses (no suffix)
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {  // _v2 and _v3 entry points
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

}  // extern "C"

namespace gpusage::device::nvml {

// One pointer per NVML entry point. A null pointer means the loaded library lacks the symbol (old driver);
// callers treat that as "not supported". Where NVML has versioned symbols the newest is tried first.
struct Api {
  nvmlReturn_t (*init)() = nullptr;                     // nvmlInit_v2, then nvmlInit
  nvmlReturn_t (*shutdown)() = nullptr;                 // nvmlShutdown
  const char* (*error_string)(nvmlReturn_t) = nullptr;  // nvmlErrorString
  nvmlReturn_t (*system_get_driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*system_get_cuda_driver_version)(int*) = nullptr;  // _v2, then plain
  nvmlReturn_t (*system_get_process_name)(unsigned int, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_count)(unsigned int*) = nullptr;                          // _v2, then plain
  nvmlReturn_t (*device_get_handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;  // _v2, then plain
  nvmlReturn_t (*device_get_name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_cuda_compute_capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*device_get_memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*device_get_pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;  // _v3, _v2, then plain
  nvmlReturn_t (*device_get_utilization_rates)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*device_get_temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_power_usage)(nvmlDevice_t, unsigned int*) = nullptr;                      // mW
  nvmlReturn_t (*device_get_total_energy_consumption)(nvmlDevice_t, unsigned long long*) = nullptr;   // mJ
  nvmlReturn_t (*device_get_enforced_power_limit)(nvmlDevice_t, unsigned int*) = nullptr;             // mW
  nvmlReturn_t (*device_get_power_management_limit)(nvmlDevice_t, unsigned int*) = nullptr;           // mW
  nvmlReturn_t (*device_get_power_management_default_limit)(nvmlDevice_t, unsigned int*) = nullptr;   // mW
  nvmlReturn_t (*device_get_clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;      // MHz
  nvmlReturn_t (*device_get_max_clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;  // MHz
  nvmlReturn_t (*device_get_fan_speed)(nvmlDevice_t, unsigned int*) = nullptr;                        // percent
  nvmlReturn_t (*device_get_performance_state)(nvmlDevice_t, nvmlPstates_t*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons (driver >= 535), then nvmlDeviceGetCurrentClocksThrottleReasons.
  nvmlReturn_t (*device_get_clocks_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*device_get_curr_pcie_link_generation)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_curr_pcie_link_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_max_pcie_link_generation)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_max_pcie_link_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_pcie_throughput)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*) = nullptr;  // KB/s
  nvmlReturn_t (*device_get_ecc_mode)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*device_get_total_ecc_errors)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
                                              unsigned long long*) = nullptr;
  nvmlReturn_t (*device_get_persistence_mode)(nvmlDevice_t, nvmlEnableState_t*) = nullptr;
  // Memory health (NVML API Reference, "Device Queries":
  // https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html). Retired pages (Kepler to Volta;
  // pageCount in: the addresses buffer's size, 0 to ask for the count only; out: the count), the pending
  // flag, and the row remapper (Ampere and later: rows remapped for correctable and for uncorrectable errors,
  // a remap waiting for a reset, a remap that ever failed).
  nvmlReturn_t (*device_get_retired_pages)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*,
                                           unsigned long long*) = nullptr;
  nvmlReturn_t (*device_get_retired_pages_pending_status)(nvmlDevice_t, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*device_get_remapped_rows)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                           unsigned int*) = nullptr;
  // XID events: one set for all GPUs, drained without waiting at each sample. nvmlEventSetWait_v2, then the
  // plain symbol (drivers before 450).
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*device_get_supported_event_types)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*device_register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned int) = nullptr;  // timeout in ms
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;
  // Running compute processes: _v3 and _v2 fill nvmlProcessInfo_v2_t, the plain symbol nvmlProcessInfo_v1_t.
  nvmlReturn_t (*device_get_compute_running_processes_v2)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*) = nullptr;
  nvmlReturn_t (*device_get_compute_running_processes_v1)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*) = nullptr;
};

// A loaded library. Closing happens in the destructor (after nvmlShutdown, done by the backend).
class Library {
 public:
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library();

  // Tries `path` if not empty (no fallback: the user asked for that file), else the sonames
  // libnvidia-ml.so.1 then libnvidia-ml.so. On failure returns false and sets `error` to one line.
  bool open(const std::string& path, std::string& error);
  const Api& api() const { return api_; }
  const std::string& loaded_path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
  Api api_;
};

// The last failing call, for messages ("nvmlDeviceGetPowerUsage at nvml_backend.cpp:120 returned 999").
struct CallRecord {
  const char* function = "";
  const char* file = "";
  int line = 0;
  nvmlReturn_t result = NVML_SUCCESS;
  unsigned long long calls = 0;
  unsigned long long failures = 0;
};

}  // namespace gpusage::device::nvml
