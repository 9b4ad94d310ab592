#include "core/estimate/uncertainty.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/stats.hpp"

namespace gpusage::estimate {

extern const char* const kBuiltinIntervalTable;  // generated from data/validation/intervals.json

namespace {

IntervalCell cell_from(const std::string& family, const std::string& precision, const std::string& architecture,
                       const std::vector<double>& errors) {
  const ErrorSummary s = summarize(errors);
  return IntervalCell{family, precision, architecture, s.count, s.ratio_p10, s.ratio_p90, s.median_abs_error};
}

const IntervalCell* find(const IntervalTable& t, const std::string& f, const std::string& p, const std::string& a) {
  for (const IntervalCell& c : t.cells) {
    if (c.family == f && c.precision == p && c.architecture == a) return &c;
  }
  return nullptr;
}

bool covered(const IntervalTable& t, const std::string& f, const std::string& p, const std::string& a) {
  for (const IntervalCell& c : t.cells) {
    if ((f == "*" || c.family == f) && (p == "*" || c.precision == p) && (a == "*" || c.architecture == a) &&
        c.rows > 0) {
      return true;
    }
  }
  return false;
}

// The q-quantile of values drawn with the given weights (summing to 1): the smallest value whose cumulative
// weight reaches q (the inverse of the weighted distribution function).
double weighted_quantile(std::vector<std::pair<double, double>> value_weights, double q) {
  std::sort(value_weights.begin(), value_weights.end());
  double cumulative = 0;
  for (const auto& [value, weight] : value_weights) {
    cumulative += weight;
    if (cumulative >= q - 1e-12) return value;
  }
  return value_weights.back().first;
}

}  // namespace

double source_spread_widening(int sources) {
  if (sources < 2) return 1;
  // Student's t, 90th percentile, by degrees of freedom 1..30 (any statistics table); z(0.9) beyond.
  constexpr double kT90[] = {3.078, 1.886, 1.638, 1.533, 1.476, 1.440, 1.415, 1.397, 1.383, 1.372,
                             1.363, 1.356, 1.350, 1.345, 1.341, 1.337, 1.333, 1.330, 1.328, 1.325,
                             1.323, 1.321, 1.319, 1.318, 1.316, 1.315, 1.314, 1.313, 1.311, 1.310};
  constexpr double kZ90 = 1.2816;
  const int df = sources - 1;
  const double t = df <= 30 ? kT90[df - 1] : kZ90;
  return t * std::sqrt(1 + 1.0 / sources) / kZ90;
}

IntervalCell fine_tuning_cell(const std::string& method, const ErrorsBySource& errors) {
  std::vector<double> biases, all;
  std::vector<std::vector<double>> scatter;  // per source: each run's log ratio less its source's median
  for (const auto& [source, source_errors] : errors) {
    if (source_errors.empty()) continue;
    std::vector<double> logs;
    for (double e : source_errors) logs.push_back(std::log1p(e));
    const double bias = stats::median(logs);
    biases.push_back(bias);
    scatter.emplace_back();
    for (double l : logs) scatter.back().push_back(l - bias);
    all.insert(all.end(), source_errors.begin(), source_errors.end());
  }
  IntervalCell cell = cell_from(method, "*", "*", all);
  if (all.empty()) return cell;
  // A few sources' biases understate where the next source's falls (source_spread_widening).
  const double center = stats::median(biases);
  const double widening = source_spread_widening(static_cast<int>(biases.size()));
  for (double& b : biases) b = center + (b - center) * widening;
  // A new source draws a bias (each source's equally likely) and a run's scatter (each source's scatter
  // equally likely, then each of its runs): a source with many runs weighs no more than one with few.
  const double sources = static_cast<double>(biases.size());
  std::vector<std::pair<double, double>> pairs;
  for (double b : biases) {
    for (const auto& runs : scatter) {
      for (double r : runs) pairs.emplace_back(b + r, 1.0 / (sources * sources * static_cast<double>(runs.size())));
    }
  }
  cell.ratio_p10 = std::exp(weighted_quantile(pairs, 0.1));
  cell.ratio_p90 = std::exp(weighted_quantile(pairs, 0.9));
  return cell;
}

std::map<std::string, ErrorsBySource> fine_tuning_speed_errors(const ValidationReport& report) {
  std::map<std::string, ErrorsBySource> errors;
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (row.error && m.fine_tuning() && !m.legacy() && m.metric == Metric::train_throughput) {
      errors[m.method()][cv_group_of(m, CvGroup::source)].push_back(*row.error);
    }
  }
  return errors;
}

std::string fine_tuning_method(const TrainingConfig& config, bool causal_lm) {
  if (config.qlora) return "qlora";
  if (config.lora_rank) return "lora";
  return causal_lm ? "full" : "";
}

IntervalTable interval_table(const ValidationReport& report) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<double>> groups;
  std::vector<double> multi;
  IntervalTable t;
  t.method = report.cv ? fmt::format("leave-one-{}-out", to_string(*report.cv)) : "in-sample";
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!row.error || !m.current_throughput()) continue;  // fine-tuning rows are not current_throughput
    if (m.num_gpus > 1) {
      multi.push_back(*row.error);
      t.max_validated_gpus = std::max(t.max_validated_gpus, m.num_gpus);
      continue;
    }
    const std::string f = model_family(m.model), p = m.precision, a = row.architecture;
    for (const Key& key : {Key{f, p, a}, Key{f, p, "*"}, Key{f, "*", "*"}, Key{"*", p, "*"}, Key{"*", "*", "*"}}) {
      groups[key].push_back(*row.error);
    }
  }
  for (const auto& [key, errors] : groups) {
    t.cells.push_back(cell_from(std::get<0>(key), std::get<1>(key), std::get<2>(key), errors));
  }
  t.multi_gpu = cell_from("*", "*", "*", multi);
  for (const auto& [method, errors] : fine_tuning_speed_errors(report)) {
    t.fine_tuning.push_back(fine_tuning_cell(method, errors));
  }
  return t;
}

std::string interval_table_json(const IntervalTable& table, const std::string& data_file) {
  auto cell_json = [](const IntervalCell& c) {
    return nlohmann::json{{"family", c.family},
                          {"precision", c.precision},
                          {"architecture", c.architecture},
                          {"rows", c.rows},
                          {"ratio_p10", c.ratio_p10},
                          {"ratio_p90", c.ratio_p90},
                          {"median_abs_error", c.median_abs_error}};
  };
  nlohmann::json cells = nlohmann::json::array(), fine_tuning = nlohmann::json::array();
  for (const IntervalCell& c : table.cells) cells.push_back(cell_json(c));
  for (const IntervalCell& c : table.fine_tuning) fine_tuning.push_back(cell_json(c));
  nlohmann::json doc = {{"generated_by", fmt::format("gpusage validate {} --cv gpu --intervals-out FILE", data_file)},
                        {"method", table.method},
                        {"max_validated_gpus", table.max_validated_gpus},
                        {"multi_gpu", cell_json(table.multi_gpu)},
                        {"fine_tuning", fine_tuning},
                        {"cells", cells}};
  return doc.dump(1) + "\n";
}

IntervalTable parse_interval_table(const std::string& json_text, const std::string& origin) {
  try {
    const auto doc = nlohmann::json::parse(json_text);
    auto cell = [](const nlohmann::json& j) {
      return IntervalCell{j.at("family").get<std::string>(),       j.at("precision").get<std::string>(),
                          j.at("architecture").get<std::string>(), j.at("rows").get<int>(),
                          j.at("ratio_p10").get<double>(),         j.at("ratio_p90").get<double>(),
                          j.at("median_abs_error").get<double>()};
    };
    IntervalTable t;
    t.method = doc.at("method").get<std::string>();
    t.max_validated_gpus = doc.at("max_validated_gpus").get<int>();
    t.multi_gpu = cell(doc.at("multi_gpu"));
    for (const auto& c : doc.at("cells")) t.cells.push_back(cell(c));
    // Tables written before fine-tuning had cells of their own have none.
    for (const auto& c : doc.value("fine_tuning", nlohmann::json::array())) t.fine_tuning.push_back(cell(c));
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not an interval table: {}", origin, e.what()));
  }
}

const IntervalTable& builtin_interval_table() {
  static const IntervalTable table =
      parse_interval_table(kBuiltinIntervalTable, "data/validation/intervals.json (built in)");
  return table;
}

Interval interval_from_cell(const IntervalCell& cell, double predicted, std::string basis) {
  Interval out;
  // Where the cell's held-out errors all lean one way (the model over-predicted 90% of its runs, or
  // under-predicted them), [predicted / p90, predicted / p10] lies to one side of the prediction, and every
  // figure derived from it (a wall time, a bill) printed its estimate outside its own range ("19.2 (19.3-25.2)").
  // The range is stretched to the prediction instead: it still holds at least the 80% of the runs it held.
  out.low = std::min(predicted / cell.ratio_p90, predicted);
  out.high = std::max(predicted / cell.ratio_p10, predicted);
  out.basis = std::move(basis);
  return out;
}

Interval throughput_interval(const IntervalTable& table, double predicted, const std::string& family,
                             const std::string& precision, const std::string& architecture, int world_size,
                             const std::string& fine_tuning, const IntervalCell* method_cell) {
  Interval out;
  const IntervalCell* chosen = nullptr;
  if (!method_cell && !fine_tuning.empty()) {
    const auto found = std::find_if(table.fine_tuning.begin(), table.fine_tuning.end(),
                                    [&](const IntervalCell& c) { return c.family == fine_tuning; });
    if (found != table.fine_tuning.end()) method_cell = &*found;
  }
  const IntervalCell* method = method_cell && method_cell->rows >= kMinIntervalRows ? method_cell : nullptr;
  const bool full = fine_tuning == "full";
  const auto method_basis = [&] {
    const std::string name = fine_tuning == "qlora"  ? std::string("QLoRA")
                             : fine_tuning == "lora" ? std::string("LoRA")
                                                     : i18n::tr("full");
    return i18n::trf("{} fine-tuning: {} held-out runs", name, method->rows);
  };
  bool any_model = false;  // the cell chosen below pools every model (a "*" family)
  if (method && !full) {
    chosen = method;
    out.basis = method_basis();
  } else if (world_size > 1 && table.multi_gpu.rows >= kMinIntervalRows) {
    chosen = &table.multi_gpu;
    out.basis = i18n::trf("data-parallel runs: {} held-out runs", chosen->rows);
  } else {
    struct Level {
      std::string f, p, a;
    };
    for (const Level& level : {Level{family, precision, architecture}, Level{family, precision, "*"},
                               Level{family, "*", "*"}, Level{"*", precision, "*"}, Level{"*", "*", "*"}}) {
      const IntervalCell* c = find(table, level.f, level.p, level.a);
      if (c && c->rows >= kMinIntervalRows) {
        chosen = c;
        any_model = c->family == "*";
        auto name = [](const std::string& s, const std::string& any) { return s == "*" ? any : s; };
        out.basis = i18n::trf("{} · {} · {}: {} held-out runs", name(c->family, i18n::tr("any model")),
                              name(c->precision, i18n::tr("any precision")), name(c->architecture, i18n::tr("any GPU")),
                              c->rows);
        break;
      }
    }
  }
  // A full-parameter LLM plan may be a full fine-tune or pre-training: the full fine-tuning runs' range joins
  // the family's (or the data-parallel runs') so that it holds either, and replaces a range borrowed from
  // other models.
  if (full && method && (!chosen || any_model)) {
    chosen = method;
    out.basis = method_basis();
  }
  if (!chosen) {
    out.low = out.high = predicted;
    out.basis = i18n::tr("no held-out runs");
  } else if (full && method && chosen != method) {
    const Interval own = interval_from_cell(*chosen, predicted, {});
    const Interval fine = interval_from_cell(*method, predicted, {});
    out.low = std::min(own.low, fine.low);
    out.high = std::max(own.high, fine.high);
    out.basis = i18n::trf("{} and {}", out.basis, method_basis());
  } else {
    out = interval_from_cell(*chosen, predicted, out.basis);
  }
  if (!covered(table, "*", "*", architecture)) {
    out.warnings.push_back(
        i18n::trf("no validation run on a {} GPU: the interval is borrowed from other "
                  "architectures",
                  architecture));
  }
  if (!covered(table, "*", precision, "*")) {
    out.warnings.push_back(i18n::trf("no validation run at {}: the interval is borrowed", precision));
  }
  // A method's cell pools every model the fine-tuning rows hold: the model family does not choose it.
  const bool from_fine_tuning = method && (chosen == method || full);
  if (!from_fine_tuning && !covered(table, family, "*", "*")) {
    out.warnings.push_back(i18n::trf("no validation run of a {} model: the interval is borrowed", family));
  }
  if (world_size > table.max_validated_gpus) {
    out.warnings.push_back(
        i18n::trf("no validation run with {} GPUs (the most is {}): communication is "
                  "extrapolated",
                  world_size, table.max_validated_gpus));
  }
  return out;
}

}  // namespace gpusage::estimate
