// The log rules: a LogScan in, findings out, in the order the problems happened. A cascade is one finding:
// an OOM followed by cuBLAS/cuDNN handles that could not be created, or NCCL errors on the ranks that lived
// after one rank died, is reported as the first cause with the rest as evidence.
//
// For an out-of-memory error the fix is computed from the log's own figures (capacity, in use, free, the
// request: measurements) and `plan`'s memory model (estimate::estimate_memory), scaled so the failing batch
// needs what the log says it needed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/finding.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/rules.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::diagnose {

// What the user said about the run (doctor --model --batch --precision --gpu); all optional.
struct RunContext {
  const workload::Workload* workload = nullptr;
  std::optional<int> batch;                      // else the log's batch_size, when it prints one
  std::optional<catalog::Precision> precision;   // else fp32 (PyTorch's default without autocast)
  std::optional<estimate::Optimizer> optimizer;  // else momentum (vision) / adamw (language), as plan does
  const catalog::Gpu* gpu = nullptr;             // else the capacity the log reports (no card is guessed)
  std::optional<std::string> framework_cuda;     // the installed framework's CUDA (torch.version.cuda)
};

// The OOM fix's numbers, for tests and reporters. Bytes.
struct OomPlan {
  double capacity_bytes = 0;              // the log's capacity, else --gpu's memory
  std::string capacity_from;              // "the log" | the GPU's id
  std::optional<double> needed_bytes;     // measured: what the failing step needed at least
  std::optional<int> batch;               // the failing batch
  std::optional<double> predicted_bytes;  // the model at that batch, unscaled
  double scale = 1;                       // model x scale = the log's figure at the failing batch
  int largest_batch = 0;                  // largest batch that fits the capacity (0: not even 1)
  std::optional<int> micro_batch;         // with accumulation_steps, keeps the failing batch's effective batch
  std::optional<int> accumulation_steps;
  std::optional<int> checkpointing_batch;
  std::optional<int> mixed_precision_batch;
};

// Empty when the log has no capacity and no --gpu was given, or no model was given.
std::optional<OomPlan> plan_oom(const OomReport& oom, const LogScan& scan, const RunContext& context);

std::vector<Finding> check_log(const LogScan& scan, const RunContext& context,
                               const RuleTable& rules = RuleTable::builtin());

// "2.00 GiB", "512.00 MiB": the units PyTorch prints.
std::string format_size(double bytes);

}  // namespace gpusage::diagnose
