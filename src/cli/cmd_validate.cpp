// Placeholder until the validate work lands.
#include "cli/commands.hpp"

#include <stdexcept>

namespace gpusage::cli {
void add_validate_command(CLI::App& app) {
  auto* command = app.add_subcommand("validate", "(not built yet)");
  command->allow_extras();
  command->callback([] { throw std::runtime_error("'gpusage validate' is not implemented in this build yet"); });
}
}  // namespace gpusage::cli
