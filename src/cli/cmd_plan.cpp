// gpusage plan MODEL: will this training fit on these GPUs, and how fast will it run?
#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/plan_view.hpp"
#include "cli/report_pages.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"

namespace gpusage::cli {

void add_plan_command(CLI::App& app) {
  struct State {
    RunOptions run;
    std::string gpus = "rtx50";
    std::string batch = "auto";
    std::optional<int> target_batch;
    Format format = Format::table;
    bool wide = false;
    std::string out;
    std::string chart;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "plan",
      "Predict training memory and speed of a model on GPUs (also ones you do not own).\n"
      "Examples:\n"
      "  gpusage plan resnet50 --gpu rtx50 --batch 32,64,128,256 --precision fp16\n"
      "  gpusage plan llama3-8b --gpu rtx5090 --qlora --seq-len 2048 --batch auto\n"
      "  gpusage plan gpt2 --gpu h100 --target-batch 512 --precision bf16 --format json");
  state->run.add_to(*command);
  command->add_option("--gpu", state->gpus, "GPU ids or names, families (rtx50, rtx40, rtx30, datacenter, "
                                            "workstation) or all, comma separated")
      ->capture_default_str();
  command->add_option("--batch", state->batch, "Per-GPU batch sizes (32,64,…) or auto: the largest that fits")
      ->capture_default_str();
  command->add_option("--target-batch", state->target_batch,
                      "Global batch to reach: picks the per-GPU batch and gradient-accumulation steps")
      ->check(CLI::Range(1, 1 << 24));
  add_format_option(*command, state->format, {Format::table, Format::json});
  command->add_flag("--wide", state->wide, "Show every table column, however wide");
  command->add_option("--out", state->out, "Write the output to FILE instead of stdout");
  command->add_option("--chart", state->chart,
                      "Also write the predictions as charts: FILE.html, a self-contained page (see gpusage report)");
  command->callback([state] {
    if (!state->chart.empty() && !is_html_path(state->chart)) {
      throw InputError(fmt::format("--chart: '{}' has an unsupported extension; accepted: .html", state->chart));
    }
    estimate::SweepRequest request;
    request.gpus = catalog::Catalog::active().select(state->gpus);
    request.batches = parse_batch_list(state->batch).sizes;
    request.target_batch = state->target_batch;
    const estimate::Sweep results = run_plan(state->run, request);
    std::string chart_message;
    if (!state->chart.empty()) {
      chart_message = write_plan_page(results, state->chart,
                                      fmt::format("gpusage plan {}--gpu {} --batch {}{}{} --chart {}",
                                                  state->run.model.empty() ? "" : state->run.model + " ",
                                                  state->gpus, state->batch, run_option_flags(state->run),
                                                  state->target_batch ? fmt::format(" --target-batch {}",
                                                                                    *state->target_batch)
                                                                      : "",
                                                  state->chart));
    }
    emit(state->format == Format::json ? plan_json(results).dump(2) + "\n" : plan_table(results, state->wide ? 100000 : terminal_width()),
         state->out);
    if (!chart_message.empty()) fmt::print(stderr, "{}\n", chart_message);
  });
}

}  // namespace gpusage::cli
