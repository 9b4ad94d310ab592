// gpusage guide: the first screen for someone choosing a card — the RTX 50 catalog side by side, and
// how fast ResNet-50 trains on each across batch sizes (what fits, what does not). `make run` runs it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/cost_view.hpp"
#include "cli/gpus_view.hpp"
#include "cli/options.hpp"
#include "cli/plan_view.hpp"
#include "cli/setup_binder.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/setup/plan.hpp"

namespace gpusage::cli {

namespace {
// guide's batches for a vision model when none are given (setup: batch_ladder in core/estimate/sweep.hpp).
constexpr const char* kVisionLadder = "32,64,128,256";
}  // namespace

void add_guide_command(CLI::App& app) {
  struct State {
    setup::TrainingSetup run;
    std::string chart;
    Format format = Format::table;
    bool wide = false;
    CostOptions cost;
  };
  auto state = std::make_shared<State>();
  state->run.model = "resnet50";
  state->cost.default_epochs = kReferenceVisionEpochs;
  auto* command = app.add_subcommand(
      "guide",
      "The buyer's guide: GPU specs side by side, then predicted training speed and memory of a model\n"
      "across batch sizes on each card. Examples:\n"
      "  gpusage guide --chart guide.svg\n"
      "  gpusage guide --cost                       # + what 90 epochs of ImageNet cost, owned or rented\n"
      "  gpusage guide --cost --price rtx5080=1199 --electricity 0.30/kWh --gpu rtx5090,rtx5080,h100-sxm5-80gb\n"
      "  gpusage guide --format csv                 # the predictions, one row per card and batch");
  state->run.gpu = "rtx50";
  SetupDoor door;
  door.model_positional = true;
  door.gpu_help = i18n::N_("GPU ids, names or families, comma separated");
  door.batch_help = i18n::trf(
      "Per-GPU batch sizes (default: {} for vision models; 1, 2, 4, ... for language "
      "models, up to the first that runs out on every card)",
      kVisionLadder);
  const auto layers = bind_setup(*command, state->run, door);
  state->cost.add_to(*command);
  command->add_option("--chart", state->chart,
                      i18n::N_("Also write the comparison chart (SVG): specs and predicted speed"));
  add_format_option(*command, state->format, {Format::table, Format::csv, Format::json});
  // The tables' hint for columns left out says "use --wide or --format csv": guide takes both, as plan does.
  command->add_flag("--wide", state->wide, i18n::N_("Show every table column, however wide"));
  command->callback([state, command, layers] {
    // The default model gives way to one named another way.
    const bool other_model = !state->run.hf_config.empty() || !state->run.workload_file.empty();
    if (other_model && !model_given(*command)) state->run.model.clear();
    if (!state->chart.empty() && !text::to_lower(state->chart).ends_with(".svg")) {
      throw InputError(i18n::trf("--chart: '{}' has an unsupported extension; accepted: .svg", state->chart));
    }
    state->cost.check_given_with_cost();
    if (!state->chart.empty() && state->format != Format::table) {
      throw InputError(i18n::trf("--chart {} goes with the table output; --format {} prints data only", state->chart,
                                 to_string(state->format)));
    }
    const catalog::Catalog& catalog = catalog::Catalog::active();
    estimate::SweepRequest request;
    request.gpus = catalog.select(state->run.gpu_spec(state->run.gpu, catalog));
    request.ladder = state->run.batch.empty();
    request.batches = parse_batch_list(request.ladder ? kVisionLadder : state->run.batch).sizes;
    const estimate::Sweep results = setup::run_plan(state->run, request);
    const int width = state->wide ? 100000 : terminal_width();
    if (state->format != Format::table) {
      // csv: the predictions, one row per card and batch (plan --format csv); json: plan's document, with the
      // cards compared and the costs when asked.
      if (state->format == Format::csv) return emit(plan_csv(results));
      nlohmann::json doc = plan_json(results);
      doc["gpus"] = nlohmann::json::array();
      for (const catalog::Gpu* gpu : request.gpus) doc["gpus"].push_back(gpu->id);
      if (const auto costs = cost_report_if_asked(results, state->cost, state->run.dataset_size)) {
        doc["cost"] = cost_json(*costs);
      }
      const nlohmann::json given = layers->to_json();  // "recipe", "train_config" when given
      for (const auto& [key, value] : given.items()) doc[key] = value;
      return emit(doc.dump(2) + "\n");
    }

    std::string out;
    for (const std::string& line : layers->text_lines()) out += line + "\n";
    if (!out.empty()) out += "\n";
    out += i18n::trf("== Which GPU? {} side by side ==\n\n", state->run.gpu);
    out += gpus_comparison_text(catalog, request.gpus, width);
    out += i18n::trf("\n== Will it fit, and how fast? {} training, predicted ==\n\n", results.workload.display_name);
    out += plan_table(results, width);
    if (const auto costs = cost_report_if_asked(results, state->cost, state->run.dataset_size)) {
      out += i18n::tr("\n== Buy or rent? ==\n") + cost_table(*costs, width);
    }
    out += i18n::tr(
        "\nNext: `gpusage plan MODEL --gpu ID` for any model and card, `gpusage bench` to measure yours,\n"
        "`gpusage run -- python train.py` to watch a training run and explain it when it ends.\n");

    if (!state->chart.empty()) {
      report::BarChart chart = gpus_comparison_chart(catalog, request.gpus, state->run.gpu);
      // One more series: the best predicted throughput among the batches that fit on each card.
      std::map<std::string, double> best;  // by catalog id: the predictions point at completed copies
      for (const auto& p : results.predictions) {
        if (p.fits) best[p.gpu->id] = std::max(best[p.gpu->id], p.throughput);
      }
      report::BarSeries speed{i18n::trf("{} {} (predicted, best batch)", results.workload.display_name,
                                        catalog::to_string(results.predictions.front().config.precision)),
                              results.workload.throughput_unit(),
                              0,
                              {}};
      for (const catalog::Gpu* gpu : request.gpus) {
        speed.values.push_back(best.count(gpu->id) ? std::optional<double>(best[gpu->id]) : std::nullopt);
      }
      chart.series.push_back(std::move(speed));
      io::write_file_atomically(state->chart, report::render_svg(chart));
      out += i18n::trf("Chart written to {}\n", state->chart);
    }
    emit(out);
  });
}

}  // namespace gpusage::cli
