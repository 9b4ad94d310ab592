#include "run/summary.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

device::GpuSample gpu(unsigned index, unsigned util, std::uint64_t used, double power_w,
                      std::vector<unsigned> pids = {}) {
  device::GpuSample g;
  g.index = index;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.utilization_gpu_percent = util;
  g.memory_used_bytes = used;
  g.memory_total_bytes = 80'000'000'000ULL;
  g.power_w = power_w;
  for (unsigned pid : pids) g.processes.push_back({pid, "python3", 1ULL << 31, std::nullopt});
  return g;
}

RecordedSample at(double t, std::vector<device::GpuSample> gpus, std::vector<monitor::Alert> active = {}) {
  RecordedSample r;
  r.sample.unix_time_s = t;
  r.sample.gpus = std::move(gpus);
  r.active = std::move(active);
  return r;
}

monitor::Alert starving(unsigned gpu_index) {
  monitor::Alert a;
  a.kind = monitor::AlertKind::input_bottleneck;
  a.gpu = gpu_index;
  return a;
}

TEST(SelectRunGpus, KeepsTheGpusListingAProcessOfTheTree) {
  device::Sample s;
  s.gpus = {gpu(0, 90, 1, 100, {500}), gpu(1, 5, 1, 50, {900})};
  const auto chosen = select_run_gpus(s, {400, 500});
  EXPECT_TRUE(chosen.matched);
  ASSERT_EQ(chosen.sample.gpus.size(), 1u);
  EXPECT_EQ(chosen.sample.gpus[0].index, 0u);
}

TEST(SelectRunGpus, KeepsAGpuReportingAnXidEvenWhenItNoLongerListsTheRun) {
  device::Sample s;
  s.gpus = {gpu(0, 90, 1, 100, {500}), gpu(1, 0, 1, 0), gpu(2, 0, 1, 0)};
  s.gpus[1].xid_events = {79};  // fallen off the bus: its process list is gone
  const auto chosen = select_run_gpus(s, {500});
  EXPECT_TRUE(chosen.matched);
  ASSERT_EQ(chosen.sample.gpus.size(), 2u);
  EXPECT_EQ(chosen.sample.gpus[0].index, 0u);
  EXPECT_EQ(chosen.sample.gpus[1].index, 1u);
  EXPECT_EQ(chosen.sample.gpus[1].xid_events, (std::vector<std::uint64_t>{79}));
}

TEST(SelectRunGpus, KeepsEveryGpuWhenNoneListsTheRun) {
  device::Sample s;
  s.gpus = {gpu(0, 90, 1, 100, {1}), gpu(1, 5, 1, 50)};
  const auto chosen = select_run_gpus(s, {400});
  EXPECT_FALSE(chosen.matched);
  EXPECT_EQ(chosen.sample.gpus.size(), 2u);
}

TEST(SummarizeGpus, MedianP10PeakAndMeanPower) {
  std::vector<RecordedSample> samples;
  const unsigned utils[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 100};
  for (int i = 0; i < 11; ++i)
    samples.push_back(at(1000 + i, {gpu(0, utils[i], 1'000'000'000ULL * (i == 5 ? 70 : 10), 200 + 10 * i)}));
  const auto usage = summarize_gpus(samples);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].samples, 11u);
  EXPECT_DOUBLE_EQ(*usage[0].utilization_median_percent, 60);
  EXPECT_DOUBLE_EQ(*usage[0].utilization_p10_percent, 20);  // position 0.1 * 10 = 1
  EXPECT_EQ(*usage[0].memory_peak_bytes, 70'000'000'000ULL);
  EXPECT_EQ(*usage[0].memory_total_bytes, 80'000'000'000ULL);
  EXPECT_DOUBLE_EQ(*usage[0].power_mean_w, 250);
}

TEST(SummarizeGpus, EnergyIsTheTrapezoidalIntegralOfPower) {
  // 100 W for 2 s, then a ramp to 300 W over 1 s: 200 + 200 = 400 J.
  const auto usage =
      summarize_gpus({at(0, {gpu(0, 50, 1, 100)}), at(2, {gpu(0, 50, 1, 100)}), at(3, {gpu(0, 50, 1, 300)})});
  EXPECT_DOUBLE_EQ(*usage[0].energy_j, 400);
  EXPECT_DOUBLE_EQ(usage[0].sampled_span_s, 3);
}

TEST(SummarizeGpus, EnergyComesFromNvmlsCounterWhenEverySampleReadIt) {
  auto with_counter = [](std::uint64_t mj) {
    auto g = gpu(0, 50, 1, 100);
    g.energy_counter_mj = mj;
    return g;
  };
  const auto usage = summarize_gpus(
      {at(0, {with_counter(7'000'000)}), at(2, {with_counter(7'250'000)}), at(3, {with_counter(7'650'000)})});
  EXPECT_DOUBLE_EQ(*usage[0].energy_j, 650);  // (7,650,000 - 7,000,000) mJ, not the 300 J of the integral
  EXPECT_EQ(usage[0].energy_method, "nvml-counter");
  // One sample without the counter: the integral of power instead.
  const auto mixed = summarize_gpus({at(0, {with_counter(7'000'000)}), at(2, {gpu(0, 50, 1, 100)})});
  EXPECT_DOUBLE_EQ(*mixed[0].energy_j, 200);
  EXPECT_EQ(mixed[0].energy_method, "power-integral");
}

TEST(SummarizeGpus, InputBoundTimeCountsIntervalsStartingWithTheAlertActive) {
  const auto usage = summarize_gpus({at(0, {gpu(0, 5, 1, 100), gpu(1, 90, 1, 100)}),
                                     at(1, {gpu(0, 5, 1, 100), gpu(1, 90, 1, 100)}, {starving(0)}),
                                     at(3, {gpu(0, 5, 1, 100), gpu(1, 90, 1, 100)}, {starving(0)}),
                                     at(4, {gpu(0, 5, 1, 100), gpu(1, 90, 1, 100)})});
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_DOUBLE_EQ(usage[0].input_bound_s, 3);  // [1, 3] and [3, 4]
  EXPECT_DOUBLE_EQ(usage[1].input_bound_s, 0);
}

TEST(SummarizeGpus, UnsupportedMetricsStayEmpty) {
  device::GpuSample g;
  g.name = "old card";
  const auto usage = summarize_gpus({at(0, {g}), at(1, {g})});
  EXPECT_FALSE(usage[0].utilization_median_percent);
  EXPECT_FALSE(usage[0].energy_j);
  EXPECT_FALSE(usage[0].memory_peak_bytes);
  RunSummary summary;
  summary.gpus = usage;
  const auto json = to_json(summary);
  EXPECT_TRUE(json["gpus"][0]["energy_j"].is_null());
  EXPECT_TRUE(json["gpus"][0]["energy_method"].is_null());
}

TEST(SummarizeThroughput, GroupsByUnitAndSourceMostReadingsFirst) {
  std::vector<TimedThroughput> r = {{0, {1.0, "steps", "hf-trainer"}},
                                    {1, {8.0, "it", "tqdm"}},
                                    {2, {10.0, "it", "tqdm"}},
                                    {3, {9.0, "it", "tqdm"}}};
  const auto s = summarize_throughput(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].unit, "it");
  EXPECT_EQ(s[0].readings, 3u);
  EXPECT_DOUBLE_EQ(s[0].median_per_s, 9);
  EXPECT_DOUBLE_EQ(s[0].last_per_s, 9);
  EXPECT_EQ(s[1].label_unit(), "steps/s");
}

TEST(RunSummaryText, SaysExitStatusAndSignal) {
  RunSummary s;
  s.wall_s = 2;
  s.exit_code = 137;
  s.signal = 9;
  s.log_dir = "d";
  const std::string text = render_text(s);
  EXPECT_NE(text.find("killed by signal 9 (exit status 137)"), std::string::npos) << text;
  EXPECT_EQ(to_json(s)["exit"]["signal"], 9);
}

}  // namespace
}  // namespace gpusage::run
