// INTERNAL: the one place NVML symbols are looked up (dlopen table). See nvml_api.hpp.
#include "core/device/nvml_api.hpp"

#include <dlfcn.h>

#include <initializer_list>

namespace gpusage::device::nvml {

namespace {

// First symbol of `names` that the library exports (newest version first), cast to the table's type.
template <class Fn>
void bind(void* handle, Fn& slot, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(handle, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return;
    }
  }
  slot = nullptr;
}

}  // namespace

Library::~Library() {
  if (handle_) ::dlclose(handle_);
}

bool Library::open(const std::string& path, std::string& error) {
  // The soname with the ABI number first: libnvidia-ml.so (no suffix) only exists where the driver's
  // development symlink is installed. Then the folders where containers and WSL mount the driver without
  // adding them to the loader's path (the NVIDIA container toolkit's /usr/local/nvidia, WSL's /usr/lib/wsl).
  std::initializer_list<const char*> defaults = {"libnvidia-ml.so.1", "libnvidia-ml.so",
                                                 "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                                                 "/usr/lib/wsl/lib/libnvidia-ml.so.1"};
  std::string first_error;
  auto try_open = [&](const char* candidate) {
    handle_ = ::dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      path_ = candidate;
    } else if (first_error.empty()) {
      const char* why = ::dlerror();
      first_error = why ? why : candidate;
    }
    return handle_ != nullptr;
  };
  if (!path.empty()) {
    try_open(path.c_str());
  } else {
    for (const char* candidate : defaults)
      if (try_open(candidate)) break;
  }
  if (!handle_) {
    error = first_error;
    return false;
  }
  bind(handle_, api_.init, {"nvmlInit_v2", "nvmlInit"});
  bind(handle_, api_.shutdown, {"nvmlShutdown"});
  bind(handle_, api_.error_string, {"nvmlErrorString"});
  bind(handle_, api_.system_get_driver_version, {"nvmlSystemGetDriverVersion"});
  bind(handle_, api_.system_get_cuda_driver_version,
       {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  bind(handle_, api_.system_get_process_name, {"nvmlSystemGetProcessName"});
  bind(handle_, api_.device_get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  bind(handle_, api_.device_get_handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(handle_, api_.device_get_name, {"nvmlDeviceGetName"});
  bind(handle_, api_.device_get_uuid, {"nvmlDeviceGetUUID"});
  bind(handle_, api_.device_get_cuda_compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
  bind(handle_, api_.device_get_memory_info, {"nvmlDeviceGetMemoryInfo"});
  bind(handle_, api_.device_get_pci_info,
       {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
  bind(handle_, api_.device_get_utilization_rates, {"nvmlDeviceGetUtilizationRates"});
  bind(handle_, api_.device_get_temperature, {"nvmlDeviceGetTemperature"});
  bind(handle_, api_.device_get_power_usage, {"nvmlDeviceGetPowerUsage"});
  bind(handle_, api_.device_get_total_energy_consumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  bind(handle_, api_.device_get_enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  bind(handle_, api_.device_get_power_management_limit, {"nvmlDeviceGetPowerManagementLimit"});
  bind(handle_, api_.device_get_power_management_default_limit, {"nvmlDeviceGetPowerManagementDefaultLimit"});
  bind(handle_, api_.device_get_clock_info, {"nvmlDeviceGetClockInfo"});
  bind(handle_, api_.device_get_max_clock_info, {"nvmlDeviceGetMaxClockInfo"});
  bind(handle_, api_.device_get_fan_speed, {"nvmlDeviceGetFanSpeed"});
  bind(handle_, api_.device_get_performance_state, {"nvmlDeviceGetPerformanceState"});
  bind(handle_, api_.device_get_clocks_event_reasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(handle_, api_.device_get_curr_pcie_link_generation, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  bind(handle_, api_.device_get_curr_pcie_link_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  bind(handle_, api_.device_get_max_pcie_link_generation, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  bind(handle_, api_.device_get_max_pcie_link_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  bind(handle_, api_.device_get_pcie_throughput, {"nvmlDeviceGetPcieThroughput"});
  bind(handle_, api_.device_get_ecc_mode, {"nvmlDeviceGetEccMode"});
  bind(handle_, api_.device_get_total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  bind(handle_, api_.device_get_persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  bind(handle_, api_.device_get_retired_pages, {"nvmlDeviceGetRetiredPages"});
  bind(handle_, api_.device_get_retired_pages_pending_status, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  bind(handle_, api_.device_get_remapped_rows, {"nvmlDeviceGetRemappedRows"});
  bind(handle_, api_.event_set_create, {"nvmlEventSetCreate"});
  bind(handle_, api_.device_get_supported_event_types, {"nvmlDeviceGetSupportedEventTypes"});
  bind(handle_, api_.device_register_events, {"nvmlDeviceRegisterEvents"});
  bind(handle_, api_.event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  bind(handle_, api_.event_set_free, {"nvmlEventSetFree"});
  bind(handle_, api_.device_get_compute_running_processes_v2,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  bind(handle_, api_.device_get_compute_running_processes_v1, {"nvmlDeviceGetComputeRunningProcesses"});
  return true;
}

}  // namespace gpusage::device::nvml
