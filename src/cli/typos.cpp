#include "cli/typos.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::cli {

namespace {

std::vector<std::string> command_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!sub->get_name().starts_with('_')) names.push_back(sub->get_name());  // _docs is the build's
  }
  return names;
}

CLI::App* subcommand_named(CLI::App& app, const std::string& name) {
  const auto found = app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

// Every spelling of every option of `app` and of the apps above it: "--seq-len", "-h", ...
std::vector<std::string> option_spellings(const std::vector<CLI::App*>& chain) {
  std::vector<std::string> names;
  for (const CLI::App* app : chain) {
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& l : option->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : option->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::string did_you_mean(const std::string& wanted, const std::vector<std::string>& choices) {
  const std::vector<std::string> close = text::closest(wanted, choices, 1);
  return close.empty() ? "" : i18n::trf("; did you mean {}?", close.front());
}

}  // namespace

std::string describe_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  // The commands named on the line, outermost first (gpusage, gpusage gpus, gpusage gpus show).
  std::vector<CLI::App*> chain{&app};
  std::string next_word;  // the first word after the commands that is not an option
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.starts_with('-')) continue;
    CLI::App* sub = subcommand_named(*chain.back(), word);
    if (!sub) {
      next_word = word;
      break;
    }
    chain.push_back(sub);
  }
  const std::string where = chain.size() > 1 ? chain.back()->get_name() + ": " : "";  // "plan: "
  const std::string help = chain.size() > 1 ? "gpusage " + chain.back()->get_name() + " --help" : "gpusage --help";
  // Without a command CLI11 says only "A subcommand is required": a misspelt option or command is the reason.
  const bool no_command = chain.size() == 1 && dynamic_cast<const CLI::RequiredError*>(&error);
  if (no_command || dynamic_cast<const CLI::ExtrasError*>(&error)) {
    const std::vector<std::string> known = option_spellings(chain);
    for (int j = 1; j < argc; ++j) {
      std::string word = argv[j];
      if (word == "--") break;
      if (!word.starts_with('-') || word.size() < 2) continue;
      if (const std::size_t eq = word.find('='); eq != std::string::npos) word.resize(eq);
      if (std::find(known.begin(), known.end(), word) != known.end()) continue;
      return where + i18n::trf("unknown option '{}'{} (see {})", word, did_you_mean(word, known), help);
    }
  }
  // A word where a command is expected is a misspelt one: any word at the top (gpusage plna), a word close to
  // a command below it (gpusage gpus shwo), since a command's own words may be values.
  const std::vector<std::string> commands = command_names(*chain.back());
  const std::vector<std::string> close = text::closest(next_word, commands, 1);
  const bool misspelt = chain.size() == 1 || (dynamic_cast<const CLI::ExtrasError*>(&error) && !close.empty() &&
                                              text::edit_distance(next_word, close.front()) <= 2);
  if (!next_word.empty() && !commands.empty() && misspelt) {
    return where + i18n::trf("unknown command '{}'{} (see {})", next_word, did_you_mean(next_word, commands), help);
  }
  return i18n::trf("{} (see --help)", error.what());
}

}  // namespace gpusage::cli
