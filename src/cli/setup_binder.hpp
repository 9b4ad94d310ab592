// The one binder of the training setup (core/setup/training_setup.hpp) to a command: plan, guide, report, run
// and fit-batch register the setup's options through bind_setup, and what CLI11 parses is the setup. What the
// setup prints back (TrainingSetup::to_flags) parses here into the same setup.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "core/setup/layers.hpp"
#include "core/setup/training_setup.hpp"

namespace gpusage::cli {

// What a command takes beyond the options every command with a workload has. An empty help leaves the option
// out. A setup field that holds a value when bind_setup is called is the command's default (shown in --help).
struct SetupDoor {
  bool model_positional = false;  // plan, guide: the model as the first word too (MODEL or --model)
  std::string model_help;         // empty: the zoo's models
  std::string gpu_help;           // --gpu
  std::string batch_help;         // --batch
  bool single_batch = false;      // --batch is one size (run), not a list
  std::string target_batch_help;  // --target-batch
};

// Also registers --recipe and --train-config (setup_layers.hpp): once parsed, the config file's fields and the
// recipe's defaults fill the options the command line left unset. The returned layers say what each set.
std::shared_ptr<const setup::SetupLayers> bind_setup(CLI::App& command, setup::TrainingSetup& setup,
                                                     const SetupDoor& door = {});
// True when the command line named the model (MODEL or --model): a command's default model gives way to
// --hf-config or --workload only when it did not.
bool model_given(const CLI::App& command);
// For run and fit-batch, whose stdout belongs to the child or the report: the recipe: and config: lines that plan
// and guide print above their tables, on stderr with the "gpusage: " prefix.
void print_setup_layers(const setup::SetupLayers& layers);

}  // namespace gpusage::cli
