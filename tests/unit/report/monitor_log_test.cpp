// Reading monitor logs back: the CSV and JSON Lines that gpusage monitor's own writers produce.
#include "report/monitor_log.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "monitor/alerts.hpp"
#include "monitor/views.hpp"

namespace gpusage::report {
namespace {

using ::testing::HasSubstr;

device::Sample sample_at(double time_s, unsigned temperature_c) {
  device::Sample sample;
  sample.unix_time_s = time_s;
  sample.gpu_available = true;
  sample.host.cpu_percent = 12.5;
  for (unsigned index : {0u, 1u}) {
    device::GpuSample gpu;
    gpu.index = index;
    gpu.name = index == 0 ? "NVIDIA H100 80GB HBM3" : "NVIDIA GeForce RTX 4090, \"OC\"";  // quoting in CSV
    gpu.uuid = "GPU-" + std::to_string(index);
    gpu.utilization_gpu_percent = 50u + index;
    gpu.memory_used_bytes = 1ull << 34;
    gpu.memory_total_bytes = 1ull << 36;
    gpu.temperature_c = temperature_c;
    gpu.power_w = 301.5;
    gpu.throttle_mask = 0x40;
    gpu.processes.push_back({7, "python3", 1ull << 33, 99.0});
    sample.gpus.push_back(gpu);
  }
  return sample;
}

TEST(MonitorLog, ReadsTheCsvTheMonitorWrites) {
  const std::string csv = monitor::csv_header() + monitor::csv_rows(sample_at(100.25, 80)) +
                          monitor::csv_rows(sample_at(101.5, 85));
  const MonitorLog log = parse_monitor_log(csv, "run.csv");
  EXPECT_FALSE(log.json_lines);
  ASSERT_EQ(log.samples.size(), 2u);
  const device::Sample& second = log.samples[1];
  EXPECT_DOUBLE_EQ(second.unix_time_s, 101.5);
  ASSERT_EQ(second.gpus.size(), 2u);
  EXPECT_EQ(second.gpus[1].name, "NVIDIA GeForce RTX 4090, \"OC\"");
  EXPECT_EQ(second.gpus[1].utilization_gpu_percent, 51u);
  EXPECT_EQ(second.gpus[0].temperature_c, 85u);
  EXPECT_EQ(second.gpus[0].power_w, 301.5);
  EXPECT_EQ(second.gpus[0].memory_used_bytes, 1ull << 34);
  EXPECT_EQ(second.gpus[0].throttle_mask, 0x40u);
  EXPECT_FALSE(second.gpus[0].fan_percent.has_value());  // empty in the CSV: not supported
  EXPECT_EQ(second.host.cpu_percent, 12.5);
  // The processes' total stands for them, so the monitor's rules can run again.
  ASSERT_EQ(second.gpus[0].processes.size(), 1u);
  EXPECT_EQ(second.gpus[0].processes[0].used_memory_bytes, 1ull << 33);
  EXPECT_TRUE(log.alerts.empty());
}

TEST(MonitorLog, ReadsJsonLinesWithEachAlertOnceAtItsRaisingTime) {
  monitor::Alert alert{monitor::AlertKind::thermal_throttle, 0, "GPU-0", "warning", "too hot", 100.25};
  const std::string jsonl = monitor::sample_json(sample_at(100.25, 80), {alert}).dump() + "\n\n" +
                            monitor::sample_json(sample_at(101.5, 85), {alert}).dump() + "\n";
  const MonitorLog log = parse_monitor_log(jsonl, "run.jsonl");
  EXPECT_TRUE(log.json_lines);
  ASSERT_EQ(log.samples.size(), 2u);
  EXPECT_EQ(log.samples[1].gpus[0].temperature_c, 85u);
  ASSERT_EQ(log.alerts.size(), 1u);
  EXPECT_EQ(log.alerts[0].kind, "thermal_throttle");
  EXPECT_DOUBLE_EQ(log.alerts[0].unix_time_s, 100.25);
  EXPECT_EQ(log.alerts[0].message, "too hot");
}

std::string monitor_log_error(const std::string& text) {
  try {
    parse_monitor_log(text, "x.log");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MonitorLog, RejectsWhatIsNotAMonitorLog) {
  EXPECT_THAT(monitor_log_error("hello\n"), HasSubstr("'x.log' is not a gpusage monitor log"));
  EXPECT_THAT(monitor_log_error("{\"unix_time_s\": 1}\n{oops\n"), HasSubstr("'x.log' line 2 is not a gpusage monitor sample"));
  EXPECT_THAT(monitor_log_error(monitor::csv_header()), HasSubstr("'x.log' holds no samples"));
  device::Sample no_gpu;
  no_gpu.unix_time_s = 5;
  EXPECT_THAT(monitor_log_error(monitor::csv_header() + monitor::csv_rows(no_gpu)),
              HasSubstr("'x.log' has no GPU readings (it was recorded while no GPU was available)"));
  EXPECT_THAT(monitor_log_error(monitor::csv_header() + "a,b\n"), HasSubstr("line 2: 2 fields where the header has"));
  EXPECT_THROW(
      {
        try {
          read_monitor_log("/nonexistent/run.csv");
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("cannot read --monitor-log file '/nonexistent/run.csv'"));
          throw;
        }
      },
      InputError);
}

}  // namespace
}  // namespace gpusage::report
