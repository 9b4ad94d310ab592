#include "core/estimate/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/estimate/gpu_rates.hpp"

namespace gpusage::estimate {

namespace {

// The per-GPU batch that reaches `target` with the accumulation steps the user fixed.
int held_accumulation_batch(int target, const TrainingConfig& base) {
  const int per_step = base.accumulation_steps * base.world_size();
  if (target % per_step != 0) {
    throw InputError(
        fmt::format("--target-batch {} is not a multiple of --accumulate {} x {} GPU(s) = {}; give a "
                    "multiple, or drop one of the two",
                    target, base.accumulation_steps, base.world_size(), per_step));
  }
  return target / per_step;
}

// The configurations the request asks of one GPU whose largest fitting batch is `largest`.
std::vector<TrainingConfig> requested_configs(const workload::Workload& w, const TrainingConfig& base,
                                              const catalog::Gpu& gpu, const SweepRequest& request,
                                              const std::vector<int>& batches, int largest) {
  std::vector<TrainingConfig> configs;
  if (request.target_batch && !batches.empty()) {
    // A batch the user gave is held: accumulation makes up the rest of the target.
    if (batches.size() > 1) {
      throw InputError("--target-batch takes one --batch to hold (or none: plan picks it), not a list");
    }
    TrainingConfig c = base;
    c.batch_per_gpu = batches.front();
    const int per_step = c.batch_per_gpu * c.world_size();
    if (*request.target_batch % per_step != 0) {
      throw InputError(fmt::format("--target-batch {} is not a multiple of --batch {} x {} GPU(s) = {}",
                                   *request.target_batch, c.batch_per_gpu, c.world_size(), per_step));
    }
    c.accumulation_steps = *request.target_batch / per_step;
    if (base.accumulation_steps > 1 && c.accumulation_steps != base.accumulation_steps) {
      throw InputError(fmt::format("--batch {} x --accumulate {} x {} GPU(s) is {} samples, not --target-batch {}",
                                   c.batch_per_gpu, base.accumulation_steps, c.world_size(),
                                   per_step * base.accumulation_steps, *request.target_batch));
    }
    configs.push_back(c);
  } else if (request.target_batch) {
    TrainingConfig c = base;
    if (largest < 1) {
      c.batch_per_gpu = 1;
    } else if (base.accumulation_steps > 1) {
      c.batch_per_gpu = held_accumulation_batch(*request.target_batch, base);
    } else {
      c = plan_target_batch_within(w, c, gpu, *request.target_batch, largest);
    }
    configs.push_back(c);
  } else if (batches.empty()) {
    TrainingConfig c = base;
    c.batch_per_gpu = std::max(1, largest);
    configs.push_back(c);
  } else {
    for (int batch : batches) {
      TrainingConfig c = base;
      c.batch_per_gpu = batch;
      configs.push_back(c);
    }
  }
  return configs;
}

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// bfloat16 needs compute capability 8.0 (the catalog's support rule): PyTorch's autocast emulates it on older
// cards at a fraction of fp16's speed, which no one plans for, so a card without it is refused, not planned.
void check_precision(const catalog::Gpu& gpu, catalog::Precision precision) {
  if (precision != catalog::Precision::bf16 || !gpu.is_unsupported("bf16_tflops")) return;
  throw InputError(
      fmt::format("--precision bf16: the {} ({}, compute capability {}) has no bfloat16, which needs "
                  "compute capability 8.0 (Ampere) or later; use --precision fp16 (AMP with a loss "
                  "scaler) on it",
                  gpu.name, gpu.id, gpu.compute_capability));
}

}  // namespace

catalog::Precision auto_precision(const catalog::Gpu& gpu) {
  return gpu.is_unsupported("bf16_tflops") ? catalog::Precision::fp16 : catalog::Precision::bf16;
}

std::vector<int> batch_ladder(workload::Domain domain, const std::vector<int>& vision,
                              const std::vector<int>& largest) {
  std::vector<int> ladder = vision;
  if (domain == workload::Domain::language) {
    const int most = largest.empty() ? 0 : *std::max_element(largest.begin(), largest.end());
    const int top = 2 * largest_power_of_two_at_most(std::max(1, std::min(most, 1 << 23)));  // first above `most`
    ladder.clear();
    for (int b = top; b >= 1 && ladder.size() < 8; b /= 2) ladder.insert(ladder.begin(), b);
  }
  for (int fits : largest) {
    const bool covered = std::any_of(ladder.begin(), ladder.end(), [&](int b) { return b <= fits; });
    if (fits >= 1 && !covered) ladder.push_back(largest_power_of_two_at_most(fits));
  }
  std::sort(ladder.begin(), ladder.end());
  ladder.erase(std::unique(ladder.begin(), ladder.end()), ladder.end());
  return ladder;
}

Sweep run_sweep(workload::Workload workload, const TrainingConfig& base, const Calibration& calibration,
                const SweepRequest& request, const catalog::Catalog& catalog,
                std::optional<workload::Workload> timed_workload) {
  Sweep sweep{std::move(workload), std::move(timed_workload), {}, calibration.notes, {}, {}};
  const workload::Workload* timed = sweep.timed_workload ? &*sweep.timed_workload : nullptr;
  const workload::Workload& w = sweep.workload;
  // A card without bf16 is refused when it is the only one asked; among several (--gpu all, a family) it is left
  // out with a note, so that the cards that have it are still compared.
  std::vector<const catalog::Gpu*> listed_gpus;
  std::vector<std::string> without_bf16;
  for (const catalog::Gpu* listed : request.gpus) {
    if (request.precision_per_card) {
      listed_gpus.push_back(listed);
      continue;
    }
    if (request.gpus.size() > 1 && base.precision == catalog::Precision::bf16 &&
        listed->is_unsupported("bf16_tflops")) {
      without_bf16.push_back(listed->id);
      continue;
    }
    check_precision(*listed, base.precision);
    listed_gpus.push_back(listed);
  }
  if (listed_gpus.empty() && !request.gpus.empty()) check_precision(*request.gpus.front(), base.precision);
  if (!without_bf16.empty()) {
    sweep.notes.push_back(
        i18n::trf("Left out for --precision bf16 (no bfloat16 before compute capability 8.0; "
                  "plan them with --precision fp16): {}.",
                  fmt::format("{}", fmt::join(without_bf16, ", "))));
  }
  std::vector<int> largest;  // per GPU
  std::vector<TrainingConfig> card_bases;
  for (const catalog::Gpu* listed : listed_gpus) {
    TrainingConfig& card_base = card_bases.emplace_back(base);
    if (request.precision_per_card) card_base.precision = auto_precision(*listed);
    CompletedGpu completed = complete_tensor_rates(*listed, catalog);
    for (auto& note : completed.notes) sweep.notes.push_back(std::move(note));
    sweep.gpus.push_back(std::make_unique<catalog::Gpu>(std::move(completed.gpu)));
    // Memory does not depend on the batch it is asked at, nor on accumulation: one search per GPU.
    largest.push_back(max_batch(w, card_base, *sweep.gpus.back(), &calibration));
  }
  const std::vector<int> batches = request.ladder ? batch_ladder(w.domain, request.batches, largest) : request.batches;
  for (std::size_t i = 0; i < sweep.gpus.size(); ++i) {
    const catalog::Gpu& gpu = *sweep.gpus[i];
    for (const auto& c : requested_configs(w, card_bases[i], gpu, request, batches, largest[i])) {
      sweep.predictions.push_back(predict(w, c, gpu, &calibration, largest[i], timed));
    }
  }
  return sweep;
}

}  // namespace gpusage::estimate
