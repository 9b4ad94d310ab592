// A training setup parsed from plan-like arguments by the one binder (cli/setup_binder), for the cli tests.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/setup_binder.hpp"

namespace gpusage::cli {

inline setup::TrainingSetup parse_run(std::vector<std::string> args) {
  CLI::App app;
  setup::TrainingSetup options;
  SetupDoor door;
  door.model_positional = true;
  bind_setup(app, options, door);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  app.parse(args);
  return options;
}

}  // namespace gpusage::cli
