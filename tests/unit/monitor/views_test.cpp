#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/text.hpp"
#include "monitor/views.hpp"
#include "unit/monitor/sample_fixture.hpp"

namespace gpusage::monitor {
namespace {

using testing::sample_at;
using testing::training_gpu;

std::vector<std::string> lines_of(const std::string& text) {
  auto lines = text::split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Summary, ShowsThrottleReasonsInWordsAndUnsupportedAsNa) {
  auto gpu = training_gpu();
  gpu.throttle_mask = device::throttle::sw_power_cap | device::throttle::sw_thermal;
  gpu.fan_percent.reset();
  std::string text = render_summary(sample_at(1764680000, {gpu}), {}, 120);
  EXPECT_TRUE(contains(text, "driver 550.54.15  CUDA 12.4")) << text;
  EXPECT_TRUE(contains(text, "GPU 0: power cap, thermal (software)")) << text;
  EXPECT_TRUE(contains(text, "40.0 GiB / 80.0 GiB (50%)")) << text;
  EXPECT_TRUE(contains(text, "n/a")) << text;  // the fan
  EXPECT_TRUE(contains(text, "python3")) << text;
  EXPECT_TRUE(contains(text, "Host: CPU 25% of 8 cores")) << text;
  for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), 120u) << line;
}

TEST(Summary, NoDriverSaysSoInOneLineAndStillShowsTheHost) {
  device::Sample s = sample_at(1764680000, {});
  s.gpu_available = false;
  s.gpu_message = "no NVIDIA driver found (libnvidia-ml.so.1: cannot open shared object file)";
  std::string text = render_summary(s, {}, 120);
  EXPECT_TRUE(contains(text, "Host: CPU 25% of 8 cores, memory 8.0 GiB of 64.0 GiB")) << text;
  EXPECT_TRUE(contains(text, "GPU: no NVIDIA driver found")) << text;
}

TEST(Csv, EveryRowHasTheHeadersColumnsAndEmptyCellsForUnsupported) {
  auto gpu = training_gpu();
  gpu.fan_percent.reset();
  gpu.name = "Name, with comma";
  std::string header = csv_header();
  std::string rows = csv_rows(sample_at(1764680000.5, {gpu, training_gpu(1)}));
  auto columns = text::split(lines_of(header).at(0), ',');
  auto row_lines = lines_of(rows);
  ASSERT_EQ(row_lines.size(), 2u);
  // The quoted name holds one comma: one more split piece than columns.
  EXPECT_EQ(text::split(row_lines[0], ',').size(), columns.size() + 1);
  EXPECT_EQ(text::split(row_lines[1], ',').size(), columns.size());
  EXPECT_TRUE(contains(row_lines[0], "\"Name, with comma\"")) << row_lines[0];
  auto fields = text::split(row_lines[1], ',');
  auto at = [&](const std::string& name) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return fields[i];
    return std::string("<no column>");
  };
  EXPECT_EQ(at("utilization_gpu_percent"), "95");
  EXPECT_EQ(at("power_w"), "300.25");
  EXPECT_EQ(at("fan_percent"), "");
  EXPECT_EQ(at("throttle_reasons"), "");
  EXPECT_EQ(at("process_count"), "1");
  EXPECT_EQ(at("host_cpu_percent"), "25");
  EXPECT_EQ(at("time_utc"), "2025-12-02T12:53:20.500Z");
}

TEST(Csv, XidEventsOfASampleAreOneCellJoinedByBars) {
  auto gpu = training_gpu();
  gpu.xid_events = {79, 48};
  auto columns = text::split(lines_of(csv_header()).at(0), ',');
  auto fields = text::split(lines_of(csv_rows(sample_at(1764680000, {gpu}))).at(0), ',');
  ASSERT_EQ(fields.size(), columns.size());
  const auto column = std::find(columns.begin(), columns.end(), "xid_events");
  ASSERT_NE(column, columns.end());
  EXPECT_EQ(fields[static_cast<std::size_t>(column - columns.begin())], "79|48");
}

TEST(Csv, NoGpuStillWritesAFullWidthRow) {
  auto columns = text::split(lines_of(csv_header()).at(0), ',').size();
  auto row = lines_of(csv_rows(sample_at(1764680000, {}))).at(0);
  EXPECT_EQ(text::split(row, ',').size(), columns);
}

TEST(Json, CarriesAlertsAsEvents) {
  Alert a{AlertKind::thermal_throttle, 0, "GPU-0", "warning", "GPU 0: hot", 5};
  nlohmann::json j = sample_json(sample_at(1764680000, {training_gpu()}), {a});
  ASSERT_EQ(j.at("alerts").size(), 1u);
  EXPECT_EQ(j.at("alerts")[0].at("kind"), "thermal_throttle");
  EXPECT_EQ(j.at("gpus")[0].at("fan_percent"), nullptr);
  EXPECT_EQ(j.at("time_utc"), "2025-12-02T12:53:20.000Z");
}

TEST(Prometheus, UsesDcgmNamesAndGpuUuidNameLabels) {
  auto gpu = training_gpu();
  gpu.fan_percent.reset();
  std::string text = prometheus_text(sample_at(1764680000, {gpu}), {});
  const std::string labels = "{gpu=\"0\",uuid=\"GPU-0\",name=\"NVIDIA A100-SXM4-80GB\"}";
  EXPECT_TRUE(contains(text, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")) << text;
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_GPU_UTIL" + labels + " 95\n")) << text;
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_FB_USED" + labels + " 40960\n")) << text;  // MiB, like dcgm-exporter
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_FB_FREE" + labels + " 40960\n")) << text;
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_POWER_USAGE" + labels + " 300.25\n")) << text;
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_GPU_TEMP" + labels + " 60\n")) << text;
  EXPECT_FALSE(contains(text, "DCGM_FI_DEV_FAN_SPEED")) << text;  // unsupported: left out, not 0
  EXPECT_TRUE(contains(text, "gpusage_host_cpu_utilization_percent 25\n")) << text;
  EXPECT_TRUE(contains(text, "gpusage_process_gpu_memory_bytes{gpu=\"0\",uuid=\"GPU-0\",name=\"NVIDIA A100-SXM4-80GB\","
                             "pid=\"4242\",process=\"python3\"} 32212254720\n"))
      << text;
}

TEST(Prometheus, EscapesLabelValues) {
  auto gpu = training_gpu();
  gpu.name = "odd \"name\"\\";
  std::string text = prometheus_text(sample_at(1, {gpu}), {});
  EXPECT_TRUE(contains(text, "name=\"odd \\\"name\\\"\\\\\"")) << text;
}

TEST(Prometheus, ActiveAlertsAreGauges) {
  Alert a{AlertKind::memory_nearly_full, 0, "GPU-0", "critical", "m", 5};
  std::string text = prometheus_text(sample_at(1, {training_gpu()}), {a});
  EXPECT_TRUE(contains(text, "gpusage_alert_active{gpu=\"0\",uuid=\"GPU-0\",kind=\"memory_nearly_full\",severity=\"critical\"} 1\n"))
      << text;
}

}  // namespace
}  // namespace gpusage::monitor
