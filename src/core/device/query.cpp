#include "core/device/query.hpp"

namespace gpusage::device {

SystemInfo query_system(const NvmlOptions& options) {
  auto backend = open_nvml_backend(options);
  return backend->system();
}

bool pcie_link_degraded(const GpuInfo& gpu) {
  bool gen_low = gpu.pcie_gen_current && gpu.pcie_gen_max && *gpu.pcie_gen_current < *gpu.pcie_gen_max;
  bool width_low = gpu.pcie_width_current && gpu.pcie_width_max && *gpu.pcie_width_current < *gpu.pcie_width_max;
  return gen_low || width_low;
}

bool power_limit_reduced(const GpuInfo& gpu) {
  return gpu.power_limit_w && gpu.power_limit_default_w && *gpu.power_limit_w < *gpu.power_limit_default_w;
}

}  // namespace gpusage::device
