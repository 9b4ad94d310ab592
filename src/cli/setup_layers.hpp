// --recipe and --train-config: the layers under the command line (core/setup/layers.hpp), applied by the setup's
// one binder (setup_binder) through the command's own options once CLI11 has parsed them. Precedence: an option
// given on the command line > the --train-config file's fields > the --recipe's defaults > gpusage's defaults.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "core/setup/layers.hpp"
#include "core/setup/training_setup.hpp"

namespace gpusage::cli {

// Registers --recipe and --train-config on `command`; the returned layers are filled when it is parsed (empty
// when neither is given). Call after the setup's other options are registered.
std::shared_ptr<const setup::SetupLayers> bind_setup_layers(CLI::App& command, setup::TrainingSetup& setup);

}  // namespace gpusage::cli
