#include <gtest/gtest.h>
#include <unistd.h>

#include "monitor/sampler.hpp"
#include "unit/device/stub_env.hpp"

namespace gpusage::monitor {
namespace {

TEST(Sampler, CombinesScriptedGpusWithHostReadingsAndProcessCpu) {
  gpusage::testing::StubScript script("two_gpus.json");
  Sampler sampler(device::open_nvml_backend({GPUSAGE_NVML_STUB_MODERN}));
  sampler.prime();
  ::usleep(50'000);
  device::Sample s = sampler.next();
  EXPECT_EQ(s.backend, "nvml");
  EXPECT_TRUE(s.gpu_available);
  EXPECT_EQ(s.driver_version, "550.54.15");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_GT(s.unix_time_s, 1.7e9);
  ASSERT_TRUE(s.host.memory_total_bytes);
  EXPECT_TRUE(s.host.cpu_percent);  // primed: a rate over the 50 ms
  ASSERT_EQ(s.gpus[0].processes.size(), 1u);
  // The scripted process is pid 1, which exists on any Linux system: its CPU use is measured, not scripted.
  EXPECT_TRUE(s.gpus[0].processes[0].cpu_percent);
}

TEST(Sampler, WithoutADriverStillReadsTheHost) {
  Sampler sampler(device::open_nvml_backend({"/nonexistent/libnvidia-ml.so.1"}));
  device::Sample s = sampler.next();
  EXPECT_FALSE(s.gpu_available);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.host.memory_total_bytes);
  EXPECT_FALSE(s.gpu_message.empty());
}

}  // namespace
}  // namespace gpusage::monitor
