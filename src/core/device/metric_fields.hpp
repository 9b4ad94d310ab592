// The per-GPU metrics as one list, so every view (JSON, CSV, replay) names and orders them the same way.
// `f(name, optional_field)` is called for each; works on const and non-const samples.
#pragma once

#include <type_traits>

#include "core/device/types.hpp"

namespace gpusage::device {

template <class Gpu, class F>
requires std::is_same_v<std::remove_const_t<Gpu>, GpuSample>
void for_each_metric(Gpu& g, F&& f) {
  f("utilization_gpu_percent", g.utilization_gpu_percent);
  f("utilization_memory_percent", g.utilization_memory_percent);
  f("memory_used_bytes", g.memory_used_bytes);
  f("memory_total_bytes", g.memory_total_bytes);
  f("temperature_c", g.temperature_c);
  f("power_w", g.power_w);
  f("power_limit_w", g.power_limit_w);
  f("sm_clock_mhz", g.sm_clock_mhz);
  f("sm_clock_max_mhz", g.sm_clock_max_mhz);
  f("memory_clock_mhz", g.memory_clock_mhz);
  f("memory_clock_max_mhz", g.memory_clock_max_mhz);
  f("fan_percent", g.fan_percent);
  f("pstate", g.pstate);
  f("throttle_mask", g.throttle_mask);
  f("pcie_gen", g.pcie_gen);
  f("pcie_width", g.pcie_width);
  f("pcie_tx_bytes_per_s", g.pcie_tx_bytes_per_s);
  f("pcie_rx_bytes_per_s", g.pcie_rx_bytes_per_s);
  f("ecc_corrected_volatile", g.ecc_corrected_volatile);
  f("ecc_uncorrected_volatile", g.ecc_uncorrected_volatile);
  f("ecc_uncorrected_aggregate", g.ecc_uncorrected_aggregate);
  f("retired_pages_single_bit", g.retired_pages_single_bit);
  f("retired_pages_double_bit", g.retired_pages_double_bit);
  f("retired_pages_pending", g.retired_pages_pending);
  f("remapped_rows_corrected", g.remapped_rows_corrected);
  f("remapped_rows_uncorrected", g.remapped_rows_uncorrected);
  f("remapped_rows_pending", g.remapped_rows_pending);
  f("remapped_rows_failure", g.remapped_rows_failure);
}

template <class Host, class F>
requires std::is_same_v<std::remove_const_t<Host>, HostSample>
void for_each_metric(Host& h, F&& f) {
  f("cpu_percent", h.cpu_percent);
  f("cpu_count", h.cpu_count);
  f("memory_used_bytes", h.memory_used_bytes);
  f("memory_total_bytes", h.memory_total_bytes);
}

}  // namespace gpusage::device
