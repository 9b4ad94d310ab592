#include "cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/language.hpp"
#include "cli/typos.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "gpusage/build_info.hpp"

namespace gpusage::cli {

namespace {

std::string version_text() {
  return fmt::format("gpusage {} (commit {}, needs glibc {} or newer, {}, {} build, CUDA toolkit at build: {})",
                     build_info::version, build_info::commit, build_info::glibc_floor, build_info::compiler,
                     build_info::build_type, build_info::cuda_toolkit);
}

}  // namespace

int run(int argc, char** argv) {
  try {
    select_language(argc, argv);  // first: the commands' help is built in the chosen language
  } catch (const InputError& e) {
    std::cerr << "gpusage: " << e.what() << "\n";
    return 2;
  }
  CLI::App app{
      i18n::N_("gpusage: which GPU, will it fit, how fast, and what is wrong — for deep-learning training.\n"
               "Run `gpusage COMMAND --help` for each command's options and examples.")};
  app.name("gpusage");
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  app.fallthrough(false);
  add_guide_command(app);
  add_gpus_command(app);
  add_plan_command(app);
  add_validate_command(app);
  add_monitor_command(app);
  add_doctor_command(app);
  add_bench_command(app);
  add_report_command(app);
  add_run_command(app);
  add_fit_batch_command(app);
  add_docs_command(app);
  add_language_option(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const ExitStatus& e) {
    return e.code;
  } catch (const CLI::ParseError& e) {
    // One line naming what was wrong and the nearest valid word; the usage is one --help away.
    std::cerr << "gpusage: " << describe_parse_error(app, e, argc, argv) << "\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "gpusage: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpusage: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace gpusage::cli
