// gpusage validate FILE.csv: how far are plan's predictions from measured training runs?
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/estimate/validate.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

namespace {

using estimate::Metric;

std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string summary_line(const char* label, const estimate::ErrorSummary& s) {
  if (s.count == 0) return fmt::format("{}: no rows", label);
  return fmt::format("{}: {} rows, median |error| {:.1f}%, p90 |error| {:.1f}%", label, s.count,
                     s.median_abs_error * 100, s.p90_abs_error * 100);
}

nlohmann::json summary_json(const estimate::ErrorSummary& s) {
  return {{"rows", s.count}, {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error}};
}

nlohmann::json constants_json(const estimate::ModelConstants& k) {
  return {{"conv_tensor_efficiency", k.conv_tensor_efficiency},
          {"matmul_tensor_efficiency", k.matmul_tensor_efficiency},
          {"conv_fp32_efficiency", k.conv_fp32_efficiency},
          {"matmul_fp32_efficiency", k.matmul_fp32_efficiency},
          {"attention_relative_efficiency", k.attention_relative_efficiency},
          {"memory_efficiency", k.memory_efficiency},
          {"kernel_fixed_s", k.kernel_fixed_s},
          {"host_dispatch_s", k.host_dispatch_s},
          {"depthwise_conv_relative_efficiency", k.depthwise_conv_relative_efficiency},
          {"architecture_compute_factor", k.architecture_compute_factor}};
}

}  // namespace

void add_validate_command(CLI::App& app) {
  struct State {
    std::string file;
    bool fit = false;
    bool holdout_only = false;
    Format format = Format::table;
    std::string out;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "validate",
      "Compare plan's predictions with measured training runs and report the error.\n"
      "FILE is CSV with columns model,gpu,precision,batch_per_gpu,metric,value (optional num_gpus, resolution,\n"
      "seq_len, source); metric is train_throughput (samples/s per GPU) or peak_memory (bytes).\n"
      "Rows are split deterministically: two thirds calibrate (--fit), one third is held out.\n"
      "Example: gpusage validate data/validation/published.csv");
  command->add_option("file", state->file, "Measurements (CSV)")->required()->check(CLI::ExistingFile);
  command->add_flag("--fit", state->fit, "Fit the speed constants on the calibration rows, then validate with them");
  command->add_flag("--holdout", state->holdout_only, "List only the held-out rows");
  add_format_option(*command, state->format, {Format::table, Format::csv, Format::json});
  command->add_option("--out", state->out, "Write the output to FILE instead of stdout");
  command->callback([state] {
    std::ifstream in(state->file, std::ios::binary);
    if (!in) throw InputError(fmt::format("cannot read '{}'", state->file));
    std::stringstream text;
    text << in.rdbuf();
    const auto measurements = estimate::parse_measurements(text.str(), state->file);
    const catalog::Catalog& catalog = catalog::Catalog::active();
    estimate::Calibration calibration;
    if (state->fit) calibration.constants = estimate::fit_constants(measurements, catalog, calibration.constants);
    const auto result = estimate::validate(measurements, catalog, calibration);

    if (state->format == Format::json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : result.rows) {
        const auto& m = r.measurement;
        rows.push_back({{"line", m.line},
                        {"model", m.model},
                        {"gpu", m.gpu},
                        {"precision", m.precision},
                        {"batch_per_gpu", m.batch_per_gpu},
                        {"metric", m.metric == Metric::train_throughput ? "train_throughput" : "peak_memory"},
                        {"measured", m.value},
                        {"predicted", r.predicted ? nlohmann::json(*r.predicted) : nlohmann::json(nullptr)},
                        {"error", r.error ? nlohmann::json(*r.error) : nlohmann::json(nullptr)},
                        {"split", m.holdout ? "holdout" : "calibration"},
                        {"skipped", r.skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.skipped)}});
      }
      nlohmann::json doc = {{"rows", rows},
                            {"summary",
                             {{"all", summary_json(result.all)},
                              {"calibration", summary_json(result.calibration_split)},
                              {"holdout", summary_json(result.holdout_split)},
                              {"holdout_throughput", summary_json(result.throughput_holdout)}}},
                            {"constants", constants_json(calibration.constants)}};
      emit(doc.dump(2) + "\n", state->out);
      return;
    }
    report::Table table;
    table.columns = {{"line", ""},     {"model", "", report::Align::left}, {"gpu", "", report::Align::left},
                     {"prec", "", report::Align::left}, {"batch", ""}, {"metric", "", report::Align::left},
                     {"measured", ""}, {"predicted", ""}, {"error", ""}, {"split", "", report::Align::left}};
    int skipped = 0;
    for (const auto& r : result.rows) {
      const auto& m = r.measurement;
      if (state->holdout_only && !m.holdout) continue;
      const bool memory = m.metric == Metric::peak_memory;
      auto value = [memory](double v) { return memory ? report::format_bytes(v) : report::format_number(v, 1); };
      if (!r.predicted) ++skipped;
      table.add_row({std::to_string(m.line), m.model, m.gpu, m.precision, std::to_string(m.batch_per_gpu),
                     memory ? "peak memory" : "samples/s", value(m.value),
                     r.predicted ? value(*r.predicted) : "skipped: " + r.skipped, r.error ? percent(*r.error) : "",
                     m.holdout ? "holdout" : "calibration"});
    }
    std::string out = state->format == Format::csv ? report::render_csv(table) : report::render_text(table, 200);
    if (state->format == Format::table) {
      out += "\n" + summary_line("all", result.all) + "\n";
      out += summary_line("calibration split", result.calibration_split) + "\n";
      out += summary_line("holdout split", result.holdout_split) + "\n";
      out += summary_line("holdout throughput (the accuracy target)", result.throughput_holdout) + "\n";
      if (skipped) out += fmt::format("{} rows skipped (reason in the table)\n", skipped);
      if (state->fit) out += "fitted constants: " + constants_json(calibration.constants).dump() + "\n";
    }
    emit(out, state->out);
  });
}

}  // namespace gpusage::cli
