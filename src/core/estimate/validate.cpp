#include "core/estimate/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/common/error.hpp"
#include "core/common/stats.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/planner.hpp"
#include "core/estimate/uncertainty.hpp"

namespace gpusage::estimate {

namespace {

// PyTorch 2.0 (March 2023) brought scaled_dot_product_attention with fused (flash / memory-efficient)
// kernels; software before it runs attention unfused, keeping the s^2 probabilities.
constexpr const char* kFusedAttentionSince = "2023-03";

// What a row needs for a prediction, built once per row.
struct Prepared {
  workload::Workload workload;        // at the row's sequence length: what memory has to hold
  workload::Workload timed_workload;  // at the tokens each sample really computes (Measurement::tokens)
  TrainingConfig config;
  catalog::Gpu gpu;
  std::string key;  // everything the prediction depends on: rows with equal keys predict alike
};

std::optional<Prepared> prepare(const Measurement& m, const catalog::Catalog& catalog, std::string& skipped) {
  try {
    workload::WorkloadOptions options;
    options.resolution = m.resolution;
    options.seq_len = m.seq_len;
    options.flash_attention = m.flash_attention.value_or(!m.software_date.empty() &&
                                                         m.software_date >= kFusedAttentionSince);
    if (m.task == "squad") options.head = workload::Head::question_answering;
    Prepared p{workload::build(m.model, options), {}, {}, complete_tensor_rates(catalog.resolve(m.gpu), catalog).gpu,
               {}};
    if (m.tokens) options.seq_len = m.tokens;
    p.timed_workload = m.tokens ? workload::build(m.model, options) : p.workload;
    auto precision = catalog::parse_precision(m.precision);
    if (!precision) throw InputError(fmt::format("unknown precision '{}'", m.precision));
    p.config.precision = *precision;
    p.config.batch_per_gpu = m.batch_per_gpu;
    p.config.accumulation_steps = m.accumulation;
    p.config.optimizer = m.optimizer.value_or(p.workload.domain == workload::Domain::vision ? Optimizer::momentum
                                                                                          : Optimizer::adamw);
    p.config.master_weights = m.master_weights;
    p.config.loss = m.loss;
    p.config.lora_rank = m.lora_rank;
    p.config.qlora = m.qlora;
    p.config.lora_targets = m.lora_targets;
    p.config.lora_dropout = m.lora_dropout;
    p.config.optimizer_in_backward = m.optimizer_in_backward;
    p.config.gpus_per_node = std::min(m.num_gpus, 8);
    p.config.nodes = std::max(1, m.num_gpus / 8);
    p.config.parallel = m.parallel;
    p.config.offload = m.offload;
    p.config.interconnect = m.interconnect;
    p.config.channels_last = m.channels_last.value_or(false);
    p.config.pure_16bit = m.pure_16bit;
    p.config.checkpointing = !m.checkpointing.empty() && m.checkpointing != "none";
    p.config.selective_checkpointing = m.checkpointing == "selective";
    if (m.checkpointing.starts_with("every:")) p.config.checkpoint_every = std::stoi(m.checkpointing.substr(6));
    if (m.gpu_memory_gb) p.gpu.memory_gb = *m.gpu_memory_gb;
    p.config.eager_module_loading = m.loads_modules_eagerly();
    p.key = fmt::format("{}{}{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", m.offload.optimizer,
                        m.offload.params, m.offload.activations, m.optimizer_in_backward,
                        to_string(m.interconnect), m.model, m.gpu,
                        m.precision, m.batch_per_gpu, m.num_gpus, m.resolution.value_or(0), m.seq_len.value_or(0),
                        m.tokens.value_or(0), m.accumulation, options.flash_attention, to_string(m.parallel),
                        p.config.channels_last, m.task, m.pure_16bit, m.checkpointing, m.gpu_memory_gb.value_or(0),
                        to_string(p.config.optimizer), m.master_weights == MasterWeights::bf16 ? "bf16" : "fp32", to_string(m.loss),
                        m.lora_rank.value_or(0), m.qlora, to_string(m.lora_targets), m.lora_dropout);
    return p;
  } catch (const InputError& e) {
    skipped = e.what();
    return std::nullopt;
  }
}

// Samples per second per GPU over whole optimizer steps (every accumulated micro-batch counts).
double predict_throughput(const Prepared& p, const Calibration& calibration) {
  return p.config.batch_per_gpu * p.config.accumulation_steps /
         estimate_step_time(p.timed_workload, p.config, p.gpu, &calibration).step_s;
}

// A max_batch row's verdict: plan's largest batch ran (value) and is below the one that failed (fails_at).
bool in_bracket(const Measurement& m, int predicted) {
  return predicted >= m.value && (!m.fails_at || predicted < *m.fails_at);
}

// Fills a row's prediction and error from one set of constants.
void predict_row(ValidationRow& row, const Prepared& p, const Calibration& calibration) {
  const Measurement& m = row.measurement;
  if (m.metric == Metric::max_batch) {
    const int predicted = max_batch(p.workload, p.config, p.gpu, &calibration);
    row.predicted = predicted;
    row.bracket_hit = in_bracket(m, predicted);
  } else {
    // A throughput or peak-memory row is a run that ran: its memory says whether plan has it fit.
    const MemoryBreakdown memory = estimate_memory(p.workload, p.config, p.gpu, &calibration);
    switch (m.metric) {
      case Metric::peak_memory: row.predicted = memory.total_bytes(); break;
      case Metric::peak_allocated: row.predicted = memory.allocated_bytes(); break;
      case Metric::peak_reserved: row.predicted = memory.reserved_bytes(); break;
      default: row.predicted = predict_throughput(p, calibration); break;
    }
    row.predicted_oom = !memory.fits(p.gpu.memory_bytes());
  }
  row.error = (*row.predicted - m.value) / m.value;
}

const char* gpu_class(const catalog::Gpu& gpu) {
  switch (gpu.family) {
    case catalog::Family::rtx50:
    case catalog::Family::rtx40:
    case catalog::Family::rtx30: return "geforce";
    case catalog::Family::workstation: return "workstation";
    case catalog::Family::datacenter: return "datacenter";
  }
  return "?";
}

bool is_memory(Metric metric) {
  return metric == Metric::peak_memory || metric == Metric::peak_allocated || metric == Metric::peak_reserved;
}

bool counts_as_fine_tuning(const ValidationRow& row) {
  const Measurement& m = row.measurement;
  return row.error && m.fine_tuning() && !m.legacy() && m.metric != Metric::max_batch;
}

// The 80% range plan prints for a fine-tuning throughput row, its adapter method's cell (fine_tuning_method)
// drawn from the other sources' runs alone: a row is never judged by a range its own source helped draw.
// A method with too few such runs, and a full fine-tune, take the shipped table's cell as plan does.
Interval fine_tuning_range(const ValidationRow& row, ErrorsBySource by_source) {
  const Measurement& m = row.measurement;
  by_source.erase(cv_group_of(m, CvGroup::source));
  const IntervalCell others = fine_tuning_cell(m.method(), by_source);
  if (std::string(m.method()) != "full" && others.rows >= kMinIntervalRows) {
    return interval_from_cell(others, *row.predicted, {});
  }
  return throughput_interval(builtin_interval_table(), *row.predicted, model_family(m.model), m.precision,
                             row.architecture, m.num_gpus);
}

// The fine-tuning figures of a report: every current-software fine-tuning row, whatever its GPU count.
void summarize_fine_tuning(ValidationReport& report) {
  std::vector<double> throughput, memory;
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<double>, std::vector<double>>> cells;
  std::map<std::string, ErrorsBySource> speed_by_method_source;
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!counts_as_fine_tuning(row)) continue;
    ++report.fine_tuning_ran_rows;
    report.fine_tuning_ran_predicted_oom += row.predicted_oom;
    auto& cell = cells[{m.method(), row.gpu_class}];
    (is_memory(m.metric) ? memory : throughput).push_back(*row.error);
    (is_memory(m.metric) ? cell.second : cell.first).push_back(*row.error);
    if (m.metric == Metric::train_throughput) {
      speed_by_method_source[m.method()][cv_group_of(m, CvGroup::source)].push_back(*row.error);
    }
  }
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!counts_as_fine_tuning(row) || is_memory(m.metric) || !row.predicted) continue;
    const Interval range = fine_tuning_range(row, speed_by_method_source[m.method()]);
    report.fine_tuning_inside_interval += m.value >= range.low && m.value <= range.high;
  }
  report.fine_tuning_throughput = summarize(throughput);
  report.fine_tuning_memory = summarize(memory);
  for (const auto& [key, errors] : cells) {
    report.fine_tuning_cells.push_back({key.first, key.second, summarize(errors.first), summarize(errors.second)});
  }
}

// Fills the summaries of a report from its predicted rows.
void summarize_report(ValidationReport& report) {
  summarize_fine_tuning(report);
  std::vector<double> single, multi, legacy, superlinear, memory, legacy_memory, other_memory, allocator_memory;
  std::vector<double> single_cards[2], multi_cards[2];  // [0] data center, [1] GeForce
  std::map<std::string, std::vector<double>> architecture_cards[3];  // [0] data center, [1] GeForce, [2] all
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
        } else if (m.superlinear) {
          superlinear.push_back(*row.error);
        } else if (m.num_gpus > 1) {
          multi.push_back(*row.error);
          multi_cards[row.geforce].push_back(*row.error);
        } else {
          single.push_back(*row.error);
          single_cards[row.geforce].push_back(*row.error);
          architecture_cards[row.geforce][row.architecture].push_back(*row.error);
          architecture_cards[2][row.architecture].push_back(*row.error);
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
  for (const auto& [architecture, errors] : architecture_cards[2]) {
    report.architectures.push_back({architecture,
                                    {summarize(errors), summarize(architecture_cards[0][architecture]),
                                     summarize(architecture_cards[1][architecture])}});
  }
  report.legacy_throughput = summarize(legacy);
  report.superlinear_throughput = summarize(superlinear);
  report.peak_memory = summarize(memory);
  report.allocator_peak_memory = summarize(allocator_memory);
  report.legacy_peak_memory = summarize(legacy_memory);
  report.other_framework_peak_memory = summarize(other_memory);
  for (const auto& [cell, errors] : cells) report.cells.push_back({cell, summarize(errors)});
}

struct FitRow {
  const Prepared* prepared;
  double measured;
};

// How hard a fit is drawn back to the prior: the penalty of a log-normal prior that knows each constant
// within a factor of two (sigma = ln 2), on the scale of the data term, a typical |log error| of 0.1
// spread over the independent evidence: ln^2(value / prior) x 0.1 / (2 sigma^2 n). Rows that repeat a
// GPU, model and precision (one benchmark rerun on many systems, a batch sweep) are not independent, so
// n counts those combinations, not rows. It decides between constants the rows cannot tell apart (a
// flat objective) and leaves alone what they can.
constexpr double kPriorSigma = 0.6931471805599453;
constexpr double kTypicalLogError = 0.1;

ModelConstants fit_rows(const std::vector<FitRow>& rows, const ModelConstants& prior) {
  if (rows.empty()) throw InputError("no rows to fit (current-software train_throughput rows)");
  const FitBounds& bounds = fit_bounds();
  Calibration calibration;
  calibration.constants = prior;
  // Many published rows repeat one configuration (a benchmark rerun on many nodes): predict each
  // distinct configuration once per evaluation.
  std::vector<const Prepared*> distinct;
  std::vector<std::size_t> distinct_of(rows.size());
  {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto [it, added] = index.try_emplace(rows[i].prepared->key, distinct.size());
      if (added) distinct.push_back(rows[i].prepared);
      distinct_of[i] = it->second;
    }
  }
  std::vector<double> predictions(distinct.size());
  std::vector<double> errors(rows.size());
  std::set<std::string> evidence;
  for (const FitRow& row : rows) {
    const Prepared& p = *row.prepared;
    evidence.insert(p.gpu.id + "|" + p.workload.id + "|" + catalog::to_string(p.config.precision));
  }
  std::vector<std::pair<const double*, double>> anchored;  // each fitted knob and its prior value
  auto penalty = [&] {
    double sum = 0;
    for (const auto& [value, anchor] : anchored) sum += std::pow(std::log(*value / anchor), 2);
    return sum * kTypicalLogError / (2 * kPriorSigma * kPriorSigma * static_cast<double>(evidence.size()));
  };
  auto loss = [&] {
    for (std::size_t d = 0; d < distinct.size(); ++d) predictions[d] = predict_throughput(*distinct[d], calibration);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      errors[i] = std::fabs(std::log(predictions[distinct_of[i]] / rows[i].measured));
    }
    // The median and the 90th percentile of |log error|, the two figures the fit is judged by, the
    // tail at a quarter weight: a median alone lets a tenth of the rows drift as far as they like.
    const auto tail = errors.begin() + static_cast<long>(errors.size() * 9 / 10);
    std::nth_element(errors.begin(), tail, errors.end());
    const double p90 = *tail;
    const auto middle = errors.begin() + static_cast<long>(errors.size() / 2);
    std::nth_element(errors.begin(), middle, tail);
    return *middle + 0.25 * p90 + penalty();
  };
  ModelConstants& k = calibration.constants;
  struct Knob {
    double* value;
    double lo, hi;
  };
  const double e_lo = bounds.efficiency_lo, e_hi = bounds.efficiency_hi;
  std::vector<Knob> knobs = {
      {&k.conv_tensor_efficiency, e_lo, e_hi},
      {&k.matmul_tensor_efficiency, e_lo, e_hi},
      {&k.tf32_relative_efficiency, e_lo, e_hi},
      {&k.conv_fp32_efficiency, e_lo, e_hi},
      {&k.matmul_fp32_efficiency, e_lo, e_hi},
      {&k.attention_relative_efficiency, e_lo, e_hi},
      {&k.memory_efficiency, e_lo, e_hi},
      {&k.depthwise_conv_relative_efficiency, e_lo, e_hi},
      {&k.kernel_fixed_s, bounds.kernel_fixed_lo_s, bounds.kernel_fixed_hi_s},
      {&k.host_dispatch_s, bounds.host_dispatch_lo_s, bounds.host_dispatch_hi_s},
  };
  // One compute factor per architecture that has rows; it may not lift any GEMM efficiency above 1.
  // An architecture without rows gets none, so that it is predicted as plan predicts a new one (the
  // median factor, step_time.cpp), not from a value fitted on the rows held out.
  std::set<std::string> present;
  for (const FitRow& row : rows) present.insert(row.prepared->gpu.compute_capability);
  std::erase_if(k.architecture_compute_factor, [&](const auto& entry) { return !present.count(entry.first); });
  for (const std::string& cc : present) k.architecture_compute_factor.try_emplace(cc, 1.0);
  std::vector<double*> factors;
  for (auto& [architecture, factor] : k.architecture_compute_factor) factors.push_back(&factor);
  auto factor_cap = [&] {
    const double e = std::max(k.conv_tensor_efficiency, k.matmul_tensor_efficiency);
    return std::min(bounds.architecture_hi, 1.0 / e);
  };
  for (double* f : factors) *f = std::clamp(*f, bounds.architecture_lo, factor_cap());
  for (Knob& knob : knobs) *knob.value = std::clamp(*knob.value, knob.lo, knob.hi);
  for (const Knob& knob : knobs) anchored.emplace_back(knob.value, *knob.value);
  for (double* f : factors) anchored.emplace_back(f, *f);
  // Coordinate search: each knob in turn moves by a factor while the loss falls, with the steps
  // shrinking over the rounds.
  double best = loss();
  for (int round = 0; round < 12; ++round) {
    const double step = round < 4 ? 1.25 : round < 8 ? 1.08 : 1.02;
    std::vector<Knob> all = knobs;
    for (double* f : factors) all.push_back({f, bounds.architecture_lo, bounds.architecture_hi});
    for (Knob& knob : all) {
      for (double factor : {step, 1 / step}) {
        while (true) {
          const double old = *knob.value;
          const double next = std::clamp(old * factor, knob.lo, knob.hi);
          if (next == old) break;
          *knob.value = next;
          const double cap = factor_cap();
          bool physical = true;
          for (double* f : factors) physical = physical && *f <= cap * (1 + 1e-12);
          const double l = physical ? loss() : best + 1;
          if (l < best - 1e-9) {
            best = l;
          } else {
            *knob.value = old;
            break;
          }
        }
      }
    }
  }
  return k;
}

// The memory verdicts allocator_unreleasable_fraction is fitted to: every current-software PyTorch run that
// ran (its throughput or peak-memory row; it fitted, whatever it measured) and every max-batch bracket.
// Candidates are 1/kFractionSteps to all of allocator_overhead_fraction (none at 0, which the prior's
// logarithm cannot weigh). The fraction moves only what has to fit, and linearly in the live activations +
// workspace, so one evaluation per run gives its verdict at every candidate; a bracket's largest batch is
// searched at each candidate.
constexpr int kFractionSteps = 32;
// Each kind of miss counts against the share of it plan tolerates (docs/MODEL.md): runs that ran but are
// predicted not to fit against 2%, brackets missed against 15%.
constexpr double kTolerableRanPredictedOom = 0.02;
constexpr double kTolerableBracketMisses = 0.15;

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

bool judges_fragmentation(const Measurement& m) { return !m.legacy() && !m.other_framework() && !m.fine_tuning(); }

MemoryVerdicts memory_verdicts(const std::vector<Measurement>& measurements,
                               const std::vector<const Prepared*>& prepared, const ModelConstants& k) {
  MemoryVerdicts v;
  for (int c = 1; c <= kFractionSteps; ++c) v.candidates.push_back(k.allocator_overhead_fraction * c / kFractionSteps);
  Calibration calibration;
  calibration.constants = k;
  std::vector<Calibration> at_candidate(v.candidates.size(), calibration);
  for (std::size_t c = 0; c < v.candidates.size(); ++c) {
    at_candidate[c].constants.allocator_unreleasable_fraction = v.candidates[c];
  }
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    if (!prepared[i] || !judges_fragmentation(m)) continue;
    const Prepared& p = *prepared[i];
    if (m.metric == Metric::max_batch) {
      MemoryVerdicts::Bracket b{i, {}};
      for (const Calibration& at : at_candidate) {
        const int predicted = max_batch(p.workload, p.config, p.gpu, &at);
        b.hit.push_back(in_bracket(m, predicted));
      }
      v.brackets.push_back(std::move(b));
    } else {
      const MemoryBreakdown mm = estimate_memory(p.workload, p.config, p.gpu, &calibration);
      const double allocated = mm.activations_bytes + mm.workspace_bytes;
      v.ran.push_back({i, mm.required_bytes() - k.allocator_unreleasable_fraction * allocated, allocated,
                       p.gpu.memory_bytes()});
    }
  }
  return v;
}

// The candidate with the fewest misses, each kind against its tolerated share, over the rows `use` keeps,
// drawn back to the prior (the whole reserve stays) by a log-normal penalty with the speed fit's sigma:
// runs that ran only ever say "less stays", so without a bracket among the rows (leave-one-GPU-out holds out
// the RTX 3090, whose timm brackets are all there are) nothing else would hold the share up. Of equals, the
// largest (the least memory taken as given back).
double fit_unreleasable_fraction(const MemoryVerdicts& v, const std::function<bool(std::size_t)>& use,
                                 double prior) {
  double best_loss = std::numeric_limits<double>::infinity();
  double best = prior;
  for (std::size_t c = v.candidates.size(); c-- > 0;) {
    int ran = 0, oom = 0, brackets = 0, missed = 0;
    for (const auto& r : v.ran) {
      if (!use(r.row)) continue;
      ++ran;
      oom += r.required_at_zero + v.candidates[c] * r.allocated > r.capacity;
    }
    for (const auto& b : v.brackets) {
      if (!use(b.row)) continue;
      ++brackets;
      missed += !b.hit[c];
    }
    if (ran + brackets == 0) return prior;
    const double drawn = std::log(v.candidates[c] / prior);
    const double loss = (ran ? static_cast<double>(oom) / ran / kTolerableRanPredictedOom : 0) +
                        (brackets ? static_cast<double>(missed) / brackets / kTolerableBracketMisses : 0) +
                        drawn * drawn / (2 * kPriorSigma * kPriorSigma);
    if (loss < best_loss - 1e-12) {
      best_loss = loss;
      best = v.candidates[c];
    }
  }
  return best;
}

}  // namespace

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

const FitBounds& fit_bounds() {
  static const FitBounds bounds;
  return bounds;
}

ValidationReport validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                          const Calibration& calibration) {
  ValidationReport report;
  for (const Measurement& m : measurements) {
    ValidationRow row{m, std::nullopt, std::nullopt, {}, {}, {}, {}, false, std::nullopt};
    if (auto p = prepare(m, catalog, row.skipped)) {
      row.architecture = p->gpu.architecture;
      row.geforce = catalog::is_geforce(p->gpu.family);
      row.gpu_class = gpu_class(p->gpu);
      predict_row(row, *p, calibration);
    }
    report.rows.push_back(std::move(row));
  }
  summarize_report(report);
  return report;
}

ValidationReport cross_validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                                const ModelConstants& prior, CvGroup group,
                                const std::function<void(int, int)>& progress) {
  ValidationReport report;
  report.cv = group;
  std::vector<std::optional<Prepared>> prepared;
  std::vector<std::string> groups_of;
  std::vector<std::string> groups;
  for (const Measurement& m : measurements) {
    ValidationRow row{m, std::nullopt, std::nullopt, {}, {}, {}, cv_group_of(m, group), false, std::nullopt};
    prepared.push_back(prepare(m, catalog, row.skipped));
    if (prepared.back()) {
      row.architecture = prepared.back()->gpu.architecture;
      row.geforce = catalog::is_geforce(prepared.back()->gpu.family);
      row.gpu_class = gpu_class(prepared.back()->gpu);
    }
    if (prepared.back() && std::find(groups.begin(), groups.end(), row.group) == groups.end()) {
      groups.push_back(row.group);
    }
    report.rows.push_back(std::move(row));
  }
  report.groups = static_cast<int>(groups.size());
  std::vector<const Prepared*> prepared_rows;
  for (const auto& p : prepared) prepared_rows.push_back(p ? &*p : nullptr);
  const MemoryVerdicts verdicts = memory_verdicts(measurements, prepared_rows, prior);
  std::atomic<std::size_t> next{0};
  std::atomic<int> done{0};
  std::mutex failure_mutex;
  std::string failure;
  auto worker = [&] {
    while (true) {
      const std::size_t g = next++;
      if (g >= groups.size()) return;
      try {
        std::vector<FitRow> rows;
        for (std::size_t i = 0; i < prepared.size(); ++i) {
          if (prepared[i] && report.rows[i].group != groups[g] && measurements[i].current_throughput()) {
            rows.push_back({&*prepared[i], measurements[i].value});
          }
        }
        Calibration calibration;
        calibration.constants = fit_rows(rows, prior);
        calibration.constants.allocator_unreleasable_fraction = fit_unreleasable_fraction(
            verdicts, [&](std::size_t i) { return report.rows[i].group != groups[g]; },
            prior.allocator_unreleasable_fraction);
        {
          std::lock_guard lock(failure_mutex);
          report.fold_constants[groups[g]] = calibration.constants;
        }
        for (std::size_t i = 0; i < prepared.size(); ++i) {
          if (prepared[i] && report.rows[i].group == groups[g]) predict_row(report.rows[i], *prepared[i], calibration);
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        failure = fmt::format("holding out {} '{}': {}", to_string(group), groups[g], e.what());
      }
      const int finished = ++done;
      if (progress) progress(finished, static_cast<int>(groups.size()));
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (!failure.empty()) throw InputError(failure);
  summarize_report(report);
  return report;
}

ModelConstants fit_constants(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                             const ModelConstants& prior) {
  std::vector<std::optional<Prepared>> prepared;
  std::vector<const Prepared*> prepared_rows;
  std::vector<FitRow> rows;
  for (const Measurement& m : measurements) {
    std::string skipped;
    prepared.push_back(prepare(m, catalog, skipped));
  }
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    prepared_rows.push_back(prepared[i] ? &*prepared[i] : nullptr);
    if (prepared[i] && measurements[i].current_throughput()) rows.push_back({&*prepared[i], measurements[i].value});
  }
  ModelConstants k = fit_rows(rows, prior);
  k.allocator_unreleasable_fraction =
      fit_unreleasable_fraction(memory_verdicts(measurements, prepared_rows, prior),
                                [](std::size_t) { return true; }, prior.allocator_unreleasable_fraction);
  return k;
}

const std::vector<std::pair<const char*, double ModelConstants::*>>& fitted_scalar_constants() {
  static const std::vector<std::pair<const char*, double ModelConstants::*>> constants = {
      {"conv_tensor_efficiency", &ModelConstants::conv_tensor_efficiency},
      {"matmul_tensor_efficiency", &ModelConstants::matmul_tensor_efficiency},
      {"tf32_relative_efficiency", &ModelConstants::tf32_relative_efficiency},
      {"conv_fp32_efficiency", &ModelConstants::conv_fp32_efficiency},
      {"matmul_fp32_efficiency", &ModelConstants::matmul_fp32_efficiency},
      {"attention_relative_efficiency", &ModelConstants::attention_relative_efficiency},
      {"memory_efficiency", &ModelConstants::memory_efficiency},
      {"depthwise_conv_relative_efficiency", &ModelConstants::depthwise_conv_relative_efficiency},
      {"kernel_fixed_s", &ModelConstants::kernel_fixed_s},
      {"host_dispatch_s", &ModelConstants::host_dispatch_s},
      {"allocator_unreleasable_fraction", &ModelConstants::allocator_unreleasable_fraction},
  };
  return constants;
}

std::vector<std::string> describe_changes(const ModelConstants& before, const ModelConstants& after) {
  std::vector<std::string> lines;
  auto compare = [&](const std::string& name, double a, double b) {
    if (a == 0 || std::fabs(b / a - 1) <= 0.005) return;
    lines.push_back(fmt::format("{} {:.4g} -> {:.4g} ({:+.1f}%)", name, a, b, (b / a - 1) * 100));
  };
  for (const auto& [name, member] : fitted_scalar_constants()) compare(name, before.*member, after.*member);
  for (const auto& [cc, factor] : after.architecture_compute_factor) {
    auto it = before.architecture_compute_factor.find(cc);
    compare("architecture_compute_factor[" + cc + "]", it == before.architecture_compute_factor.end() ? 1.0 : it->second,
            factor);
  }
  return lines;
}

}  // namespace gpusage::estimate
