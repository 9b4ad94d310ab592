#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/device/backend.hpp"
#include "core/device/query.hpp"
#include "unit/device/stub_env.hpp"

namespace gpusage::device {
namespace {

using testing::StubCalls;
using testing::StubScript;

NvmlOptions modern() { return {GPUSAGE_NVML_STUB_MODERN}; }

TEST(NvmlBackend, ReadsSystemInfoFromTheScriptedLibrary) {
  StubScript script("two_gpus.json");
  SystemInfo info = query_system(modern());
  ASSERT_TRUE(info.available) << info.message;
  EXPECT_EQ(info.backend, "nvml");
  EXPECT_EQ(info.driver_version, "550.54.15");
  ASSERT_TRUE(info.cuda_driver_version);
  EXPECT_EQ(*info.cuda_driver_version, (CudaVersion{12, 4}));
  ASSERT_EQ(info.gpus.size(), 2u);
  const GpuInfo& h100 = info.gpus[0];
  EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(h100.memory_total_bytes, 85520809984ULL);
  EXPECT_EQ(h100.compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(h100.pcie_gen_current, 5u);
  EXPECT_EQ(h100.pcie_width_max, 16u);
  EXPECT_EQ(h100.power_limit_enforced_w, 700.0);
  EXPECT_EQ(h100.persistence_mode, true);
  EXPECT_EQ(h100.ecc_enabled, true);
  const GpuInfo& rtx = info.gpus[1];
  EXPECT_EQ(rtx.compute_capability, (ComputeCapability{8, 9}));
  EXPECT_EQ(rtx.persistence_mode, false);
  EXPECT_EQ(rtx.power_limit_w, 400.0);
  EXPECT_EQ(rtx.power_limit_default_w, 450.0);
  EXPECT_FALSE(pcie_link_degraded(h100));
  EXPECT_TRUE(pcie_link_degraded(rtx));  // gen 1 of 4
  EXPECT_FALSE(power_limit_reduced(h100));
  EXPECT_TRUE(power_limit_reduced(rtx));  // 400 W of a 450 W default
}

TEST(NvmlBackend, SampleReproducesTheScriptedValues) {
  StubScript script("two_gpus.json");
  auto backend = open_nvml_backend(modern());
  auto gpus = backend->sample();
  ASSERT_EQ(gpus.size(), 2u);
  const GpuSample& g = gpus[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_EQ(g.utilization_gpu_percent, 87u);
  EXPECT_EQ(g.utilization_memory_percent, 41u);
  EXPECT_EQ(g.memory_used_bytes, 61203283968ULL);
  EXPECT_EQ(g.memory_total_bytes, 85520809984ULL);
  EXPECT_EQ(g.temperature_c, 64u);
  EXPECT_DOUBLE_EQ(g.power_w.value(), 512.345);
  EXPECT_DOUBLE_EQ(g.power_limit_w.value(), 700.0);
  EXPECT_EQ(g.sm_clock_mhz, 1755u);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980u);
  EXPECT_EQ(g.memory_clock_mhz, 2619u);
  EXPECT_EQ(g.pstate, 0u);
  EXPECT_EQ(g.throttle_mask, throttle::sw_power_cap);
  EXPECT_EQ(g.pcie_gen, 5u);
  EXPECT_EQ(g.pcie_tx_bytes_per_s, 123456ULL * 1024);
  EXPECT_EQ(g.pcie_rx_bytes_per_s, 654321ULL * 1024);
  EXPECT_EQ(g.ecc_corrected_volatile, 0ULL);
  EXPECT_EQ(g.ecc_uncorrected_volatile, 0ULL);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 1u);
  EXPECT_EQ(g.processes[0].name, "python3");
  EXPECT_EQ(g.processes[0].used_memory_bytes, 61203283968ULL);
}

TEST(NvmlBackend, UnsupportedAndFailingMetricsAreEmptyNotZero) {
  StubScript script("two_gpus.json");
  auto gpus = open_nvml_backend(modern())->sample();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_FALSE(gpus[0].fan_percent);           // H100 SXM: no fan sensor (NOT_SUPPORTED)
  EXPECT_EQ(gpus[1].fan_percent, 30u);
  EXPECT_FALSE(gpus[1].temperature_c);         // scripted error 999
  EXPECT_FALSE(gpus[1].pcie_tx_bytes_per_s);   // not in the script
  EXPECT_FALSE(gpus[1].ecc_corrected_volatile);  // ECC disabled: not asked
  EXPECT_TRUE(gpus[1].processes.empty());
}

TEST(NvmlBackend, ProbesAnUnsupportedMetricOnceButRetriesAFailingOne) {
  StubScript script("two_gpus.json");
  StubCalls calls(GPUSAGE_NVML_STUB_MODERN);
  ASSERT_TRUE(calls.loaded());
  auto backend = open_nvml_backend(modern());
  auto fan_before = calls("nvmlDeviceGetFanSpeed");
  auto temperature_before = calls("nvmlDeviceGetTemperature");
  for (int i = 0; i < 3; ++i) backend->sample();
  // GPU 0 has no fan: asked once. GPU 1 has one: asked every sample.
  EXPECT_EQ(calls("nvmlDeviceGetFanSpeed") - fan_before, 1u + 3u);
  // GPU 1's temperature fails with an unknown error: retried every sample, like GPU 0's good one.
  EXPECT_EQ(calls("nvmlDeviceGetTemperature") - temperature_before, 3u + 3u);
}

TEST(NvmlBackend, FallsBackToUnversionedSymbolsOfOlderDrivers) {
  StubScript script("two_gpus.json");
  auto backend = open_nvml_backend({GPUSAGE_NVML_STUB_LEGACY});
  ASSERT_TRUE(backend->system().available) << backend->system().message;
  EXPECT_EQ(backend->system().cuda_driver_version, (CudaVersion{12, 4}));
  auto gpus = backend->sample();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].throttle_mask, throttle::sw_power_cap);  // nvmlDeviceGetCurrentClocksThrottleReasons
  ASSERT_EQ(gpus[0].processes.size(), 1u);                  // nvmlDeviceGetComputeRunningProcesses (v1 struct)
  EXPECT_EQ(gpus[0].processes[0].used_memory_bytes, 61203283968ULL);
}

TEST(NvmlBackend, TheEnvironmentVariableChoosesTheLibrary) {
  StubScript script("two_gpus.json");
  ::setenv("GPUSAGE_NVML_LIBRARY", GPUSAGE_NVML_STUB_MODERN, 1);
  auto backend = open_nvml_backend();
  ::unsetenv("GPUSAGE_NVML_LIBRARY");
  EXPECT_TRUE(backend->system().available) << backend->system().message;
  EXPECT_EQ(backend->system().gpus.size(), 2u);
}

TEST(NvmlBackend, AMissingLibraryIsUnavailableWithAOneLineReason) {
  auto backend = open_nvml_backend({"/nonexistent/libnvidia-ml.so.1"});
  const SystemInfo& info = backend->system();
  EXPECT_FALSE(info.available);
  EXPECT_NE(info.message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << info.message;
  EXPECT_EQ(info.message.find('\n'), std::string::npos);
  EXPECT_TRUE(backend->sample().empty());
}

TEST(NvmlBackend, ADriverThatFailsToInitialiseIsUnavailable) {
  StubScript script("init_fails.json");
  auto backend = open_nvml_backend(modern());
  EXPECT_FALSE(backend->system().available);
  EXPECT_NE(backend->system().message.find("Driver Not Loaded"), std::string::npos) << backend->system().message;
  EXPECT_TRUE(backend->sample().empty());
}

TEST(NvmlBackend, ScriptedSequencesAdvanceOneValuePerSample) {
  StubScript script("alerts.json");
  auto backend = open_nvml_backend(modern());
  std::vector<unsigned> temperatures;
  for (int i = 0; i < 5; ++i) temperatures.push_back(backend->sample().at(0).temperature_c.value());
  EXPECT_EQ(temperatures, (std::vector<unsigned>{70, 84, 88, 89, 89}));
}

TEST(Throttle, DecodesReasonsReadably) {
  EXPECT_EQ(throttle::describe(0), "none");
  EXPECT_EQ(throttle::describe(throttle::sw_power_cap | throttle::hw_thermal), "power cap, thermal (hardware)");
  EXPECT_EQ(throttle::decode_ids(throttle::hw_slowdown | 0x10000), (std::vector<std::string>{"hw_slowdown", "0x10000"}));
}

}  // namespace
}  // namespace gpusage::device
