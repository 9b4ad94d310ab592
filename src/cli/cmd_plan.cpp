// Placeholder until the plan work lands.
#include "cli/commands.hpp"

#include <stdexcept>

namespace gpusage::cli {
void add_plan_command(CLI::App& app) {
  auto* command = app.add_subcommand("plan", "(not built yet)");
  command->allow_extras();
  command->callback([] { throw std::runtime_error("'gpusage plan' is not implemented in this build yet"); });
}
}  // namespace gpusage::cli
