// Placeholder until the guide work lands.
#include "cli/commands.hpp"

#include <stdexcept>

namespace gpusage::cli {
void add_guide_command(CLI::App& app) {
  auto* command = app.add_subcommand("guide", "(not built yet)");
  command->allow_extras();
  command->callback([] { throw std::runtime_error("'gpusage guide' is not implemented in this build yet"); });
}
}  // namespace gpusage::cli
