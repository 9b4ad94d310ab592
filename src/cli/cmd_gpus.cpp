// Placeholder until the gpus work lands.
#include "cli/commands.hpp"

#include <stdexcept>

namespace gpusage::cli {
void add_gpus_command(CLI::App& app) {
  auto* command = app.add_subcommand("gpus", "(not built yet)");
  command->allow_extras();
  command->callback([] { throw std::runtime_error("'gpusage gpus' is not implemented in this build yet"); });
}
}  // namespace gpusage::cli
