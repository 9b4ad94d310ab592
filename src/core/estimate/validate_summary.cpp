// The summaries of a validation report: the headlines, by cards, architecture and cell, the memory and
// max-batch verdicts, and the fine-tuning rows apart (summarize_fine_tuning).
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/common/stats.hpp"
#include "core/estimate/uncertainty.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {

namespace {

bool is_memory(Metric metric) {
  return metric == Metric::peak_memory || metric == Metric::peak_allocated || metric == Metric::peak_reserved;
}

bool counts_as_fine_tuning(const ValidationRow& row) {
  const Measurement& m = row.measurement;
  return row.error && m.fine_tuning() && !m.legacy() && m.metric != Metric::max_batch;
}

// The 80% range plan prints for a fine-tuning throughput row (throughput_interval), with its method's cell
// (fine_tuning_method) drawn from the other sources' runs alone: a row is never judged by a range its own
// source helped draw. The model family's cells come from the shipped table, as plan's do, and so does the
// method's when the other sources have too few runs of it.
Interval fine_tuning_range(const ValidationRow& row, ErrorsBySource by_source) {
  const Measurement& m = row.measurement;
  by_source.erase(cv_group_of(m, CvGroup::source));
  const IntervalCell others = fine_tuning_cell(m.method(), by_source);
  return throughput_interval(builtin_interval_table(), *row.predicted, model_family(m.model), m.precision,
                             row.architecture, m.num_gpus, m.method(),
                             others.rows >= kMinIntervalRows ? &others : nullptr);
}

// The fine-tuning figures of a report: every current-software fine-tuning row, whatever its GPU count.
void summarize_fine_tuning(ValidationReport& report) {
  std::vector<double> throughput, memory;
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<double>, std::vector<double>>> cells;
  std::map<std::pair<std::string, std::string>, int> inside;  // by cell
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!counts_as_fine_tuning(row)) continue;
    ++report.fine_tuning_ran_rows;
    report.fine_tuning_ran_predicted_oom += row.predicted_oom;
    auto& cell = cells[{m.method(), row.gpu_class}];
    (is_memory(m.metric) ? memory : throughput).push_back(*row.error);
    (is_memory(m.metric) ? cell.second : cell.first).push_back(*row.error);
  }
  std::map<std::string, ErrorsBySource> speed_by_method_source = fine_tuning_speed_errors(report);
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!counts_as_fine_tuning(row) || is_memory(m.metric) || !row.predicted) continue;
    const Interval range = fine_tuning_range(row, speed_by_method_source[m.method()]);
    const bool held = m.value >= range.low && m.value <= range.high;
    report.fine_tuning_inside_interval += held;
    inside[{m.method(), row.gpu_class}] += held;
  }
  report.fine_tuning_throughput = summarize(throughput);
  report.fine_tuning_memory = summarize(memory);
  for (const auto& [key, errors] : cells) {
    report.fine_tuning_cells.push_back(
        {key.first, key.second, summarize(errors.first), summarize(errors.second), inside[key]});
  }
}

// The multi-GPU language-model rows (every model but BERT, pre-training and fine-tuning alike) by parallelism:
// where the data-parallel communication of large models shows.
void summarize_multi_gpu_llm(ValidationReport& report) {
  std::map<std::string, std::vector<double>> by_parallel;
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!row.error || m.metric != Metric::train_throughput || m.num_gpus < 2 || m.legacy() || m.superlinear) continue;
    if (!m.seq_len || model_family(m.model) == "bert") continue;
    by_parallel[to_string(m.parallel)].push_back(*row.error);
  }
  for (const auto& [parallel, errors] : by_parallel)
    report.multi_gpu_llm_by_parallel.emplace_back(parallel, summarize(errors));
}

// Held-out errors per GPU architecture, for all cards and data-center and GeForce cards apart.
class ArchitectureErrors {
 public:
  void add(const ValidationRow& row) {
    cards_[row.geforce][row.architecture].push_back(*row.error);
    cards_[2][row.architecture].push_back(*row.error);
  }
  std::vector<ArchitectureSummary> summaries() {
    std::vector<ArchitectureSummary> out;
    for (const auto& [architecture, errors] : cards_[2]) {
      out.push_back(
          {architecture, {summarize(errors), summarize(cards_[0][architecture]), summarize(cards_[1][architecture])}});
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<double>> cards_[3];  // [0] data center, [1] GeForce, [2] all
};

}  // namespace

namespace detail {

// Fills the summaries of a report from its predicted rows.
void summarize_report(ValidationReport& report) {
  summarize_fine_tuning(report);
  summarize_sequence_bands(report);
  summarize_multi_gpu_llm(report);
  std::vector<double> single, multi, legacy, superlinear, memory, legacy_memory, other_memory, allocator_memory;
  std::vector<double> single_cards[2], multi_cards[2];  // [0] data center, [1] GeForce
  ArchitectureErrors current_architectures, legacy_architectures;
  std::map<Cell, std::vector<double>> cells;
  for (const ValidationRow& row : report.rows) {
    if (!row.error) continue;
    const Measurement& m = row.measurement;
    const bool other = m.other_framework();
    if (m.metric != Metric::max_batch) {
      ++(other ? report.other_framework_ran_rows : report.ran_rows);
      if (row.predicted_oom) ++(other ? report.other_framework_ran_predicted_oom : report.ran_predicted_oom);
    }
    if (m.fine_tuning() && m.metric != Metric::max_batch) continue;  // summarize_fine_tuning's
    switch (m.metric) {
      case Metric::train_throughput:
        if (m.legacy()) {
          legacy.push_back(*row.error);
          if (m.num_gpus == 1 && !m.superlinear) legacy_architectures.add(row);
        } else if (m.superlinear) {
          superlinear.push_back(*row.error);
        } else if (m.num_gpus > 1) {
          multi.push_back(*row.error);
          multi_cards[row.geforce].push_back(*row.error);
        } else {
          single.push_back(*row.error);
          single_cards[row.geforce].push_back(*row.error);
          current_architectures.add(row);
          cells[Cell{model_family(m.model), m.precision, row.architecture,
                     row.geforce ? kGeForceCards : kDataCenterCards}]
              .push_back(*row.error);
        }
        break;
      case Metric::peak_memory:
        (other ? other_memory : m.legacy() ? legacy_memory : memory).push_back(*row.error);
        break;
      case Metric::peak_allocated:
      case Metric::peak_reserved:
        (other ? other_memory : m.legacy() ? legacy_memory : allocator_memory).push_back(*row.error);
        break;
      case Metric::max_batch:
        ++(other ? report.other_framework_max_batch_rows : report.max_batch_rows);
        if (row.bracket_hit.value_or(false)) ++(other ? report.other_framework_max_batch_hits : report.max_batch_hits);
        break;
    }
  }
  report.single_gpu_throughput = summarize(single);
  report.multi_gpu_throughput = summarize(multi);
  report.single_gpu_by_cards = {report.single_gpu_throughput, summarize(single_cards[0]), summarize(single_cards[1])};
  report.multi_gpu_by_cards = {report.multi_gpu_throughput, summarize(multi_cards[0]), summarize(multi_cards[1])};
  report.architectures = current_architectures.summaries();
  report.legacy_architectures = legacy_architectures.summaries();
  report.legacy_throughput = summarize(legacy);
  report.superlinear_throughput = summarize(superlinear);
  report.peak_memory = summarize(memory);
  report.allocator_peak_memory = summarize(allocator_memory);
  report.legacy_peak_memory = summarize(legacy_memory);
  report.other_framework_peak_memory = summarize(other_memory);
  for (const auto& [cell, errors] : cells) report.cells.push_back({cell, summarize(errors)});
}

}  // namespace detail

ErrorSummary summarize(const std::vector<double>& signed_errors) {
  ErrorSummary s;
  s.count = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return s;
  std::vector<double> abs_errors, ratios;
  for (double e : signed_errors) {
    abs_errors.push_back(std::fabs(e));
    ratios.push_back(1 + e);
  }
  s.median_abs_error = stats::quantile(abs_errors, 0.5);
  s.p90_abs_error = stats::quantile(abs_errors, 0.9);
  s.median_error = stats::quantile(signed_errors, 0.5);
  s.ratio_p10 = stats::quantile(ratios, 0.1);
  s.ratio_p90 = stats::quantile(ratios, 0.9);
  return s;
}

}  // namespace gpusage::estimate
