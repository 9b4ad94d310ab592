#include "run/fit_batch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/i18n.hpp"
#include "core/common/json.hpp"
#include "core/common/units.hpp"
#include "report/table.hpp"

namespace gpusage::run {

std::optional<int> BatchSearch::next() const {
  if (done_ || next_ < 1 || next_ > max_) return std::nullopt;
  return next_;
}

void BatchSearch::record(int batch, bool ran) {
  if (ran) {
    ran_ = std::max(ran_, batch);
  } else {
    failed_ = failed_ ? std::min(*failed_, batch) : batch;
  }
  if (!failed_) {
    next_ = batch >= max_ ? max_ + 1 : std::min(max_, batch * 2);  // still growing
    done_ = batch >= max_;
    return;
  }
  if (*failed_ - ran_ <= 1) {
    done_ = true;
    return;
  }
  next_ = ran_ + (*failed_ - ran_) / 2;  // bisect; from a failed start with nothing run, halves downward
}

std::vector<std::string> with_batch(const std::vector<std::string>& command, int batch) {
  std::vector<std::string> out;
  for (std::string a : command) {
    for (std::size_t at = a.find("{batch}"); at != std::string::npos; at = a.find("{batch}", at))
      a.replace(at, 7, std::to_string(batch));
    out.push_back(std::move(a));
  }
  return out;
}

const char* to_string(TryResult r) {
  switch (r) {
    case TryResult::ran: return "ran";
    case TryResult::out_of_memory: return "out of memory";
    case TryResult::failed: return "failed";
  }
  return "failed";
}

TryResult classify(const RunSummary& s) {
  for (const auto& f : s.findings)
    if (f.id == "log-cuda-oom" || f.id == "log-oom-fragmentation" || f.id == "log-tf-oom" || f.id == "log-jax-oom")
      return TryResult::out_of_memory;
  if (s.stopped_by == "steps" || (s.exit_code == 0 && !s.stopped_by)) return TryResult::ran;
  return TryResult::failed;
}

std::string accumulation_plan(int largest, int target) {
  const int steps = (target + largest - 1) / largest;
  // The smallest micro-batch with that many steps that still reaches the target; exact when it divides it.
  const int micro = (target + steps - 1) / steps;
  return i18n::trn("batch {} x {} accumulation step = {} per GPU (target {}{})",
                   "batch {} x {} accumulation steps = {} per GPU (target {}{})", static_cast<unsigned long>(steps),
                   micro, steps, micro * steps, target,
                   micro * steps == target ? "" : i18n::tr(", the nearest reachable above it"));
}

nlohmann::json to_json(const FitBatchReport& r) {
  nlohmann::json tries = nlohmann::json::array();
  for (const auto& t : r.tries)
    tries.push_back(
        {{"batch", t.batch},
         {"result", to_string(t.result)},
         {"exit_code", t.exit_code},
         {"memory_peak_bytes", json_util::optional(t.memory_peak_bytes)},
         {"throughput_per_s", t.throughput ? nlohmann::json(t.throughput->median_per_s) : nlohmann::json(nullptr)},
         {"throughput_unit", t.throughput ? nlohmann::json(t.throughput->label_unit()) : nlohmann::json(nullptr)},
         {"wall_s", t.wall_s},
         {"log_dir", t.log_dir}});
  return {
      {"largest_batch", r.largest > 0 ? nlohmann::json(r.largest) : nlohmann::json(nullptr)},
      {"predicted_largest_batch", json_util::optional(r.predicted)},
      {"tries", tries},
      {"accumulation", r.target_batch && r.largest > 0 ? nlohmann::json(accumulation_plan(r.largest, *r.target_batch))
                                                       : nlohmann::json(nullptr)},
      {"stopped", r.stopped.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopped)}};
}

// A try's result in the reader's language (to_string is the JSON value).
static std::string result_label(TryResult result) {
  switch (result) {
    case TryResult::ran: return i18n::tr("ran");
    case TryResult::out_of_memory: return i18n::tr("out of memory");
    case TryResult::failed: break;
  }
  return i18n::tr("failed");
}

std::string render_text(const FitBatchReport& r) {
  report::Table t;
  using i18n::tr;
  t.columns = {{tr("try"), ""},         {tr("batch"), ""},      {tr("result"), "", report::Align::left},
               {tr("peak memory"), ""}, {tr("throughput"), ""}, {tr("time"), ""}};
  for (std::size_t i = 0; i < r.tries.size(); ++i) {
    const Try& x = r.tries[i];
    t.add_row(
        {std::to_string(i + 1), std::to_string(x.batch), result_label(x.result),
         x.memory_peak_bytes ? units::format_bytes(*x.memory_peak_bytes) : tr("n/a"),
         x.throughput ? fmt::format("{:.3g} {}", x.throughput->median_per_s, x.throughput->label_unit()) : tr("n/a"),
         report::format_duration(x.wall_s)});
  }
  std::string out = report::render_text(t);
  if (r.largest > 0)
    out += i18n::trf("Largest batch that ran: {} ({} tries){}\n", r.largest, r.tries.size(),
                     r.predicted ? i18n::trf("; plan predicted {}", *r.predicted) : "");
  else
    out += tr("No batch ran.\n");
  if (!r.stopped.empty()) out += i18n::trf("Search stopped early: {}\n", r.stopped);
  if (r.target_batch && r.largest > 0)
    out +=
        i18n::trf("To keep a global batch of {}: {}\n", *r.target_batch, accumulation_plan(r.largest, *r.target_batch));
  return out;
}

}  // namespace gpusage::run
