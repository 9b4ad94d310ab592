#include "core/setup/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/setup/assumptions.hpp"

namespace gpusage::setup {

estimate::Sweep run_plan(const TrainingSetup& options, const estimate::SweepRequest& request,
                         const catalog::Catalog& catalog) {
  estimate::SweepRequest per_card = request;
  per_card.precision_per_card = options.precision == "auto";
  workload::Workload w = options.build_workload();
  const estimate::Calibration calibration = options.calibration();
  const estimate::TrainingConfig base = options.training_config(w);
  std::optional<workload::Workload> timed = options.build_timed_workload(w);
  const std::vector<std::string> workload_notes = w.notes;
  estimate::Sweep sweep = estimate::run_sweep(std::move(w), base, calibration, per_card, catalog, std::move(timed));
  sweep.notes.insert(sweep.notes.begin(), workload_notes.begin(), workload_notes.end());
  sweep.assumptions = assumptions(options, sweep);
  return sweep;
}

namespace {

// "8xh100" -> (8, "h100"); an entry without a count keeps `default_count`. Counts as --gpus takes them.
std::pair<int, std::string> gpu_count_and_name(const std::string& entry, int default_count) {
  std::size_t digits = 0;
  while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits]))) ++digits;
  if (digits == 0 || digits > 4 || digits + 1 >= entry.size() || (entry[digits] != 'x' && entry[digits] != '*')) {
    return {default_count, entry};
  }
  const int count = std::stoi(entry.substr(0, digits));
  if (count < 1 || count > 1024) {
    throw InputError(i18n::trf("--gpu '{}': {} GPUs is outside 1 to 1024 (as --gpus)", entry, count));
  }
  return {count, entry.substr(digits + 1)};
}

}  // namespace

estimate::Sweep run_plan(const TrainingSetup& options, const std::string& gpu_list, estimate::SweepRequest request,
                         const catalog::Catalog& catalog) {
  std::vector<std::pair<int, std::vector<std::string>>> groups;  // GPU count -> names, in first-seen order
  for (const std::string& raw : text::split(gpu_list, ',')) {
    const std::string entry = text::trim(raw);
    if (entry.empty()) continue;
    // A pair, not a structured binding: clang 14 (the fuzz build) cannot capture a binding in the lambda.
    const std::pair<int, std::string> count_and_name = gpu_count_and_name(entry, options.gpus);
    const int count = count_and_name.first;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == count; });
    if (it == groups.end()) it = groups.insert(groups.end(), {count, {}});
    it->second.push_back(count_and_name.second);
  }
  if (groups.size() <= 1) {
    TrainingSetup counted = options;
    if (!groups.empty()) counted.gpus = groups.front().first;
    request.gpus =
        catalog.select(options.gpu_spec(groups.empty() ? gpu_list : text::join(groups.front().second, ","), catalog));
    return run_plan(counted, request, catalog);
  }
  std::optional<estimate::Sweep> merged;
  for (const auto& [count, names] : groups) {
    TrainingSetup counted = options;
    counted.gpus = count;
    request.gpus = catalog.select(options.gpu_spec(text::join(names, ","), catalog));
    estimate::Sweep sweep = run_plan(counted, request, catalog);
    if (!merged) {
      merged = std::move(sweep);
      continue;
    }
    // The predictions point into their sweep's GPU records, which move with their unique_ptrs.
    for (auto& p : sweep.predictions) merged->predictions.push_back(std::move(p));
    for (auto& gpu : sweep.gpus) merged->gpus.push_back(std::move(gpu));
    for (auto& note : sweep.notes) {
      if (std::find(merged->notes.begin(), merged->notes.end(), note) == merged->notes.end()) {
        merged->notes.push_back(std::move(note));
      }
    }
  }
  merged->assumptions = assumptions(options, *merged);  // once over every card, not once per GPU count
  return std::move(*merged);
}

}  // namespace gpusage::setup
