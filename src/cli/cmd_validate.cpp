// gpusage validate FILE.csv: how far are plan's predictions from measured training runs?
// With --cv gpu|source|model every row is predicted by constants fitted without its group.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/units.hpp"
#include "core/estimate/uncertainty.hpp"
#include "core/estimate/validate.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

namespace {

std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string summary_line(const std::string& label, const estimate::ErrorSummary& s) {
  if (s.count == 0) return fmt::format("{}: no rows", label);
  return fmt::format("{}: {} rows, median |error| {:.1f}%, p90 |error| {:.1f}%, median error {:+.1f}%", label,
                     s.count, s.median_abs_error * 100, s.p90_abs_error * 100, s.median_error * 100);
}

nlohmann::json summary_json(const estimate::ErrorSummary& s) {
  return {{"rows", s.count},
          {"median_abs_error", s.median_abs_error},
          {"p90_abs_error", s.p90_abs_error},
          {"median_error", s.median_error},
          {"ratio_p10", s.ratio_p10},
          {"ratio_p90", s.ratio_p90}};
}

nlohmann::json constants_json(const estimate::ModelConstants& k) {
  nlohmann::json out;
  for (const auto& [name, member] : estimate::fitted_scalar_constants()) out[name] = k.*member;
  return out;
}

nlohmann::json cards_json(const estimate::CardsSummary& s) {
  return {{"all", summary_json(s.all)},
          {"data_center", summary_json(s.data_center)},
          {"geforce", summary_json(s.geforce)}};
}

// One headline for all cards, then the data-center (and workstation) cards and the GeForce cards apart.
std::string cards_lines(const std::string& label, const estimate::CardsSummary& s) {
  return summary_line(label, s.all) + "\n" + summary_line("  data-center and workstation cards", s.data_center) +
         "\n" + summary_line("  GeForce RTX 30/40/50 cards", s.geforce) + "\n";
}

// "6.9% / +0.3% (983)": median |error|, median signed error and rows of one summary, for the tables.
std::string cell_text(const estimate::ErrorSummary& s) {
  if (s.count == 0) return "-";
  return fmt::format("{:.1f}% / {:+.1f}% ({})", s.median_abs_error * 100, s.median_error * 100, s.count);
}

std::string ratio_text(int hits, int rows) {
  return rows == 0 ? "no rows" : fmt::format("{} of {} ({:.1f}%)", hits, rows, 100.0 * hits / rows);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  struct State {
    std::string file;
    bool fit = false;
    std::string cv;
    bool summary_only = false;
    Format format = Format::table;
    std::string out;
    std::string intervals_out;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "validate",
      "Compare plan's predictions with measured training runs and report the error.\n"
      "FILE is CSV with columns model,gpu,precision,batch_per_gpu,metric,value (optional: num_gpus, resolution,\n"
      "seq_len, tokens (per sample computed, for unpadded or length-binned data), accumulation (micro-batches per\n"
      "optimizer step), fails_at, attention flash|eager, parallel ddp|zero1|zero2|fsdp|hsdp, offload optimizer|params|activations (+-joined), layout nhwc|nchw,\n"
      "kernels eager|fused (language models' elementwise code: Hugging Face's eager Python, or fused),\n"
      "task squad|pretrain|finetune, amp o2|autocast, checkpointing none|full|selective|every:N, gpu_memory_gb\n"
      "(the card's own, when it is a variant of the catalog GPU), software_date YYYY-MM, framework, source; the\n"
      "fine-tuning recipe as plan's options: optimizer, master_weights fp32|bf16, loss plain|plain16|chunked|fused,\n"
      "lora_rank, qlora yes|no, lora_targets attn|mlp|all, optimizer_in_backward yes|no, clip_grad_norm yes|no,\n"
      "optimizer_impl fused|foreach|loop, empty: the software's default; kbit_upcast yes|no, no: a QLoRA base not\n"
      "prepared by PEFT's prepare_model_for_kbit_training). metric:\n"
      "train_throughput (samples/s per GPU), peak_memory (bytes, as nvidia-smi counts them), peak_allocated /\n"
      "peak_reserved (torch.cuda.max_memory_allocated / max_memory_reserved) or max_batch (value = largest batch\n"
      "that ran, fails_at = the smallest that failed). task finetune rows are also summarised apart, per method\n"
      "(full, lora, qlora) and GPU class, with how many measured speeds lie inside the 80% range plan prints.\n"
      "Rows with software from before 2021-01, and data-parallel rows\n"
      "more than 10% faster per GPU than the same run on one GPU, are reported as their own groups.\n"
      "Without --cv every row is predicted with the shipped constants, which were fitted on\n"
      "data/validation/published.csv: those errors are in-sample. --cv gpu holds out one GPU at a time,\n"
      "refits on the rest and predicts it: the honest figure for a card you do not own.\n"
      "Examples:\n"
      "  gpusage validate data/validation/published.csv --cv gpu --summary\n"
      "  gpusage validate my-runs.csv --format json");
  command->add_option("file", state->file, "Measurements (CSV)")->required()->check(CLI::ExistingFile);
  command->add_option("--cv", state->cv,
                      "Leave one group out: gpu, source (the publishing repository or site) or model")
      ->check(CLI::IsMember({"gpu", "source", "model"}));
  command->add_flag("--fit", state->fit,
                    "Fit the speed constants on all current-software throughput rows and the allocator's "
                    "unreleasable share on the memory verdicts, print what moved, and validate with them "
                    "(in-sample)");
  command->add_flag("--summary", state->summary_only, "Print the summaries and the per-cell table, not every row");
  command->add_option("--intervals-out", state->intervals_out,
                      "With --cv: write the per-cell error table plan's intervals use (JSON; the shipped one "
                      "is data/validation/intervals.json)");
  add_format_option(*command, state->format, {Format::table, Format::csv, Format::json});
  command->add_option("--out", state->out, "Write the output to FILE instead of stdout");
  command->callback([state] {
    if (state->fit && !state->cv.empty()) {
      throw InputError("--fit and --cv do not go together: --cv refits for every held-out group by itself");
    }
    if (!state->intervals_out.empty() && state->cv.empty()) {
      throw InputError("--intervals-out needs --cv: intervals come from out-of-sample errors only");
    }
    const auto measurements = estimate::parse_measurements(io::read_file(state->file, ""), state->file);
    const catalog::Catalog& catalog = catalog::Catalog::active();
    estimate::Calibration calibration;
    std::vector<std::string> changes;
    estimate::ValidationReport result;
    if (!state->cv.empty()) {
      const bool tty = isatty(STDERR_FILENO);
      result = estimate::cross_validate(measurements, catalog, estimate::prior_constants(),
                                        *estimate::parse_cv_group(state->cv), [tty](int done, int total) {
                                          if (tty) std::fprintf(stderr, "\rcross-validating: %d/%d groups", done, total);
                                          if (tty && done == total) std::fprintf(stderr, "\n");
                                        });
    } else {
      if (state->fit) {
        const estimate::ModelConstants before = calibration.constants;
        calibration.constants = estimate::fit_constants(measurements, catalog, estimate::prior_constants());
        changes = estimate::describe_changes(before, calibration.constants);
      }
      result = estimate::validate(measurements, catalog, calibration);
    }
    if (!state->intervals_out.empty()) {
      emit(estimate::interval_table_json(estimate::interval_table(result), state->file), state->intervals_out);
    }
    const std::string how =
        result.cv ? fmt::format("leave-one-{}-out: {} groups, each predicted by constants fitted on the others",
                                state->cv, result.groups)
        : state->fit ? std::string("in-sample: constants fitted on these rows (--fit)")
                     : std::string("shipped constants (fitted on data/validation/published.csv: in-sample there)");

    if (state->format == Format::json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : result.rows) {
        const auto& m = r.measurement;
        nlohmann::json row = {{"line", m.line},
                              {"model", m.model},
                              {"gpu", m.gpu},
                              {"precision", m.precision},
                              {"batch_per_gpu", m.batch_per_gpu},
                              {"num_gpus", m.num_gpus},
                              {"metric", estimate::to_string(m.metric)},
                              {"measured", m.value},
                              {"predicted", r.predicted ? nlohmann::json(*r.predicted) : nlohmann::json(nullptr)},
                              {"error", r.error ? nlohmann::json(*r.error) : nlohmann::json(nullptr)},
                              {"legacy", m.legacy()},
                              {"superlinear", m.superlinear},
                              {"group", r.group.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.group)},
                              {"predicted_oom", r.predicted_oom},
                              {"skipped", r.skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.skipped)}};
        if (m.fails_at) row["fails_at"] = *m.fails_at;
        if (r.bracket_hit) row["bracket_hit"] = *r.bracket_hit;
        rows.push_back(std::move(row));
      }
      nlohmann::json cells = nlohmann::json::array();
      for (const auto& c : result.cells) {
        cells.push_back({{"family", c.cell.family},
                         {"precision", c.cell.precision},
                         {"architecture", c.cell.architecture},
                         {"cards", c.cell.cards},
                         {"throughput", summary_json(c.throughput)}});
      }
      nlohmann::json architectures = nlohmann::json::array();
      for (const auto& a : result.architectures) {
        architectures.push_back({{"architecture", a.architecture}, {"throughput", cards_json(a.throughput)}});
      }
      nlohmann::json doc = {
          {"method", how},
          {"cv", result.cv ? nlohmann::json(state->cv) : nlohmann::json(nullptr)},
          {"groups", result.groups},
          {"rows", rows},
          {"summary",
           {{"single_gpu_throughput", summary_json(result.single_gpu_throughput)},
            {"multi_gpu_throughput", summary_json(result.multi_gpu_throughput)},
            {"single_gpu_throughput_by_cards", cards_json(result.single_gpu_by_cards)},
            {"multi_gpu_throughput_by_cards", cards_json(result.multi_gpu_by_cards)},
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
               {{"rows", result.other_framework_ran_rows},
                {"predicted_oom", result.other_framework_ran_predicted_oom}}}}}}},
          {"architectures", architectures},
          {"cells", cells}};
      nlohmann::json fine_tuning_cells = nlohmann::json::array();
      for (const auto& c : result.fine_tuning_cells) {
        fine_tuning_cells.push_back({{"method", c.method},
                                     {"gpu_class", c.gpu_class},
                                     {"throughput", summary_json(c.throughput)},
                                     {"throughput_inside_80_range", c.inside_interval},
                                     {"memory", summary_json(c.memory)}});
      }
      doc["fine_tuning"] = {
          {"throughput", summary_json(result.fine_tuning_throughput)},
          {"memory", summary_json(result.fine_tuning_memory)},
          {"throughput_inside_80_range", result.fine_tuning_inside_interval},
          {"runs_that_ran",
           {{"rows", result.fine_tuning_ran_rows}, {"predicted_oom", result.fine_tuning_ran_predicted_oom}}},
          {"cells", fine_tuning_cells}};
      if (!result.cv) doc["constants"] = constants_json(calibration.constants);
      if (result.cv) {
        nlohmann::json folds = nlohmann::json::object();
        for (const auto& [group, constants] : result.fold_constants) folds[group] = constants_json(constants);
        doc["fold_constants"] = folds;
      }
      if (state->fit) doc["changes"] = changes;
      emit(doc.dump(2) + "\n", state->out);
      return;
    }
    report::Table table;
    table.columns = {{"line", ""},     {"model", "", report::Align::left}, {"gpu", "", report::Align::left},
                     {"prec", "", report::Align::left}, {"batch", ""}, {"gpus", ""},
                     {"metric", "", report::Align::left}, {"measured", ""}, {"predicted", ""}, {"error", ""},
                     {"note", "", report::Align::left}};
    int skipped = 0;
    for (const auto& r : result.rows) {
      const auto& m = r.measurement;
      if (!r.predicted) ++skipped;
      if (state->summary_only && state->format == Format::table) continue;
      const bool memory = m.metric == estimate::Metric::peak_memory || m.metric == estimate::Metric::peak_allocated ||
                          m.metric == estimate::Metric::peak_reserved;
      auto value = [&](double v) {
        if (memory) return units::format_bytes(v);
        if (m.metric == estimate::Metric::max_batch) return fmt::format("{:.0f}", v);
        return report::format_number(v, 1);
      };
      std::string measured = value(m.value);
      if (m.metric == estimate::Metric::max_batch) measured += m.fails_at ? fmt::format(" (<{})", *m.fails_at) : " (ran)";
      std::string note = m.legacy() ? "legacy software" : m.superlinear ? "faster per GPU than one GPU" : "";
      if (r.predicted_oom) note += std::string(note.empty() ? "" : "; ") + "predicted OOM";
      if (r.bracket_hit) note += std::string(note.empty() ? "" : "; ") + (*r.bracket_hit ? "in bracket" : "outside bracket");
      table.add_row({std::to_string(m.line), m.model, m.gpu, m.precision, std::to_string(m.batch_per_gpu),
                     std::to_string(m.num_gpus),
                     m.metric == estimate::Metric::peak_memory      ? "peak memory"
                     : m.metric == estimate::Metric::peak_allocated ? "allocated"
                     : m.metric == estimate::Metric::peak_reserved  ? "reserved"
                     : m.metric == estimate::Metric::max_batch      ? "max batch"
                                                                     : "samples/s",
                     measured,
                     r.predicted ? value(*r.predicted) : "skipped: " + r.skipped, r.error ? percent(*r.error) : "",
                     note});
    }
    std::string out;
    if (state->format == Format::csv) {
      emit(report::render_csv(table), state->out);
      return;
    }
    if (!state->summary_only) out = report::render_text(table, 200) + "\n";
    out += how + "\n";
    out += cards_lines("single-GPU throughput, current software (the headline)", result.single_gpu_by_cards);
    out += cards_lines("multi-GPU per-GPU throughput", result.multi_gpu_by_cards);
    out += summary_line(fmt::format("legacy software (before {}), its own group", estimate::kLegacySoftwareBefore),
                        result.legacy_throughput) + "\n";
    out += summary_line(fmt::format("data-parallel rows over {:.0f}% faster per GPU than the same run on one GPU, "
                                    "their own group",
                                    estimate::kSuperlinearTolerance * 100),
                        result.superlinear_throughput) + "\n";
    out += summary_line("peak memory, current software", result.peak_memory) + "\n";
    out += summary_line("peak allocated/reserved (torch.cuda.max_memory_*), current software",
                        result.allocator_peak_memory) + "\n";
    out += summary_line("peak memory, legacy software", result.legacy_peak_memory) + "\n";
    out += "max batch: plan's largest batch inside the measured bracket in " +
           ratio_text(result.max_batch_hits, result.max_batch_rows) + "\n";
    out += "runs that ran but are predicted not to fit: " + ratio_text(result.ran_predicted_oom, result.ran_rows) + "\n";
    // The memory model is PyTorch's: memory measured under another framework is its own group.
    out += summary_line("peak memory, TensorFlow/MXNet/PaddlePaddle runs, their own group",
                        result.other_framework_peak_memory) + "\n";
    out += "max batch, TensorFlow/MXNet/PaddlePaddle runs: inside the bracket in " +
           ratio_text(result.other_framework_max_batch_hits, result.other_framework_max_batch_rows) + "\n";
    out += "TensorFlow/MXNet/PaddlePaddle runs that ran but are predicted not to fit: " +
           ratio_text(result.other_framework_ran_predicted_oom, result.other_framework_ran_rows) + "\n";
    if (skipped) out += fmt::format("{} rows skipped (reason in the table)\n", skipped);
    if (!result.architectures.empty()) {
      report::Table architectures;
      architectures.columns = {{"architecture", "", report::Align::left},
                               {"all cards", ""},
                               {"data center", ""},
                               {"GeForce", ""}};
      for (const auto& a : result.architectures) {
        architectures.add_row({a.architecture, cell_text(a.throughput.all), cell_text(a.throughput.data_center),
                               cell_text(a.throughput.geforce)});
      }
      out += "\nsingle-GPU throughput by architecture, median |error| / median error (rows):\n" +
             report::render_text(architectures, 200);
    }
    if (!result.cells.empty()) {
      report::Table cells;
      cells.columns = {{"family", "", report::Align::left}, {"prec", "", report::Align::left},
                       {"architecture", "", report::Align::left}, {"cards", "", report::Align::left},
                       {"rows", ""}, {"median |err|", ""}, {"p90 |err|", ""}, {"median err", ""}};
      for (const auto& c : result.cells) {
        cells.add_row({c.cell.family, c.cell.precision, c.cell.architecture, c.cell.cards,
                       std::to_string(c.throughput.count),
                       fmt::format("{:.1f}%", c.throughput.median_abs_error * 100),
                       fmt::format("{:.1f}%", c.throughput.p90_abs_error * 100), percent(c.throughput.median_error)});
      }
      out += "\nsingle-GPU throughput by cell (model family x precision x GPU architecture x cards):\n" +
             report::render_text(cells, 200);
    }
    if (result.fine_tuning_ran_rows > 0) {
      out += "\nLLM fine-tuning rows (task finetune), every GPU count:\n";
      out += summary_line("  throughput per GPU", result.fine_tuning_throughput) + "\n";
      out += "  throughput inside plan's printed 80% range: " +
             ratio_text(result.fine_tuning_inside_interval, result.fine_tuning_throughput.count) + "\n";
      out += summary_line("  peak memory (nvidia-smi, allocated or reserved, as measured)", result.fine_tuning_memory) +
             "\n";
      out += "  runs that ran but are predicted not to fit: " +
             ratio_text(result.fine_tuning_ran_predicted_oom, result.fine_tuning_ran_rows) + "\n";
      report::Table cells;
      cells.columns = {{"method", "", report::Align::left}, {"gpu class", "", report::Align::left},
                       {"speed rows", ""}, {"speed median |err|", ""}, {"speed median err", ""},
                       {"inside 80% range", ""}, {"memory rows", ""}, {"memory median |err|", ""},
                       {"memory median err", ""}};
      for (const auto& c : result.fine_tuning_cells) {
        auto cell = [](const estimate::ErrorSummary& e, bool signed_error) {
          if (e.count == 0) return std::string("-");
          return signed_error ? percent(e.median_error) : fmt::format("{:.1f}%", e.median_abs_error * 100);
        };
        cells.add_row({c.method, c.gpu_class, std::to_string(c.throughput.count), cell(c.throughput, false),
                       cell(c.throughput, true),
                       c.throughput.count ? std::to_string(c.inside_interval) : std::string("-"),
                       std::to_string(c.memory.count), cell(c.memory, false), cell(c.memory, true)});
      }
      out += report::render_text(cells, 200);
    }
    if (state->fit) {
      out += "\nconstants the fit moved:\n";
      if (changes.empty()) out += "  none by more than 0.5%\n";
      for (const auto& line : changes) out += "  " + line + "\n";
    }
    emit(out, state->out);
  });
}

}  // namespace gpusage::cli
