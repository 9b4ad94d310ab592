#include "run/time_shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/common/i18n.hpp"
#include "core/common/stats.hpp"
#include "run/summary.hpp"

namespace gpusage::run {

namespace {

// The run's GPUs' mean utilization in one sample, as a fraction.
std::optional<double> busy_fraction(const RecordedSample& r) {
  double sum = 0;
  int count = 0;
  for (const auto& gpu : r.sample.gpus)
    if (gpu.utilization_gpu_percent) {
      sum += *gpu.utilization_gpu_percent;
      ++count;
    }
  if (count == 0) return std::nullopt;
  return std::clamp(sum / count / 100, 0.0, 1.0);
}

// Length of the overlap of [a0, a1] and [b0, b1].
double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

std::optional<TimeShares> estimate_time_shares(double start_unix_s, double end_unix_s,
                                               const std::vector<RecordedSample>& samples,
                                               const std::vector<TimedThroughput>& readings) {
  if (readings.size() < 2 || end_unix_s <= start_unix_s) return std::nullopt;
  std::vector<double> times;
  for (const auto& r : readings) times.push_back(std::clamp(r.unix_time_s, start_unix_s, end_unix_s));
  std::sort(times.begin(), times.end());
  std::vector<double> gaps;
  for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
  const double pause_after = kPauseFactor * stats::median(gaps);
  // The spans in which steps flowed: between consecutive lines, unless the gap is a pause.
  std::vector<std::pair<double, double>> flowing;
  TimeShares s;
  s.wall_s = end_unix_s - start_unix_s;
  s.startup_s = times.front() - start_unix_s;
  s.pauses_s = end_unix_s - times.back();
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (gaps[i - 1] > pause_after && pause_after > 0)
      s.pauses_s += gaps[i - 1];
    else
      flowing.emplace_back(times[i - 1], times[i]);
  }
  // Each sample stands for the period up to the next one (the last for one median sample period).
  std::vector<double> periods;
  for (std::size_t i = 1; i < samples.size(); ++i)
    periods.push_back(samples[i].sample.unix_time_s - samples[i - 1].sample.unix_time_s);
  const double last_period = periods.empty() ? 0 : stats::median(periods);
  double flowing_s = 0, measured_s = 0, idle_s = 0;
  for (const auto& [a, b] : flowing) flowing_s += b - a;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto busy = busy_fraction(samples[i]);
    if (!busy) continue;
    const double t0 = samples[i].sample.unix_time_s;
    const double t1 = i + 1 < samples.size() ? samples[i + 1].sample.unix_time_s : t0 + last_period;
    for (const auto& [a, b] : flowing) {
      const double o = overlap(t0, t1, a, b);
      measured_s += o;
      idle_s += o * (1 - *busy);
    }
  }
  if (measured_s <= 0) return std::nullopt;
  // The sampled part of the flowing time stands for all of it.
  s.input_wait_s = flowing_s * idle_s / measured_s;
  s.training_s = flowing_s - s.input_wait_s;
  return s;
}

nlohmann::json to_json(const TimeShares& s) {
  auto share = [&](double v) { return s.wall_s > 0 ? v / s.wall_s : 0.0; };
  return {{"wall_s", s.wall_s},
          {"startup_s", s.startup_s},
          {"eval_checkpoint_s", s.pauses_s},
          {"input_wait_s", s.input_wait_s},
          {"training_s", s.training_s},
          {"startup_fraction", share(s.startup_s)},
          {"eval_checkpoint_fraction", share(s.pauses_s)},
          {"input_wait_fraction", share(s.input_wait_s)},
          {"training_fraction", share(s.training_s)},
          {"method",
           "NVML utilization while throughput lines flow; pauses longer than 3x the median gap between "
           "lines; startup before the first line (docs/MODEL.md)"}};
}

std::string render_time_bar(const TimeShares& s, int width) {
  struct Part {
    const char* name;
    char mark;
    double seconds;
    const char* fix;
  };
  // The names and fixes are marked for translation (i18n::N_) and translated where they are printed.
  const std::array<Part, 4> parts = {{
      {i18n::N_("startup"), 's', s.startup_s,
       i18n::N_("startup: cache the preprocessed dataset index, keep torch.compile's cache "
                "(TORCHINDUCTOR_CACHE_DIR), load weights from local disk")},
      {i18n::N_("input wait"), 'i', s.input_wait_s,
       i18n::N_("input wait: more DataLoader workers (num_workers), pin_memory=True, prefetch_factor, "
                "persistent_workers=True, or a faster loader (DALI, decoded-data caches)")},
      {i18n::N_("eval/checkpoint"), 'e', s.pauses_s,
       i18n::N_("eval/checkpoint: evaluate less often or on a subset, save checkpoints asynchronously "
                "(torch.distributed.checkpoint.async_save)")},
      {i18n::N_("training"), '#', s.training_s, ""},
  }};
  std::string bar, legend;
  int used = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double share = s.wall_s > 0 ? parts[i].seconds / s.wall_s : 0;
    int cells = i + 1 == parts.size() ? width - used : static_cast<int>(std::lround(share * width));
    cells = std::clamp(cells, 0, width - used);
    bar += std::string(static_cast<std::size_t>(cells), parts[i].mark);
    used += cells;
    legend += fmt::format("{}{} {:.0f}%", i ? i18n::tr(", ") : "", i18n::tr(parts[i].name), share * 100);
  }
  std::string out = i18n::trf("gpusage: time [{}] {} (s i e #)\n", bar, legend);
  // The largest avoidable share (training is the work itself).
  const auto worst = std::max_element(parts.begin(), parts.end() - 1,
                                      [](const Part& a, const Part& b) { return a.seconds < b.seconds; });
  if (s.wall_s > 0 && worst->seconds / s.wall_s >= 0.1)
    out += i18n::trf("gpusage:   fix for {}\n", i18n::tr(worst->fix));
  return out;
}

}  // namespace gpusage::run
