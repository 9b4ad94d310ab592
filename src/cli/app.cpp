#include "cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <string>
#include <vector>

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

// The words to parse, with a bare optional-value option (--checkpointing) just before `--` given its bare value
// (--checkpointing=full): CLI11 ends such an option's value at `--` and removes the `--`, so the child's
// command after it (`run --checkpointing -- python -c ...`) would be parsed as gpusage's options. In CLI11's
// order: reversed.
std::vector<std::string> words_to_parse(const CLI::App& app, int argc, char** argv) {
  std::map<std::string, std::string> bare_values;  // --name -> what it takes alone
  std::vector<const CLI::App*> commands{&app};
  for (std::size_t i = 0; i < commands.size(); ++i) {
    for (const CLI::App* sub : commands[i]->get_subcommands({})) commands.push_back(sub);
    for (const CLI::Option* option : commands[i]->get_options()) {
      if (option->get_expected_min() != 0 || option->get_expected_max() != 1 || option->get_type_size() == 0) continue;
      for (const std::string& name : option->get_lnames()) bare_values["--" + name] = option->get_default_str();
    }
  }
  std::vector<std::string> words;
  for (int i = argc - 1; i >= 1; --i) words.emplace_back(argv[i]);
  for (std::size_t i = words.size(); i-- > 1 && words[i] != "--";) {
    if (words[i - 1] == "--") {
      if (const auto it = bare_values.find(words[i]); it != bare_values.end()) words[i] += "=" + it->second;
      break;
    }
  }
  return words;
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
    std::vector<std::string> words = words_to_parse(app, argc, argv);
    app.parse(words);
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
