#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.hpp"
#include "core/device/backend.hpp"
#include "core/device/sample_json.hpp"

namespace gpusage::device {
namespace {

Sample example() {
  Sample s;
  s.unix_time_s = 1764680000.25;
  s.backend = "nvml";
  s.gpu_available = true;
  s.driver_version = "550.54.15";
  s.cuda_driver_version = CudaVersion{12, 4};
  s.host.cpu_percent = 12.5;
  s.host.memory_total_bytes = 1ULL << 34;
  GpuSample g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-1";
  g.utilization_gpu_percent = 87;
  g.power_w = 512.345;
  g.throttle_mask = throttle::sw_power_cap | throttle::hw_thermal;
  g.processes.push_back({1234, "python3", 1ULL << 30, 99.5});
  s.gpus.push_back(g);
  return s;
}

TEST(SampleJson, UnsupportedMetricsAreNull) {
  nlohmann::json j = to_json(example());
  const auto& gpu = j.at("gpus").at(0);
  EXPECT_EQ(gpu.at("utilization_gpu_percent"), 87);
  EXPECT_TRUE(gpu.at("fan_percent").is_null());
  EXPECT_TRUE(gpu.at("temperature_c").is_null());
  EXPECT_EQ(gpu.at("throttle_reasons"), nlohmann::json({"sw_power_cap", "hw_thermal"}));
  EXPECT_EQ(j.at("cuda_driver_version"), "12.4");
  EXPECT_TRUE(j.at("host").at("memory_used_bytes").is_null());
}

TEST(SampleJson, RoundTripsThroughTheReplayParser) {
  nlohmann::json j = to_json(example());
  EXPECT_EQ(to_json(sample_from_json(j)), j);
}

// Found by fuzz/monitor_log: a float beyond a field's integer type was cast unchecked (undefined behaviour).
TEST(SampleJson, XidEventsAndMemoryHealthCountersRoundTrip) {
  Sample s = example();
  s.gpus[0].xid_events = {79, 48};
  s.gpus[0].remapped_rows_uncorrected = 2;
  s.gpus[0].remapped_rows_failure = 1;
  s.gpus[0].ecc_uncorrected_aggregate = 7;
  const nlohmann::json j = to_json(s);
  const auto& gpu = j.at("gpus").at(0);
  EXPECT_EQ(gpu.at("xid_events"), nlohmann::json::array({79, 48}));
  EXPECT_EQ(gpu.at("remapped_rows_uncorrected"), 2);
  EXPECT_TRUE(gpu.at("retired_pages_pending").is_null());  // not reported: null, not 0
  const Sample back = sample_from_json(j);
  EXPECT_EQ(back.gpus[0].xid_events, (std::vector<std::uint64_t>{79, 48}));
  EXPECT_EQ(back.gpus[0].remapped_rows_failure, 1u);
  EXPECT_EQ(back.gpus[0].ecc_uncorrected_aggregate, 7u);
  EXPECT_FALSE(back.gpus[0].retired_pages_single_bit);
}

TEST(SampleJson, ANumberBeyondItsFieldIsAJsonErrorNotUndefinedBehaviour) {
  nlohmann::json j = to_json(example());
  j["host"]["memory_total_bytes"] = 2.056e20;
  EXPECT_THROW(sample_from_json(j), nlohmann::json::out_of_range);
  j = to_json(example());
  j["gpus"][0]["index"] = -1;
  EXPECT_THROW(sample_from_json(j), nlohmann::json::out_of_range);
  j = to_json(example());
  j["gpus"][0]["processes"][0]["pid"] = 1e10;
  EXPECT_THROW(sample_from_json(j), nlohmann::json::out_of_range);
  j = to_json(example());
  j["host"]["memory_total_bytes"] = 17179869184.0;  // a whole float in range is read
  EXPECT_EQ(sample_from_json(j).host.memory_total_bytes, 1ULL << 34);
  j["cuda_driver_version"] = "12.x";  // not a version: left out, not std::stoi's invalid_argument
  EXPECT_FALSE(sample_from_json(j).cuda_driver_version.has_value());
}

TEST(ReplayBackend, ReplaysARecordedTraceInOrderAndThenHolds) {
  std::string path = std::filesystem::temp_directory_path() / ("gpusage-trace-" + std::to_string(::getpid()) + ".jsonl");
  Sample a = example(), b = example();
  b.gpus[0].utilization_gpu_percent = 5;
  b.host.cpu_percent = 80.0;
  std::ofstream(path) << to_json(a).dump() << "\n\n" << to_json(b).dump() << "\n";
  auto replay = open_replay_backend(path);
  EXPECT_EQ(replay->system().backend, "replay");
  EXPECT_EQ(replay->system().gpus.at(0).name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(replay->sample().at(0).utilization_gpu_percent, 87u);
  EXPECT_FALSE(replay->exhausted());
  EXPECT_EQ(replay->sample().at(0).utilization_gpu_percent, 5u);
  EXPECT_EQ(replay->recorded_host()->cpu_percent, 80.0);
  EXPECT_TRUE(replay->exhausted());
  std::filesystem::remove(path);
}

TEST(ReplayBackend, ABadLineIsAnInputErrorNamingFileAndLine) {
  std::string path = std::filesystem::temp_directory_path() / ("gpusage-bad-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << to_json(example()).dump() << "\n{not json\n";
  try {
    open_replay_backend(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + "' line 2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpusage::device
