// The fits validate and cross_validate refit per fold: the speed constants (fit_rows, a coordinate search
// drawn to the prior) and the one memory constant, allocator_unreleasable_fraction (memory_verdicts,
// fit_unreleasable_fraction); fit_constants runs both on every row.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/common/error.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {

namespace {

// How hard a fit is drawn back to the prior: the penalty of a log-normal prior that knows each constant
// within a factor of two (sigma = ln 2), on the scale of the data term, a typical |log error| of 0.1
// spread over the independent evidence: ln^2(value / prior) x 0.1 / (2 sigma^2 n). Rows that repeat a
// GPU, model and precision (one benchmark rerun on many systems, a batch sweep) are not independent, so
// n counts those combinations, not rows. It decides between constants the rows cannot tell apart (a
// flat objective) and leaves alone what they can.
constexpr double kPriorSigma = 0.6931471805599453;
constexpr double kTypicalLogError = 0.1;

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

bool judges_fragmentation(const Measurement& m) { return !m.legacy() && !m.other_framework() && !m.fine_tuning(); }

}  // namespace

namespace detail {

ModelConstants fit_rows(const std::vector<FitRow>& rows, const ModelConstants& prior) {
  if (rows.empty()) throw InputError("no rows to fit (current-software train_throughput rows on one node)");
  const FitBounds& bounds = fit_bounds();
  Calibration calibration;
  calibration.constants = prior;
  // Many published rows repeat one configuration (a benchmark rerun on many nodes): predict each
  // distinct configuration once per evaluation.
  std::vector<const Prepared*> distinct;
  std::vector<std::size_t> distinct_of(rows.size());
  {
    std::map<PredictionInputs, std::size_t> index;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto [it, added] = index.try_emplace(rows[i].prepared->inputs, distinct.size());
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
      {&k.matmul_tensor_efficiency, e_lo, bounds.matmul_tensor_efficiency_hi},
      {&k.tf32_relative_efficiency, e_lo, e_hi},
      {&k.conv_fp32_efficiency, e_lo, e_hi},
      {&k.matmul_fp32_efficiency, e_lo, e_hi},
      {&k.attention_relative_efficiency, e_lo, e_hi},
      {&k.memory_efficiency, e_lo, e_hi},
      {&k.depthwise_conv_relative_efficiency, e_lo, e_hi},
      {&k.kernel_fixed_s, bounds.kernel_fixed_lo_s, bounds.kernel_fixed_hi_s},
      {&k.host_dispatch_s, bounds.host_dispatch_lo_s, bounds.host_dispatch_hi_s},
  };
  for (Knob& knob : knobs) *knob.value = std::clamp(*knob.value, knob.lo, knob.hi);
  for (const Knob& knob : knobs) anchored.emplace_back(knob.value, *knob.value);
  // Coordinate search: each knob in turn moves by a factor while the loss falls, with the steps
  // shrinking over the rounds.
  double best = loss();
  for (int round = 0; round < 12; ++round) {
    const double step = round < 4 ? 1.25 : round < 8 ? 1.08 : 1.02;
    for (Knob& knob : knobs) {
      for (double factor : {step, 1 / step}) {
        while (true) {
          const double old = *knob.value;
          const double next = std::clamp(old * factor, knob.lo, knob.hi);
          if (next == old) break;
          *knob.value = next;
          const double l = loss();
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
      v.ran.push_back(
          {i, mm.required_bytes() - k.allocator_unreleasable_fraction * allocated, allocated, p.gpu.memory_bytes()});
    }
  }
  return v;
}

// The candidate with the fewest misses, each kind against its tolerated share, over the rows `use` keeps,
// drawn back to the prior (the whole reserve stays) by a log-normal penalty with the speed fit's sigma:
// runs that ran only ever say "less stays", so without a bracket among the rows (leave-one-GPU-out holds out
// the RTX 3090, whose timm brackets are all there are) nothing else would hold the share up. Of equals, the
// largest (the least memory taken as given back).
double fit_unreleasable_fraction(const MemoryVerdicts& v, const std::function<bool(std::size_t)>& use, double prior) {
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

bool fits_speed(const Measurement& m, const Prepared& p) { return m.current_throughput() && p.config.nodes == 1; }

}  // namespace detail

const FitBounds& fit_bounds() {
  static const FitBounds bounds;
  return bounds;
}

ModelConstants fit_constants(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                             const ModelConstants& prior) {
  std::vector<std::optional<detail::Prepared>> prepared;
  std::vector<const detail::Prepared*> prepared_rows;
  std::vector<detail::FitRow> rows;
  for (const Measurement& m : measurements) {
    std::string skipped;
    prepared.push_back(detail::prepare(m, catalog, skipped));
  }
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    prepared_rows.push_back(prepared[i] ? &*prepared[i] : nullptr);
    if (prepared[i] && detail::fits_speed(measurements[i], *prepared[i]))
      rows.push_back({&*prepared[i], measurements[i].value});
  }
  ModelConstants k = detail::fit_rows(rows, prior);
  k.allocator_unreleasable_fraction = detail::fit_unreleasable_fraction(
      detail::memory_verdicts(measurements, prepared_rows, prior), [](std::size_t) { return true; },
      prior.allocator_unreleasable_fraction);
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
  return lines;
}

}  // namespace gpusage::estimate
