#include "core/estimate/uncertainty.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/common/error.hpp"

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

}  // namespace

IntervalTable interval_table(const ValidationReport& report) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<double>> groups;
  std::vector<double> multi;
  IntervalTable t;
  t.method = report.cv ? fmt::format("leave-one-{}-out", to_string(*report.cv)) : "in-sample";
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!row.error || !m.current_throughput()) continue;
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
  return t;
}

std::string interval_table_json(const IntervalTable& table, const std::string& data_file) {
  auto cell_json = [](const IntervalCell& c) {
    return nlohmann::json{{"family", c.family},       {"precision", c.precision},   {"architecture", c.architecture},
                          {"rows", c.rows},           {"ratio_p10", c.ratio_p10},   {"ratio_p90", c.ratio_p90},
                          {"median_abs_error", c.median_abs_error}};
  };
  nlohmann::json cells = nlohmann::json::array();
  for (const IntervalCell& c : table.cells) cells.push_back(cell_json(c));
  nlohmann::json doc = {{"generated_by", fmt::format("gpusage validate {} --cv gpu --intervals-out FILE", data_file)},
                        {"method", table.method},
                        {"max_validated_gpus", table.max_validated_gpus},
                        {"multi_gpu", cell_json(table.multi_gpu)},
                        {"cells", cells}};
  return doc.dump(1) + "\n";
}

IntervalTable parse_interval_table(const std::string& json_text, const std::string& origin) {
  try {
    const auto doc = nlohmann::json::parse(json_text);
    auto cell = [](const nlohmann::json& j) {
      return IntervalCell{j.at("family").get<std::string>(),    j.at("precision").get<std::string>(),
                          j.at("architecture").get<std::string>(), j.at("rows").get<int>(),
                          j.at("ratio_p10").get<double>(),        j.at("ratio_p90").get<double>(),
                          j.at("median_abs_error").get<double>()};
    };
    IntervalTable t;
    t.method = doc.at("method").get<std::string>();
    t.max_validated_gpus = doc.at("max_validated_gpus").get<int>();
    t.multi_gpu = cell(doc.at("multi_gpu"));
    for (const auto& c : doc.at("cells")) t.cells.push_back(cell(c));
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not an interval table: {}", origin, e.what()));
  }
}

const IntervalTable& builtin_interval_table() {
  static const IntervalTable table = parse_interval_table(kBuiltinIntervalTable, "data/validation/intervals.json (built in)");
  return table;
}

Interval throughput_interval(const IntervalTable& table, double predicted, const std::string& family,
                             const std::string& precision, const std::string& architecture, int world_size) {
  Interval out;
  const IntervalCell* chosen = nullptr;
  if (world_size > 1 && table.multi_gpu.rows >= kMinIntervalRows) {
    chosen = &table.multi_gpu;
    out.basis = fmt::format("data-parallel runs: {} held-out runs", chosen->rows);
  } else {
    struct Level {
      std::string f, p, a;
    };
    for (const Level& level : {Level{family, precision, architecture}, Level{family, precision, "*"},
                               Level{family, "*", "*"}, Level{"*", precision, "*"}, Level{"*", "*", "*"}}) {
      const IntervalCell* c = find(table, level.f, level.p, level.a);
      if (c && c->rows >= kMinIntervalRows) {
        chosen = c;
        auto name = [](const std::string& s, const char* any) { return s == "*" ? std::string(any) : s; };
        out.basis = fmt::format("{} · {} · {}: {} held-out runs", name(c->family, "any model"),
                                name(c->precision, "any precision"), name(c->architecture, "any GPU"), c->rows);
        break;
      }
    }
  }
  if (!chosen) {
    out.low = out.high = predicted;
    out.basis = "no held-out runs";
  } else {
    out.low = predicted / chosen->ratio_p90;
    out.high = predicted / chosen->ratio_p10;
  }
  if (!covered(table, "*", "*", architecture)) {
    out.warnings.push_back(fmt::format("no validation run on a {} GPU: the interval is borrowed from other "
                                       "architectures",
                                       architecture));
  }
  if (!covered(table, "*", precision, "*")) {
    out.warnings.push_back(fmt::format("no validation run at {}: the interval is borrowed", precision));
  }
  if (!covered(table, family, "*", "*")) {
    out.warnings.push_back(fmt::format("no validation run of a {} model: the interval is borrowed", family));
  }
  if (world_size > table.max_validated_gpus) {
    out.warnings.push_back(fmt::format("no validation run with {} GPUs (the most is {}): communication is "
                                       "extrapolated",
                                       world_size, table.max_validated_gpus));
  }
  return out;
}

}  // namespace gpusage::estimate
