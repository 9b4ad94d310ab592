#include <gtest/gtest.h>

#include "monitor/alerts.hpp"
#include "unit/monitor/sample_fixture.hpp"

namespace gpusage::monitor {
namespace {

using testing::sample_at;
using testing::training_gpu;

bool has(const std::vector<Alert>& alerts, AlertKind kind) {
  for (const auto& a : alerts)
    if (a.kind == kind) return true;
  return false;
}

TEST(Alerts, LowUtilisationWithATrainingProcessIsRaisedOnlyOnceSustained) {
  AlertEngine engine(AlertConfig{.low_utilization_percent = 30, .low_utilization_window_s = 10});
  auto idle = training_gpu();
  idle.utilization_gpu_percent = 12;
  EXPECT_FALSE(has(engine.evaluate(sample_at(100, {idle})).active, AlertKind::input_bottleneck));
  EXPECT_FALSE(has(engine.evaluate(sample_at(105, {idle})).active, AlertKind::input_bottleneck));
  auto update = engine.evaluate(sample_at(110, {idle}));
  ASSERT_TRUE(has(update.raised, AlertKind::input_bottleneck));
  const Alert& a = update.raised.front();
  EXPECT_EQ(a.gpu, 0u);
  EXPECT_EQ(a.since_unix_time_s, 110);
  EXPECT_NE(a.message.find("utilization 12%"), std::string::npos) << a.message;
  EXPECT_NE(a.message.find("python3 (pid 4242)"), std::string::npos) << a.message;
  EXPECT_NE(a.message.find("num_workers"), std::string::npos) << a.message;
  EXPECT_NE(a.message.find("100% of a core"), std::string::npos) << a.message;
  // Still holding: active, not raised again.
  update = engine.evaluate(sample_at(111, {idle}));
  EXPECT_TRUE(has(update.active, AlertKind::input_bottleneck));
  EXPECT_FALSE(has(update.raised, AlertKind::input_bottleneck));
  // Busy again: cleared.
  EXPECT_FALSE(has(engine.evaluate(sample_at(112, {training_gpu()})).active, AlertKind::input_bottleneck));
}

TEST(Alerts, ABusySampleRestartsTheLowUtilisationWindow) {
  AlertEngine engine(AlertConfig{.low_utilization_window_s = 10});
  auto idle = training_gpu();
  idle.utilization_gpu_percent = 5;
  engine.evaluate(sample_at(100, {idle}));
  engine.evaluate(sample_at(105, {training_gpu()}));
  engine.evaluate(sample_at(106, {idle}));
  EXPECT_FALSE(has(engine.evaluate(sample_at(112, {idle})).active, AlertKind::input_bottleneck));
  EXPECT_TRUE(has(engine.evaluate(sample_at(116, {idle})).active, AlertKind::input_bottleneck));
}

TEST(Alerts, LowUtilisationWithoutATrainingProcessIsNoBottleneck) {
  AlertEngine engine(AlertConfig{.low_utilization_window_s = 0});
  auto idle = training_gpu();
  idle.utilization_gpu_percent = 0;
  idle.processes.front().used_memory_bytes = 200ULL << 20;  // a notebook kernel, not a training job
  EXPECT_FALSE(has(engine.evaluate(sample_at(100, {idle})).active, AlertKind::input_bottleneck));
  idle.processes.clear();
  EXPECT_FALSE(has(engine.evaluate(sample_at(101, {idle})).active, AlertKind::input_bottleneck));
}

TEST(Alerts, UnknownUtilisationRaisesNothing) {
  AlertEngine engine(AlertConfig{.low_utilization_window_s = 0});
  auto gpu = training_gpu();
  gpu.utilization_gpu_percent.reset();
  gpu.throttle_mask.reset();
  gpu.memory_used_bytes.reset();
  gpu.ecc_uncorrected_volatile.reset();
  EXPECT_TRUE(engine.evaluate(sample_at(100, {gpu})).active.empty());
}

TEST(Alerts, ThermalAndPowerThrottlingAreSeparateAlerts) {
  AlertEngine engine;
  auto hot = training_gpu();
  hot.temperature_c = 88;
  hot.throttle_mask = device::throttle::hw_thermal;
  auto update = engine.evaluate(sample_at(100, {hot}));
  ASSERT_TRUE(has(update.raised, AlertKind::thermal_throttle));
  EXPECT_NE(update.raised.front().message.find("thermal (hardware)) at 88 C"), std::string::npos)
      << update.raised.front().message;
  EXPECT_FALSE(has(update.active, AlertKind::power_throttle));
  auto capped = training_gpu();
  capped.throttle_mask = device::throttle::sw_power_cap;
  update = engine.evaluate(sample_at(101, {capped}));
  EXPECT_TRUE(has(update.raised, AlertKind::power_throttle));
  EXPECT_FALSE(has(update.active, AlertKind::thermal_throttle));
  EXPECT_NE(update.raised.front().message.find("drawing 300 W of a 400 W limit"), std::string::npos);
}

TEST(Alerts, MemoryAbove95PercentWarnsOfOutOfMemory) {
  AlertEngine engine;
  auto full = training_gpu();
  full.memory_used_bytes = 76ULL << 30;  // 95.0 %: not above
  EXPECT_FALSE(has(engine.evaluate(sample_at(100, {full})).active, AlertKind::memory_nearly_full));
  full.memory_used_bytes = 78ULL << 30;  // 97.5 %
  auto update = engine.evaluate(sample_at(101, {full}));
  ASSERT_TRUE(has(update.raised, AlertKind::memory_nearly_full));
  EXPECT_EQ(update.raised.front().severity, "critical");
  EXPECT_NE(update.raised.front().message.find("memory 98% full"), std::string::npos) << update.raised.front().message;
}

TEST(Alerts, EccErrorsUncorrectedAreCriticalCorrectedOnlyWhenRising) {
  AlertEngine engine;
  auto gpu = training_gpu();
  gpu.ecc_corrected_volatile = 7;  // present before we started watching
  EXPECT_FALSE(has(engine.evaluate(sample_at(100, {gpu})).active, AlertKind::ecc_errors));
  gpu.ecc_corrected_volatile = 9;
  auto update = engine.evaluate(sample_at(101, {gpu}));
  ASSERT_TRUE(has(update.raised, AlertKind::ecc_errors));
  EXPECT_EQ(update.raised.front().severity, "warning");
  EXPECT_NE(update.raised.front().message.find("2 new corrected"), std::string::npos);
  gpu.ecc_uncorrected_volatile = 1;
  update = engine.evaluate(sample_at(102, {gpu}));
  ASSERT_TRUE(has(update.active, AlertKind::ecc_errors));
  EXPECT_EQ(update.active.front().severity, "critical");
}

TEST(Alerts, JsonEventCarriesKindGpuAndMessage) {
  Alert a{AlertKind::memory_nearly_full, 3, "GPU-3", "critical", "GPU 3: memory 97% full", 12.5};
  nlohmann::json j = to_json(a);
  EXPECT_EQ(j.at("kind"), "memory_nearly_full");
  EXPECT_EQ(j.at("gpu"), 3);
  EXPECT_EQ(j.at("uuid"), "GPU-3");
  EXPECT_EQ(j.at("message"), "GPU 3: memory 97% full");
  EXPECT_EQ(j.at("since_unix_time_s"), 12.5);
}

}  // namespace
}  // namespace gpusage::monitor
