// The GPU health rules: XID events, uncorrected ECC errors during the watch, retired pages and remapped rows.
#include "monitor/health_alerts.hpp"

#include <gtest/gtest.h>

#include "monitor/alerts.hpp"
#include "unit/monitor/sample_fixture.hpp"

namespace gpusage::monitor {
namespace {

using testing::sample_at;
using testing::training_gpu;

std::vector<Alert> of_kind(const std::vector<Alert>& alerts, AlertKind kind) {
  std::vector<Alert> out;
  for (const auto& a : alerts)
    if (a.kind == kind) out.push_back(a);
  return out;
}

// An Ampere GPU's row remapper as NVML reports it.
device::GpuSample with_remapper(unsigned corrected, unsigned uncorrected, unsigned pending,
                                unsigned failure) {
  auto gpu = training_gpu();
  gpu.remapped_rows_corrected = corrected;
  gpu.remapped_rows_uncorrected = uncorrected;
  gpu.remapped_rows_pending = pending;
  gpu.remapped_rows_failure = failure;
  return gpu;
}

HealthCondition condition(const std::vector<HealthCondition>& all, AlertKind kind) {
  for (const auto& c : all)
    if (c.kind == kind) return c;
  return {};
}

TEST(HealthAlerts, XidEventIsACriticalAlertNamingTheXidTheGpuTheTimeAndTheNextStep) {
  auto gpu = training_gpu(2);
  gpu.xid_events = {79};
  const auto alerts = xid_alerts(gpu, 1764690600.0);  // 2025-12-02T15:50:00Z
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts.front();
  EXPECT_EQ(a.kind, AlertKind::xid_error);
  EXPECT_EQ(a.gpu, 2u);
  EXPECT_EQ(a.xid, 79u);
  EXPECT_EQ(a.severity, "critical");
  EXPECT_EQ(a.since_unix_time_s, 1764690600.0);
  EXPECT_TRUE(a.message.starts_with("GPU 2 at 2025-12-02T15:50:00Z: XID 79 (GPU has fallen off the bus): "))
      << a.message;
  EXPECT_NE(a.message.find("Next: drain the node and reboot it"), std::string::npos) << a.message;
  EXPECT_EQ(to_json(a).at("xid"), 79);
}

TEST(HealthAlerts, ProgramXidIsAWarningAndUnknownXidGetsTheGenericLine) {
  auto gpu = training_gpu();
  gpu.xid_events = {31, 4242};
  const auto alerts = xid_alerts(gpu, 100);
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].severity, "warning");
  EXPECT_NE(alerts[0].message.find("XID 31 (GPU memory page fault)"), std::string::npos);
  EXPECT_EQ(alerts[1].severity, "warning");
  EXPECT_NE(alerts[1].message.find("XID 4242: a GPU error gpusage has no description of"), std::string::npos);
}

TEST(HealthAlerts, EachXidEventIsRaisedEvenWhenTheSameXidRepeats) {
  AlertEngine engine;
  auto gpu = training_gpu();
  gpu.xid_events = {13};
  EXPECT_EQ(of_kind(engine.evaluate(sample_at(100, {gpu})).raised, AlertKind::xid_error).size(), 1u);
  gpu.xid_events.clear();
  auto quiet = engine.evaluate(sample_at(101, {gpu}));
  EXPECT_TRUE(of_kind(quiet.active, AlertKind::xid_error).empty());  // an event holds for its sample only
  gpu.xid_events = {13, 13};
  EXPECT_EQ(of_kind(engine.evaluate(sample_at(102, {gpu})).raised, AlertKind::xid_error).size(), 2u);
}

TEST(HealthAlerts, UncorrectedErrorsPresentAtTheStartAreNotCountedAsNew) {
  GpuHealthWatch watch;
  auto gpu = training_gpu();
  gpu.ecc_uncorrected_volatile = 3;
  auto ecc = condition(watch.evaluate(gpu), AlertKind::ecc_errors);
  ASSERT_TRUE(ecc.message);
  EXPECT_EQ(std::string(ecc.severity), "critical");
  EXPECT_TRUE(ecc.message->starts_with("GPU 0: 3 uncorrected ECC memory errors before gpusage started watching"))
      << *ecc.message;
  EXPECT_FALSE(ecc.rose);
}

TEST(HealthAlerts, NewUncorrectedErrorsAreCountedFromTheFirstReadingAndRaiseAgainWhenRising) {
  AlertEngine engine;
  auto gpu = training_gpu();
  gpu.ecc_uncorrected_volatile = 1;
  engine.evaluate(sample_at(100, {gpu}));
  gpu.ecc_uncorrected_volatile = 3;
  auto update = engine.evaluate(sample_at(101, {gpu}));
  // Active since the first sample (1 error since the driver loaded); the rise raises it again.
  auto raised = of_kind(update.raised, AlertKind::ecc_errors);
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(raised[0].since_unix_time_s, 101);
  EXPECT_TRUE(
      raised[0].message.starts_with("GPU 0: 2 uncorrected ECC memory errors while gpusage watched (the "
                                    "driver's count went 1 to 3)"))
      << raised[0].message;
  EXPECT_NE(
      raised[0].message.find("drain the node and reset the GPU (nvidia-smi -r); if they recur, RMA the GPU"),
      std::string::npos);
}

TEST(HealthAlerts, AnUncorrectedRiseOnAnActiveAlertIsRaisedAgain) {
  GpuHealthWatch watch;
  auto gpu = training_gpu();
  watch.evaluate(gpu);  // 0 uncorrected
  gpu.ecc_uncorrected_volatile = 2;
  EXPECT_TRUE(condition(watch.evaluate(gpu), AlertKind::ecc_errors).rose);
  EXPECT_FALSE(condition(watch.evaluate(gpu), AlertKind::ecc_errors).rose);  // unchanged: held, not raised
  gpu.ecc_uncorrected_volatile = 4;
  auto ecc = condition(watch.evaluate(gpu), AlertKind::ecc_errors);
  EXPECT_TRUE(ecc.rose);
  EXPECT_TRUE(ecc.message->starts_with("GPU 0: 4 uncorrected ECC memory errors while gpusage watched"))
      << *ecc.message;
}

TEST(HealthAlerts, AggregateCountStandsInWhereTheVolatileCountIsMissing) {
  GpuHealthWatch watch;
  auto gpu = training_gpu();
  gpu.ecc_uncorrected_volatile.reset();
  gpu.ecc_uncorrected_aggregate = 5;
  watch.evaluate(gpu);
  gpu.ecc_uncorrected_aggregate = 6;
  auto ecc = condition(watch.evaluate(gpu), AlertKind::ecc_errors);
  ASSERT_TRUE(ecc.message);
  EXPECT_TRUE(ecc.message->starts_with("GPU 0: 1 uncorrected ECC memory errors while gpusage watched"))
      << *ecc.message;
}

TEST(HealthAlerts, RetiredPagesRisingDuringTheWatchAreAWarning) {
  GpuHealthWatch watch;
  auto gpu = training_gpu();
  gpu.retired_pages_single_bit = 2;
  gpu.retired_pages_double_bit = 0;
  gpu.retired_pages_pending = 0;
  EXPECT_FALSE(condition(watch.evaluate(gpu), AlertKind::retired_pages).message);  // old pages are not news
  gpu.retired_pages_double_bit = 1;
  auto retired = condition(watch.evaluate(gpu), AlertKind::retired_pages);
  ASSERT_TRUE(retired.message);
  EXPECT_TRUE(retired.rose);
  EXPECT_EQ(std::string(retired.severity), "warning");
  EXPECT_EQ(
      *retired.message,
      "GPU 0: 1 memory page retired while gpusage watched (3 in all: 2 for repeated single-bit errors, 1 for "
      "double-bit errors). Fix: the job may go on; check `nvidia-smi -q -d PAGE_RETIREMENT` after it; if "
      "pages keep being retired, drain the node and RMA the GPU.");
}

TEST(HealthAlerts, PendingRetirementAsksForAReset) {
  GpuHealthWatch watch;
  auto gpu = training_gpu();
  gpu.retired_pages_single_bit = 4;
  gpu.retired_pages_double_bit = 0;
  gpu.retired_pages_pending = 1;
  auto retired = condition(watch.evaluate(gpu), AlertKind::retired_pages);
  ASSERT_TRUE(retired.message);
  EXPECT_EQ(
      *retired.message,
      "GPU 0: 4 memory pages retired, and a retirement is pending: the bad page stays in use until the GPU "
      "is reset. Fix: when the job ends, reset the GPU (nvidia-smi -r) or reboot the node; if pages keep "
      "being retired, drain the node and RMA the GPU.");
}

TEST(HealthAlerts, RemappedRowsRisingAndPendingAskForAReset) {
  GpuHealthWatch watch;
  EXPECT_FALSE(condition(watch.evaluate(with_remapper(1, 0, 0, 0)), AlertKind::remapped_rows).message);
  auto rows = condition(watch.evaluate(with_remapper(1, 1, 1, 0)), AlertKind::remapped_rows);
  ASSERT_TRUE(rows.message);
  EXPECT_TRUE(rows.rose);
  EXPECT_EQ(std::string(rows.severity), "warning");
  EXPECT_EQ(
      *rows.message,
      "GPU 0: 1 memory row remapped while gpusage watched (1 for correctable, 1 for uncorrectable errors in "
      "all), and the remap is pending. Fix: the remap takes effect at the next GPU reset: when the job ends, "
      "drain the node and reset the GPU (nvidia-smi -r).");
}

TEST(HealthAlerts, RemappingFailureIsCriticalAndNamesTheRma) {
  GpuHealthWatch watch;
  // A failure in the past holds from the first reading.
  auto rows = condition(watch.evaluate(with_remapper(0, 0, 0, 1)), AlertKind::remapped_rows);
  ASSERT_TRUE(rows.message);
  EXPECT_EQ(std::string(rows.severity), "critical");
  EXPECT_NE(rows.message->find("remapping failure"), std::string::npos);
  EXPECT_NE(rows.message->find("RMA the GPU"), std::string::npos);
}

TEST(HealthAlerts, CardWithoutEccOrMemoryHealthCountersStaysQuiet) {
  AlertEngine engine;
  auto gpu = training_gpu();
  gpu.ecc_corrected_volatile.reset();  // GeForce: every health query answered NOT_SUPPORTED
  gpu.ecc_uncorrected_volatile.reset();
  for (double t : {100.0, 101.0, 102.0}) {
    auto update = engine.evaluate(sample_at(t, {gpu}));
    for (AlertKind kind :
         {AlertKind::ecc_errors, AlertKind::retired_pages, AlertKind::remapped_rows, AlertKind::xid_error})
      EXPECT_TRUE(of_kind(update.active, kind).empty()) << to_string(kind);
  }
}

}  // namespace
}  // namespace gpusage::monitor
