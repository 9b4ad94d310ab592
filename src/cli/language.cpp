#include "cli/language.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::cli {

namespace {

using i18n::tr;

i18n::Language parse_lang(std::string_view value) {
  if (auto language = i18n::parse_language(value)) return *language;
  std::string nearest;  // one letter off a name (zn, eng); a guess further away would mislead
  for (const char* name : {"zh", "en"}) {
    if (nearest.empty() && text::edit_distance(text::to_lower(value), name) <= 1) {
      nearest = fmt::format(" (nearest: {})", name);
    }
  }
  throw InputError(fmt::format("--lang: '{}' is not a language gpusage speaks; accepted: {}{}", value,
                               i18n::accepted_languages(), nearest));
}

// CLI11's words as xgettext sees them (they are CLI11's, so they are marked here).
[[maybe_unused]] constexpr const char* kHelpWords[] = {i18n::N_("Usage"),
                                                       i18n::N_("OPTIONS"),
                                                       i18n::N_("SUBCOMMAND"),
                                                       i18n::N_("SUBCOMMANDS"),
                                                       i18n::N_("REQUIRED"),
                                                       i18n::N_("Positionals"),
                                                       i18n::N_("Needs"),
                                                       i18n::N_("Excludes"),
                                                       i18n::N_("Env"),
                                                       i18n::N_("Options"),
                                                       i18n::N_("Subcommands"),
                                                       i18n::N_("Print this help message and exit"),
                                                       i18n::N_("Display program version information and exit")};

// One-line summaries of the commands whose description runs to many lines, for the Chinese help: the
// command's help starts with the summary in Chinese and keeps the English details and examples under it until
// the whole description is translated (then its entry here goes, and cmd_*.cpp marks the description with
// i18n::N_ as gpus and bench do). A command neither here nor marked fails I18nE2e.HelpListsEveryCommand….
struct Summary {
  const char* command;
  const char* text;
};
constexpr Summary kSummaries[] = {
    {"guide", i18n::N_("The buyer's guide: GPU specs side by side, then a model's predicted training speed and "
                       "memory across batch sizes on each card.")},
    {"plan", i18n::N_("Predict training memory and speed of a model on GPUs (also ones you do not own).")},
    {"validate", i18n::N_("Compare plan's predictions with measured training runs and report the error.")},
    {"monitor", i18n::N_("Watch GPUs while you train: utilization, memory, power, clocks, processes and alerts.")},
    {"doctor", i18n::N_("Check the GPU training setup and, with --log, explain a failed training run.")},
    {"report", i18n::N_("Write the comparison charts as one self-contained HTML page that opens offline.")},
    {"run", i18n::N_("Run a training program and watch it: its GPUs, its log, live alerts and a summary at the end.")},
    {"fit-batch", i18n::N_("Find the largest batch that trains, by running your command with each batch tried.")},
};

const char* summary_of(const CLI::App& command) {
  for (const Summary& s : kSummaries) {
    if (command.get_name() == s.command && command.get_parent() && !command.get_parent()->get_parent()) return s.text;
  }
  return nullptr;
}

// Lists each subcommand by the first line of its description, so that a summary heads the list and its
// English details stay in the command's own help.
class SummaryFormatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    const std::string& description = sub->get_description();
    CLI::detail::format_help(out, sub->get_display_name(true), description.substr(0, description.find('\n')),
                             get_column_width());
    return out.str();
  }
};

// Walks the command tree: --lang accepted everywhere, descriptions and group names translated. A command's
// description is marked where it is written (i18n::N_ in cmd_*.cpp) or summarised in kSummaries.
void add_to(CLI::App& command, const std::shared_ptr<CLI::FormatterBase>& formatter) {
  static std::string parsed_already;  // select_language read the value before the commands were built
  // Not on hidden commands (_docs): their options are the build's, and _docs takes exactly one of them.
  if (command.get_parent() == nullptr || !command.get_group().empty()) {
    command
        .add_option("--lang", parsed_already,
                    tr("Language of the messages: en or zh (default: the locale, LC_ALL/LC_MESSAGES/LANG)"))
        ->type_name("LANG");
  }
  if (formatter) command.formatter(formatter);
  if (i18n::language() != i18n::Language::en) {
    if (const char* summary = summary_of(command)) {
      command.description(tr(summary) + "\n\n" + command.get_description());
    } else {
      command.description(tr(command.get_description().c_str()));
    }
  }
  for (CLI::Option* option : command.get_options()) {
    if (option->get_group() == "Options") option->group(tr("Options"));
    option->description(tr(option->get_description().c_str()));
  }
  for (CLI::App* sub : command.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group() == "Subcommands") sub->group(tr("Subcommands"));
    add_to(*sub, formatter);
  }
}

}  // namespace

void select_language(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.starts_with("--lang=")) {
      i18n::set_language(parse_lang(arg.substr(7)));
      return;
    }
    if (arg == "--lang") {
      if (i + 1 >= argc) {
        throw InputError(fmt::format("--lang needs a value; accepted: {}", i18n::accepted_languages()));
      }
      i18n::set_language(parse_lang(argv[i + 1]));
      return;
    }
  }
  i18n::set_language(i18n::language_from_environment());
}

void add_language_option(CLI::App& app) {
  std::shared_ptr<CLI::FormatterBase> formatter;
  if (i18n::language() != i18n::Language::en) {
    formatter = std::make_shared<SummaryFormatter>();
    for (const char* label :
         {"Usage", "OPTIONS", "SUBCOMMAND", "SUBCOMMANDS", "REQUIRED", "Positionals", "Needs", "Excludes", "Env"}) {
      formatter->label(label, tr(label));
    }
  }
  add_to(app, formatter);
}

}  // namespace gpusage::cli
