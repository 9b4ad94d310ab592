// gpusage plan MODEL: will this training fit on these GPUs, and how fast will it run?
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/cost_view.hpp"
#include "cli/options.hpp"
#include "cli/plan_view.hpp"
#include "cli/report_pages.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/catalog.hpp"
#include "core/catalog/gpu.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/setup/plan.hpp"

namespace gpusage::cli {

void add_plan_command(CLI::App& app) {
  struct State {
    setup::TrainingSetup run;
    Format format = Format::table;
    bool wide = false;
    std::string out;
    std::string chart;
    CostOptions cost;
    std::shared_ptr<const setup::SetupLayers> layers;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "plan",
      "Predict training memory and speed of a model on GPUs (also ones you do not own).\n"
      "Examples:\n"
      "  gpusage plan resnet50 --gpu rtx50 --batch 32,64,128,256 --precision fp16\n"
      "  gpusage plan llama3-8b --gpu rtx5090 --qlora --seq-len 2048 --batch auto\n"
      "  gpusage plan gpt2 --gpu h100-sxm5-80gb --target-batch 512 --precision bf16 --format json\n"
      "Hugging Face ids and names as you type them (a built-in table of the most fine-tuned models; the local\n"
      "Hugging Face cache first):\n"
      "  gpusage plan meta-llama/Llama-3.1-8B --gpu rtx4090 --qlora --seq-len 2048 --precision bf16\n"
      "  gpusage plan Qwen2.5-7B-Instruct --gpu rtx4090 --lora 16 --seq-len 2048 --precision bf16 --format csv\n"
      "Any PyTorch model, traced on the CPU by gpusage-trace (pip install the gpusage wheel):\n"
      "  gpusage-trace torchvision:convnext_tiny --input 3x224 -o convnext.json\n"
      "  gpusage plan --workload convnext.json --gpu rtx5090 --batch auto\n"
      "A framework's defaults, or its own config file (options given win over the file, the file over the recipe,\n"
      "the recipe over gpusage's defaults):\n"
      "  gpusage plan llama3.1-8b --qlora --recipe unsloth --gpu rtx4090 --seq-len 2048\n"
      "  gpusage plan --train-config qlora.yml --gpu rtx4090 --batch 2\n"
      "What a job costs, owned or rented (8 H100s against one RTX 5090 for the same job):\n"
      "  gpusage plan llama3-8b --qlora --gpu rtx5090,rtx4090,h100-sxm5-80gb --tokens 1e9 --cost\n"
      "  gpusage plan llama3-8b --qlora --gpu rtx5090,8xh100-sxm5-80gb --tokens 1e9 --cost --price rtx5090=2199 \\\n"
      "      --rent h100-sxm5-80gb=2.49/h --electricity 0.30/kWh --amortize-hours 4000");
  state->run.gpu = "rtx50";
  state->run.batch = "auto";
  SetupDoor door;
  door.model_positional = true;
  door.gpu_help = i18n::trf(
      "GPU ids or names, families ({}) or all, comma separated; NxID plans N of that card (8xh100-sxm5-80gb: data "
      "parallel, as --gpus 8)",
      catalog::family_names());
  door.batch_help = i18n::N_("Per-GPU batch sizes (32,64,…) or auto: the largest that fits");
  door.target_batch_help = i18n::N_("Global batch to reach: picks the per-GPU batch and gradient-accumulation steps");
  state->layers = bind_setup(*command, state->run, door);
  state->cost.add_to(*command);
  add_format_option(*command, state->format, {Format::table, Format::csv, Format::json});
  command->add_flag("--wide", state->wide, i18n::N_("Show every table column, however wide"));
  command->add_option("--out", state->out, i18n::N_("Write the output to FILE instead of stdout"));
  command->add_option(
      "--chart", state->chart,
      i18n::N_("Also write the predictions as charts: FILE.html, a self-contained page (see gpusage report)"));
  command->callback([state] {
    if (!state->chart.empty() && !is_html_path(state->chart)) {
      throw InputError(i18n::trf("--chart: '{}' has an unsupported extension; accepted: .html", state->chart));
    }
    state->cost.check_given_with_cost();
    estimate::SweepRequest request;
    request.batches = parse_batch_list(state->run.batch).sizes;
    request.target_batch = state->run.target_batch;
    const estimate::Sweep results = setup::run_plan(state->run, state->run.gpu, request);
    const std::optional<CostReport> costs = cost_report_if_asked(results, state->cost, state->run.dataset_size);
    std::string chart_message;
    if (!state->chart.empty()) {
      chart_message = write_plan_page(results, state->chart, plan_command_line(state->run, state->chart));
    }
    const int width = state->wide ? 100000 : terminal_width();
    if (state->format == Format::csv) {
      // With --cost the CSV is the cost report's (its rows carry each card's batch and wall time); the plan's
      // own rows are `plan --format csv` without --cost.
      emit(costs ? cost_csv(*costs) : plan_csv(results), state->out);
    } else if (state->format == Format::json) {
      nlohmann::json doc = plan_json(results);
      if (costs) doc["cost"] = cost_json(*costs);
      const nlohmann::json layers = state->layers->to_json();  // "recipe", "train_config" when given
      for (const auto& [key, value] : layers.items()) doc[key] = value;
      emit(doc.dump(2) + "\n", state->out);
    } else {
      std::string layers;
      for (const std::string& line : state->layers->text_lines()) layers += line + "\n";
      emit(layers + plan_table(results, width) + (costs ? cost_table(*costs, width) : std::string()), state->out);
    }
    if (!chart_message.empty()) fmt::print(stderr, "{}\n", chart_message);
  });
}

}  // namespace gpusage::cli
