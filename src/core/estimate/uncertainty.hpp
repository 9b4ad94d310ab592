// Prediction intervals: how far `plan` has been from measured runs it was not fitted on, per cell
// (model family x precision x GPU architecture), taken from `gpusage validate --cv gpu` and shipped as
// data/validation/intervals.json (compiled in). plan divides its prediction by the cell's 90th and 10th
// percentile of predicted/measured to give the range that held 80% of the held-out runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate/validate.hpp"

namespace gpusage::estimate {

struct IntervalCell {
  std::string family;        // "*": any
  std::string precision;     // "*": any
  std::string architecture;  // "*": any
  int rows = 0;
  double ratio_p10 = 1;  // predicted / measured, 10th percentile
  double ratio_p90 = 1;  // predicted / measured, 90th percentile
  double median_abs_error = 0;
};

struct IntervalTable {
  std::string method;               // how the errors were obtained, e.g. "leave-one-gpu-out over published.csv"
  std::vector<IntervalCell> cells;  // exact cells and the coarser levels with "*"
  IntervalCell multi_gpu;           // per-GPU throughput of data-parallel runs (family etc. "*")
  // LLM fine-tuning by method in `family` ("full", "lora", "qlora"; precision and architecture "*"), any GPU
  // count: these runs' spread is their own (docs/MODEL.md, "Fine-tuning recipes"), and they are never fitted,
  // so every one of their errors is held out whatever the cross-validation.
  std::vector<IntervalCell> fine_tuning;
  int max_validated_gpus = 1;
};

// A cell needs this many held-out rows before its own spread is used; fewer fall back to a coarser level.
inline constexpr int kMinIntervalRows = 5;

// From a cross-validated report (single-GPU current-software throughput rows, the multi-GPU ones, and the
// adapter fine-tuning rows by method).
IntervalTable interval_table(const ValidationReport& report);
// Held-out signed errors (predicted / measured - 1) of fine-tuning runs, by source (cv_group_of, source).
using ErrorsBySource = std::map<std::string, std::vector<double>>;
// The cell for `method`, as the spread a new source would show: fine-tuning frameworks differ from one
// another more than one framework's runs differ among themselves, so the range is that of a source's bias
// (the median log ratio of each source, every source one draw) plus a run's scatter about its source's median
// (every run's log ratio less its source's median; every source's scatter one draw, then each of its runs),
// over all pairs of the two. A range from the runs pooled holds a source whose bias no other source shares only
// by chance, and lets one source with many runs set the tails. The sources are few (4 to 10 a method), so the
// biases are spread about their median by source_spread_widening before they are drawn.
IntervalCell fine_tuning_cell(const std::string& method, const ErrorsBySource& errors);
// The held-out speed errors of a report's current-software fine-tuning rows, by method ("full", "lora",
// "qlora"; Measurement::method) and source: what plan's adapter cells are drawn from (interval_table) and what
// validate judges each fine-tuning row's range by, without its own source.
std::map<std::string, ErrorsBySource> fine_tuning_speed_errors(const ValidationReport& report);
// How much wider than the S sources' own spread a new source's bias may fall: the normal-theory prediction
// interval for one more draw against the plug-in one, t(0.9; S - 1) x sqrt(1 + 1/S) / z(0.9). 1.43 for 4 sources,
// 1.13 for 10; 1 for one source (no spread to widen).
double source_spread_widening(int sources);
// The fine-tuning method whose interval cell a plan uses: "lora" or "qlora" for adapter training; "full" for
// a full-parameter plan of a causal language model (Workload::causal_lm), which may be a full fine-tune or
// pre-training (throughput_interval covers both); empty otherwise.
std::string fine_tuning_method(const TrainingConfig& config, bool causal_lm);
std::string interval_table_json(const IntervalTable& table, const std::string& data_file);
// Throws InputError naming `origin` when the text is not such a table.
IntervalTable parse_interval_table(const std::string& json_text, const std::string& origin);
// data/validation/intervals.json as compiled in.
const IntervalTable& builtin_interval_table();

struct Interval {
  double low = 0;
  double high = 0;
  std::string basis;                  // "resnet · fp16 · Ampere: 31 held-out runs"
  std::vector<std::string> warnings;  // the request lies outside the validated region
};

// The range for a throughput prediction of `family` at `precision` on a GPU of `architecture` with
// `world_size` GPUs, and warnings where no held-out run covers the request. With a `fine_tuning` method
// (fine_tuning_method) whose cell has enough rows, that cell's spread is used: alone for the adapter methods;
// for "full", joined with the model family's or the data-parallel cell where one applies (the run may be
// pre-training: the range spans both), in place of the any-model cells otherwise. `method_cell`, when given,
// stands for the table's cell of that method (validate's, drawn without the judged row's source).
Interval throughput_interval(const IntervalTable& table, double predicted, const std::string& family,
                             const std::string& precision, const std::string& architecture, int world_size,
                             const std::string& fine_tuning = {}, const IntervalCell* method_cell = nullptr);
// [predicted / ratio_p90, predicted / ratio_p10]: the range that held 80% of the cell's runs, stretched to
// the prediction where that range lies to one side of it, so that an estimate always lies inside its range.
Interval interval_from_cell(const IntervalCell& cell, double predicted, std::string basis);

}  // namespace gpusage::estimate
