// The log rules: a LogScan in, findings out. For a CUDA out-of-memory error the fix comes from `plan`'s
// memory model (estimate::max_batch, plan_target_batch) when the model is known.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/rules.hpp"
#include "core/estimate/plan.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::diagnose {

// What the user said about the run (doctor --model --batch --precision --gpu); all optional.
struct RunContext {
  const workload::Workload* workload = nullptr;
  std::optional<int> batch;                       // else the log's batch_size, when it prints one
  std::optional<catalog::Precision> precision;    // else fp32 (PyTorch's default without autocast)
  std::optional<estimate::Optimizer> optimizer;   // else momentum (vision) / adamw (language), as plan does
  const catalog::Gpu* gpu = nullptr;              // else guessed from the OOM's total capacity
  const catalog::Catalog* catalog = nullptr;      // for the guess; null: Catalog::active()
};

struct GpuGuess {
  const catalog::Gpu* gpu = nullptr;
  std::vector<const catalog::Gpu*> same_memory;  // other cards with the same memory size
};

// The catalog card whose memory is closest to `capacity_bytes` (the OOM's "total capacity", a little
// below the marketed size); ties go to the first in catalog order.
GpuGuess guess_gpu(double capacity_bytes, const catalog::Catalog& catalog);

std::vector<Finding> check_log(const LogScan& scan, const RunContext& context,
                               const RuleTable& rules = RuleTable::builtin());

// "2.00 GiB", "512.00 MiB": the units PyTorch prints.
std::string format_size(double bytes);

}  // namespace gpusage::diagnose
