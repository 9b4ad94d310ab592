// Memory health and XID events through the real dlopen path, on the scripted library (gpu_health.json: an
// A100 with a row remapper and XID events, a V100 with retired pages, a GeForce card with neither).
#include <gtest/gtest.h>

#include "core/device/backend.hpp"
#include "unit/device/stub_env.hpp"

namespace gpusage::device {
namespace {

using testing::StubCalls;
using testing::StubScript;

NvmlOptions modern_stub() { return {GPUSAGE_NVML_STUB_MODERN}; }

TEST(NvmlHealth, AmpereReportsRemappedRowsAndTheLifetimeUncorrectedCount) {
  StubScript script("gpu_health.json");
  auto backend = open_nvml_backend(modern_stub());
  backend->sample();
  backend->sample();
  const GpuSample a100 = backend->sample().at(0);  // the third read of each scripted sequence
  EXPECT_EQ(a100.ecc_uncorrected_volatile, 2u);
  EXPECT_EQ(a100.ecc_uncorrected_aggregate, 7u);
  EXPECT_EQ(a100.remapped_rows_corrected, 1u);
  EXPECT_EQ(a100.remapped_rows_uncorrected, 1u);
  EXPECT_EQ(a100.remapped_rows_pending, 1u);
  EXPECT_EQ(a100.remapped_rows_failure, 0u);
  EXPECT_FALSE(a100.retired_pages_single_bit);  // Ampere retires no pages (NOT_SUPPORTED)
  EXPECT_FALSE(a100.retired_pages_pending);
}

TEST(NvmlHealth, VoltaReportsRetiredPagesByCauseAndThePendingFlag) {
  StubScript script("gpu_health.json");
  auto backend = open_nvml_backend(modern_stub());
  const GpuSample first = backend->sample().at(1);
  EXPECT_EQ(first.retired_pages_single_bit, 2u);
  EXPECT_EQ(first.retired_pages_double_bit, 0u);
  EXPECT_EQ(first.retired_pages_pending, 0u);
  backend->sample();
  const GpuSample third = backend->sample().at(1);
  EXPECT_EQ(third.retired_pages_single_bit, 3u);
  EXPECT_EQ(third.retired_pages_double_bit, 1u);
  EXPECT_EQ(third.retired_pages_pending, 1u);
  EXPECT_FALSE(third.remapped_rows_corrected);  // no row remapper before Ampere
}

TEST(NvmlHealth, CardWithoutEccHasNoHealthFieldsAndNoEvents) {
  StubScript script("gpu_health.json");
  auto backend = open_nvml_backend(modern_stub());
  for (int i = 0; i < 3; ++i) {
    const GpuSample rtx = backend->sample().at(2);
    EXPECT_FALSE(rtx.ecc_uncorrected_volatile);
    EXPECT_FALSE(rtx.ecc_uncorrected_aggregate);
    EXPECT_FALSE(rtx.retired_pages_single_bit);
    EXPECT_FALSE(rtx.retired_pages_double_bit);
    EXPECT_FALSE(rtx.retired_pages_pending);
    EXPECT_FALSE(rtx.remapped_rows_corrected);
    EXPECT_FALSE(rtx.remapped_rows_failure);
    EXPECT_TRUE(rtx.xid_events.empty());
  }
}

TEST(NvmlHealth, UnsupportedHealthQueriesAreAskedOnce) {
  StubScript script("gpu_health.json");
  StubCalls calls(GPUSAGE_NVML_STUB_MODERN);
  ASSERT_TRUE(calls.loaded());
  const auto before = calls("nvmlDeviceGetRemappedRows");
  auto backend = open_nvml_backend(modern_stub());
  for (int i = 0; i < 4; ++i) backend->sample();
  // The A100 is asked every sample; the V100 and the GeForce card answered NOT_SUPPORTED once each.
  EXPECT_EQ(calls("nvmlDeviceGetRemappedRows") - before, 4u + 2u);
}

TEST(NvmlHealth, XidEventsArriveWithTheSampleOfTheirGpuInOrder) {
  StubScript script("gpu_health.json");
  auto backend = open_nvml_backend(modern_stub());
  auto first = backend->sample();
  EXPECT_TRUE(first.at(0).xid_events.empty());
  auto second = backend->sample();
  EXPECT_EQ(second.at(0).xid_events, (std::vector<std::uint64_t>{79, 48}));
  EXPECT_TRUE(second.at(1).xid_events.empty());
  EXPECT_TRUE(backend->sample().at(0).xid_events.empty());  // each event is delivered once
}

TEST(NvmlHealth, LegacyLibraryDeliversXidEventsThroughThePlainWait) {
  StubScript script("gpu_health.json");
  auto backend = open_nvml_backend({GPUSAGE_NVML_STUB_LEGACY});
  backend->sample();
  EXPECT_EQ(backend->sample().at(0).xid_events, (std::vector<std::uint64_t>{79, 48}));
}

TEST(NvmlHealth, NoGpuDeliveringEventsMeansNoEventSetIsKept) {
  StubScript script("two_gpus.json");  // neither GPU scripts XID events: both answer NOT_SUPPORTED
  StubCalls calls(GPUSAGE_NVML_STUB_MODERN);
  const auto created = calls("nvmlEventSetCreate"), freed = calls("nvmlEventSetFree");
  const auto waits = calls("nvmlEventSetWait_v2");
  {
    auto backend = open_nvml_backend(modern_stub());
    backend->sample();
  }
  EXPECT_EQ(calls("nvmlEventSetCreate") - created, 1u);
  EXPECT_EQ(calls("nvmlEventSetFree") - freed, 1u);
  EXPECT_EQ(calls("nvmlEventSetWait_v2") - waits, 0u);
}

}  // namespace
}  // namespace gpusage::device
