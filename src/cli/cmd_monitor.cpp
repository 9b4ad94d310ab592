// Placeholder until the monitor work lands: the command exists and says so honestly.
#include "cli/commands.hpp"
#include "core/common/error.hpp"

namespace gpusage::cli {
void add_monitor_command(CLI::App& app) {
  auto* command = app.add_subcommand("monitor", "(not built yet)");
  command->allow_extras();
  command->callback([] { throw std::runtime_error("'gpusage monitor' is not implemented in this build yet"); });
}
}  // namespace gpusage::cli
