// Internal to the estimate module: the pieces validate() and cross_validate() (validate.cpp) are made of,
// shared between validate_rows.cpp (a row made ready and predicted), validate_fit.cpp (the speed constants'
// and the memory constant's fits) and validate_summary.cpp (the report's summaries).
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/planner.hpp"
#include "core/estimate/validate.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate::detail {

// Everything a row's prediction is computed from, compared member by member (the defaulted <=> here and in
// workload::WorkloadOptions and TrainingConfig): rows with equal inputs predict alike, so the fit predicts
// each distinct one once. An option added to either struct joins the comparison with no edit here. The card
// is its catalog id with the memory the row sets (Measurement::gpu_memory_gb), the one figure a row changes.
struct PredictionInputs {
  std::string model;
  workload::WorkloadOptions options;        // the workload memory is predicted on (the row's seq_len)
  workload::WorkloadOptions timed_options;  // the one step time is predicted on (Measurement::tokens)
  TrainingConfig config;
  std::string gpu;  // its catalog id
  double gpu_memory_gb = 0;
  auto operator<=>(const PredictionInputs&) const = default;
};

// What a row needs for a prediction, built once per row.
struct Prepared {
  workload::Workload workload;        // at the row's sequence length: what memory has to hold
  workload::Workload timed_workload;  // at the tokens each sample really computes (Measurement::tokens)
  TrainingConfig config;
  catalog::Gpu gpu;
  PredictionInputs inputs;  // what the three above were made from: rows with equal inputs predict alike
};

// The row made ready for prediction, or empty with `skipped` saying why (an unknown model, GPU or precision).
std::optional<Prepared> prepare(const Measurement& m, const catalog::Catalog& catalog, std::string& skipped);
// Samples per second per GPU over whole optimizer steps (every accumulated micro-batch counts).
double predict_throughput(const Prepared& p, const Calibration& calibration);
// A max_batch row's verdict: plan's largest batch ran (value) and is below the one that failed (fails_at).
bool in_bracket(const Measurement& m, int predicted);
// Fills a row's prediction and error from one set of constants.
void predict_row(ValidationRow& row, const Prepared& p, const Calibration& calibration);
// geforce, workstation or datacenter: the GPU class of the fine-tuning cells.
const char* gpu_class(const catalog::Gpu& gpu);

// Whether the speed constants are fitted to the row: a current-software throughput row that runs on one node. The
// fitted constants are one card's kernel efficiencies and per-kernel times; a run across nodes also waits on the
// network between them, a speed no row states (the catalog's reference server's NICs, collectives.cpp) and no fitted
// constant stands for, so fitted on such rows the efficiencies would absorb what the network model misses
// (docs/MODEL.md, session 23). Rows across nodes are predicted, never fitted.
bool fits_speed(const Measurement& m, const Prepared& p);

// A current-software throughput row the speed constants are fitted to.
struct FitRow {
  const Prepared* prepared;
  double measured;
};
// The speed constants fitted to `rows` from `prior` (fit_constants' search, validate.hpp).
ModelConstants fit_rows(const std::vector<FitRow>& rows, const ModelConstants& prior);

// The memory verdicts allocator_unreleasable_fraction is fitted to (validate_fit.cpp says which and how).
struct MemoryVerdicts {
  struct Ran {
    std::size_t row;
    double required_at_zero;  // what has to fit with no unreleasable fragmentation
    double allocated;         // activations + workspace, which the fraction multiplies
    double capacity;
  };
  struct Bracket {
    std::size_t row;
    std::vector<char> hit;  // per candidate: plan's largest batch inside the bracket
  };
  std::vector<double> candidates;
  std::vector<Ran> ran;
  std::vector<Bracket> brackets;
};
// `prepared[i]` is row i's, or nullptr where it could not be prepared.
MemoryVerdicts memory_verdicts(const std::vector<Measurement>& measurements,
                               const std::vector<const Prepared*>& prepared, const ModelConstants& k);
// The fitted allocator_unreleasable_fraction over the rows `use` keeps (by index into the measurements).
double fit_unreleasable_fraction(const MemoryVerdicts& v, const std::function<bool(std::size_t)>& use, double prior);

// Fills the summaries of a report from its predicted rows.
void summarize_report(ValidationReport& report);
// The language-model rows by sequence-length band (validate_sequence.cpp); summarize_report calls it.
void summarize_sequence_bands(ValidationReport& report);

}  // namespace gpusage::estimate::detail
