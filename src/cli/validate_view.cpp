#include "cli/validate_view.hpp"

#include <fmt/format.h>

#include "core/common/i18n.hpp"
#include "core/common/units.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

namespace {

using nlohmann::json;

std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string summary_line(const std::string& label, const estimate::ErrorSummary& s) {
  if (s.count == 0) return i18n::trf("{}: no rows", label);
  return i18n::trf("{}: {} rows, median |error| {:.1f}%, p90 |error| {:.1f}%, median error {:+.1f}%", label, s.count,
                   s.median_abs_error * 100, s.p90_abs_error * 100, s.median_error * 100);
}

json summary_json(const estimate::ErrorSummary& s) {
  return {{"rows", s.count},
          {"median_abs_error", s.median_abs_error},
          {"p90_abs_error", s.p90_abs_error},
          {"median_error", s.median_error},
          {"ratio_p10", s.ratio_p10},
          {"ratio_p90", s.ratio_p90}};
}

json constants_json(const estimate::ModelConstants& k) {
  json out;
  for (const auto& [name, member] : estimate::fitted_scalar_constants()) out[name] = k.*member;
  return out;
}

json cards_json(const estimate::CardsSummary& s) {
  return {
      {"all", summary_json(s.all)}, {"data_center", summary_json(s.data_center)}, {"geforce", summary_json(s.geforce)}};
}

// One headline for all cards, then the data-center (and workstation) cards and the GeForce cards apart.
std::string cards_lines(const std::string& label, const estimate::CardsSummary& s) {
  return summary_line(label, s.all) + "\n" +
         summary_line(i18n::tr("  data-center and workstation cards"), s.data_center) + "\n" +
         summary_line(i18n::tr("  GeForce RTX 30/40/50 cards"), s.geforce) + "\n";
}

// "6.9% / +0.3% (983)": median |error|, median signed error and rows of one summary, for the tables.
std::string cell_text(const estimate::ErrorSummary& s) {
  if (s.count == 0) return "-";
  return fmt::format("{:.1f}% / {:+.1f}% ({})", s.median_abs_error * 100, s.median_error * 100, s.count);
}

std::string ratio_text(int hits, int rows) {
  return rows == 0 ? i18n::tr("no rows") : i18n::trf("{} of {} ({:.1f}%)", hits, rows, 100.0 * hits / rows);
}

json rows_json(const estimate::ValidationReport& result) {
  json rows = json::array();
  for (const auto& r : result.rows) {
    const auto& m = r.measurement;
    json row = {{"line", m.line},
                {"model", m.model},
                {"gpu", m.gpu},
                {"precision", m.precision},
                {"batch_per_gpu", m.batch_per_gpu},
                {"num_gpus", m.num_gpus},
                {"metric", estimate::to_string(m.metric)},
                {"measured", m.value},
                {"predicted", r.predicted ? json(*r.predicted) : json(nullptr)},
                {"error", r.error ? json(*r.error) : json(nullptr)},
                {"legacy", m.legacy()},
                {"superlinear", m.superlinear},
                {"group", r.group.empty() ? json(nullptr) : json(r.group)},
                {"predicted_oom", r.predicted_oom},
                {"skipped", r.skipped.empty() ? json(nullptr) : json(r.skipped)}};
    if (m.fails_at) row["fails_at"] = *m.fails_at;
    if (r.bracket_hit) row["bracket_hit"] = *r.bracket_hit;
    rows.push_back(std::move(row));
  }
  return rows;
}

// The multi-GPU language-model rows by parallelism, {"fsdp": {...}, ...}.
json multi_gpu_llm_json(const estimate::ValidationReport& result) {
  json by_parallel = json::object();
  for (const auto& [parallel, summary] : result.multi_gpu_llm_by_parallel)
    by_parallel[parallel] = summary_json(summary);
  return by_parallel;
}

json summaries_json(const estimate::ValidationReport& result) {
  return {
      {"single_gpu_throughput", summary_json(result.single_gpu_throughput)},
      {"multi_gpu_throughput", summary_json(result.multi_gpu_throughput)},
      {"single_gpu_throughput_by_cards", cards_json(result.single_gpu_by_cards)},
      {"multi_gpu_throughput_by_cards", cards_json(result.multi_gpu_by_cards)},
      {"multi_gpu_llm_throughput_by_parallel", multi_gpu_llm_json(result)},
      {"legacy_throughput", summary_json(result.legacy_throughput)},
      {"superlinear_throughput", summary_json(result.superlinear_throughput)},
      {"peak_memory", summary_json(result.peak_memory)},
      {"allocator_peak_memory", summary_json(result.allocator_peak_memory)},
      {"legacy_peak_memory", summary_json(result.legacy_peak_memory)},
      {"max_batch", {{"rows", result.max_batch_rows}, {"in_bracket", result.max_batch_hits}}},
      {"runs_that_ran", {{"rows", result.ran_rows}, {"predicted_oom", result.ran_predicted_oom}}},
      {"other_framework_memory",
       {{"peak_memory", summary_json(result.other_framework_peak_memory)},
        {"max_batch",
         {{"rows", result.other_framework_max_batch_rows}, {"in_bracket", result.other_framework_max_batch_hits}}},
        {"runs_that_ran",
         {{"rows", result.other_framework_ran_rows}, {"predicted_oom", result.other_framework_ran_predicted_oom}}}}}};
}

json fine_tuning_json(const estimate::ValidationReport& result) {
  json cells = json::array();
  for (const auto& c : result.fine_tuning_cells) {
    cells.push_back({{"method", c.method},
                     {"gpu_class", c.gpu_class},
                     {"throughput", summary_json(c.throughput)},
                     {"throughput_inside_80_range", c.inside_interval},
                     {"memory", summary_json(c.memory)}});
  }
  return {{"throughput", summary_json(result.fine_tuning_throughput)},
          {"memory", summary_json(result.fine_tuning_memory)},
          {"throughput_inside_80_range", result.fine_tuning_inside_interval},
          {"runs_that_ran",
           {{"rows", result.fine_tuning_ran_rows}, {"predicted_oom", result.fine_tuning_ran_predicted_oom}}},
          {"cells", cells}};
}

bool is_memory(estimate::Metric metric) {
  return metric == estimate::Metric::peak_memory || metric == estimate::Metric::peak_allocated ||
         metric == estimate::Metric::peak_reserved;
}

const char* metric_text(estimate::Metric metric) {
  switch (metric) {
    case estimate::Metric::peak_memory: return "peak memory";
    case estimate::Metric::peak_allocated: return "allocated";
    case estimate::Metric::peak_reserved: return "reserved";
    case estimate::Metric::max_batch: return "max batch";
    case estimate::Metric::train_throughput: break;
  }
  return "samples/s";
}

// A measured or predicted figure in the row's metric: bytes, a batch, or samples/s.
std::string value_text(const estimate::Measurement& m, double v) {
  if (is_memory(m.metric)) return units::format_bytes(v);
  if (m.metric == estimate::Metric::max_batch) return fmt::format("{:.0f}", v);
  return report::format_number(v, 1);
}

report::Table rows_table(const estimate::ValidationReport& result) {
  report::Table table;
  table.columns = {{"line", ""},
                   {"model", "", report::Align::left},
                   {"gpu", "", report::Align::left},
                   {"prec", "", report::Align::left},
                   {"batch", ""},
                   {"gpus", ""},
                   {"metric", "", report::Align::left},
                   {"measured", ""},
                   {"predicted", ""},
                   {"error", ""},
                   {"note", "", report::Align::left}};
  for (const auto& r : result.rows) {
    const auto& m = r.measurement;
    std::string measured = value_text(m, m.value);
    if (m.metric == estimate::Metric::max_batch) measured += m.fails_at ? fmt::format(" (<{})", *m.fails_at) : " (ran)";
    std::string note = m.legacy() ? "legacy software" : m.superlinear ? "faster per GPU than one GPU" : "";
    if (r.predicted_oom) note += std::string(note.empty() ? "" : "; ") + "predicted OOM";
    if (r.bracket_hit)
      note += std::string(note.empty() ? "" : "; ") + (*r.bracket_hit ? "in bracket" : "outside bracket");
    table.add_row({std::to_string(m.line), m.model, m.gpu, m.precision, std::to_string(m.batch_per_gpu),
                   std::to_string(m.num_gpus), metric_text(m.metric), measured,
                   r.predicted ? value_text(m, *r.predicted) : "skipped: " + r.skipped,
                   r.error ? percent(*r.error) : "", note});
  }
  return table;
}

// The headline summaries, every group apart, and how many rows were skipped.
std::string summary_lines(const estimate::ValidationReport& result) {
  std::string out;
  out += cards_lines(i18n::tr("single-GPU throughput, current software (the headline)"), result.single_gpu_by_cards);
  out += cards_lines(i18n::tr("multi-GPU per-GPU throughput"), result.multi_gpu_by_cards);
  for (const auto& [parallel, summary] : result.multi_gpu_llm_by_parallel) {
    out += summary_line(i18n::trf("  multi-GPU language models, --parallel {}", parallel), summary) + "\n";
  }
  out += summary_line(i18n::trf("legacy software (before {}), its own group", estimate::kLegacySoftwareBefore),
                      result.legacy_throughput) +
         "\n";
  out += summary_line(i18n::trf("data-parallel rows over {:.0f}% faster per GPU than the same run on one GPU, "
                                "their own group",
                                estimate::kSuperlinearTolerance * 100),
                      result.superlinear_throughput) +
         "\n";
  out += summary_line(i18n::tr("peak memory, current software"), result.peak_memory) + "\n";
  out += summary_line(i18n::tr("peak allocated/reserved (torch.cuda.max_memory_*), current software"),
                      result.allocator_peak_memory) +
         "\n";
  out += summary_line(i18n::tr("peak memory, legacy software"), result.legacy_peak_memory) + "\n";
  out += i18n::tr("max batch: plan's largest batch inside the measured bracket in ") +
         ratio_text(result.max_batch_hits, result.max_batch_rows) + "\n";
  out += i18n::tr("runs that ran but are predicted not to fit: ") +
         ratio_text(result.ran_predicted_oom, result.ran_rows) + "\n";
  // The memory model is PyTorch's: memory measured under another framework is its own group.
  out += summary_line(i18n::tr("peak memory, TensorFlow/MXNet/PaddlePaddle runs, their own group"),
                      result.other_framework_peak_memory) +
         "\n";
  out += i18n::tr("max batch, TensorFlow/MXNet/PaddlePaddle runs: inside the bracket in ") +
         ratio_text(result.other_framework_max_batch_hits, result.other_framework_max_batch_rows) + "\n";
  out += i18n::tr("TensorFlow/MXNet/PaddlePaddle runs that ran but are predicted not to fit: ") +
         ratio_text(result.other_framework_ran_predicted_oom, result.other_framework_ran_rows) + "\n";
  int skipped = 0;
  for (const auto& r : result.rows) skipped += r.predicted ? 0 : 1;
  if (skipped) out += i18n::trf("{} rows skipped (reason in the table)\n", skipped);
  return out;
}

std::string architectures_text(const std::vector<estimate::ArchitectureSummary>& summaries, const std::string& title) {
  if (summaries.empty()) return "";
  report::Table architectures;
  architectures.columns = {{i18n::tr("architecture"), "", report::Align::left},
                           {i18n::tr("all cards"), ""},
                           {i18n::tr("data center"), ""},
                           {"GeForce", ""}};
  for (const auto& a : summaries) {
    architectures.add_row({a.architecture, cell_text(a.throughput.all), cell_text(a.throughput.data_center),
                           cell_text(a.throughput.geforce)});
  }
  return "\n" + title + i18n::tr(", median |error| / median error (rows):\n") + report::render_text(architectures, 200);
}

std::string cells_text(const estimate::ValidationReport& result) {
  if (result.cells.empty()) return "";
  report::Table cells;
  cells.columns = {{i18n::tr("family"), "", report::Align::left},
                   {i18n::tr("prec"), "", report::Align::left},
                   {i18n::tr("architecture"), "", report::Align::left},
                   {i18n::tr("cards"), "", report::Align::left},
                   {i18n::tr("rows"), ""},
                   {i18n::tr("median |err|"), ""},
                   {i18n::tr("p90 |err|"), ""},
                   {i18n::tr("median err"), ""}};
  for (const auto& c : result.cells) {
    cells.add_row({c.cell.family, c.cell.precision, c.cell.architecture, c.cell.cards,
                   std::to_string(c.throughput.count), fmt::format("{:.1f}%", c.throughput.median_abs_error * 100),
                   fmt::format("{:.1f}%", c.throughput.p90_abs_error * 100), percent(c.throughput.median_error)});
  }
  return i18n::tr("\nsingle-GPU throughput by cell (model family x precision x GPU architecture x cards):\n") +
         report::render_text(cells, 200);
}

std::string fine_tuning_text(const estimate::ValidationReport& result) {
  if (result.fine_tuning_ran_rows <= 0) return "";
  std::string out = i18n::tr("\nLLM fine-tuning rows (task finetune), every GPU count:\n");
  out += summary_line(i18n::tr("  throughput per GPU"), result.fine_tuning_throughput) + "\n";
  out += i18n::tr("  throughput inside plan's printed 80% range: ") +
         ratio_text(result.fine_tuning_inside_interval, result.fine_tuning_throughput.count) + "\n";
  out += summary_line(i18n::tr("  peak memory (nvidia-smi, allocated or reserved, as measured)"),
                      result.fine_tuning_memory) +
         "\n";
  out += i18n::tr("  runs that ran but are predicted not to fit: ") +
         ratio_text(result.fine_tuning_ran_predicted_oom, result.fine_tuning_ran_rows) + "\n";
  report::Table cells;
  cells.columns = {{i18n::tr("method"), "", report::Align::left},
                   {i18n::tr("gpu class"), "", report::Align::left},
                   {i18n::tr("speed rows"), ""},
                   {i18n::tr("speed median |err|"), ""},
                   {i18n::tr("speed median err"), ""},
                   {i18n::tr("inside 80% range"), ""},
                   {i18n::tr("memory rows"), ""},
                   {i18n::tr("memory median |err|"), ""},
                   {i18n::tr("memory median err"), ""}};
  auto cell = [](const estimate::ErrorSummary& e, bool signed_error) {
    if (e.count == 0) return std::string("-");
    return signed_error ? percent(e.median_error) : fmt::format("{:.1f}%", e.median_abs_error * 100);
  };
  for (const auto& c : result.fine_tuning_cells) {
    cells.add_row({c.method, c.gpu_class, std::to_string(c.throughput.count), cell(c.throughput, false),
                   cell(c.throughput, true), c.throughput.count ? std::to_string(c.inside_interval) : std::string("-"),
                   std::to_string(c.memory.count), cell(c.memory, false), cell(c.memory, true)});
  }
  return out + report::render_text(cells, 200);
}

// The language-model throughput rows by sequence-length band (issue 56), shortest first.
json sequence_bands_json(const estimate::ValidationReport& result) {
  json bands = json::array();
  for (const auto& b : result.llm_sequence_bands) {
    bands.push_back({{"band", b.band}, {"throughput", summary_json(b.throughput)}});
  }
  return bands;
}

std::string sequence_bands_text(const estimate::ValidationReport& result) {
  if (result.llm_sequence_bands.empty()) return "";
  std::string out = i18n::tr(
      "\nlanguage-model throughput by tokens per sample (current software, every GPU count, fine-tuning too):\n");
  for (const auto& b : result.llm_sequence_bands) out += summary_line("  " + b.band, b.throughput) + "\n";
  return out;
}

}  // namespace

json validate_json(const estimate::ValidationReport& result, const ValidateMethod& method) {
  json cells = json::array();
  for (const auto& c : result.cells) {
    cells.push_back({{"family", c.cell.family},
                     {"precision", c.cell.precision},
                     {"architecture", c.cell.architecture},
                     {"cards", c.cell.cards},
                     {"throughput", summary_json(c.throughput)}});
  }
  auto architectures_json = [](const std::vector<estimate::ArchitectureSummary>& summaries) {
    json out = json::array();
    for (const auto& a : summaries) {
      out.push_back({{"architecture", a.architecture}, {"throughput", cards_json(a.throughput)}});
    }
    return out;
  };
  json doc = {{"method", method.text},
              {"cv", result.cv ? json(method.cv) : json(nullptr)},
              {"groups", result.groups},
              {"rows", rows_json(result)},
              {"summary", summaries_json(result)},
              {"architectures", architectures_json(result.architectures)},
              {"legacy_architectures", architectures_json(result.legacy_architectures)},
              {"cells", cells}};
  doc["fine_tuning"] = fine_tuning_json(result);
  doc["llm_sequence_bands"] = sequence_bands_json(result);
  if (!result.cv) doc["constants"] = constants_json(method.constants);
  if (result.cv) {
    json folds = json::object();
    for (const auto& [group, constants] : result.fold_constants) folds[group] = constants_json(constants);
    doc["fold_constants"] = folds;
  }
  if (method.fit) doc["changes"] = method.changes;
  return doc;
}

std::string validate_csv(const estimate::ValidationReport& result) { return report::render_csv(rows_table(result)); }

std::string validate_text(const estimate::ValidationReport& result, const ValidateMethod& method, bool summary_only) {
  std::string out;
  if (!summary_only) out = report::render_text(rows_table(result), 200) + "\n";
  out += method.text + "\n";
  out += summary_lines(result);
  out += architectures_text(result.architectures, i18n::tr("single-GPU throughput by architecture"));
  out += architectures_text(
      result.legacy_architectures,
      i18n::tr("legacy software (before 2021-01), its own group: single-GPU throughput by architecture"));
  out += cells_text(result);
  out += fine_tuning_text(result);
  out += sequence_bands_text(result);
  if (method.fit) {
    out += i18n::tr("\nconstants the fit moved:\n");
    if (method.changes.empty()) out += i18n::tr("  none by more than 0.5%\n");
    for (const auto& line : method.changes) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace gpusage::cli
