// The language of gpusage's messages: `--lang en|zh` on every command, else the locale (LC_ALL, LC_MESSAGES,
// LANG). Chosen before the commands are built, since their help texts are made in that language.
#pragma once

#include <CLI/CLI.hpp>

namespace gpusage::cli {

// Sets i18n's language from --lang in argv (up to a `--`, after which the words are a child program's),
// else from the environment. Throws InputError for a value that is not a language gpusage speaks.
void select_language(int argc, char** argv);

// Once every command is registered: accepts --lang on the root and every subcommand (select_language has
// read it already), and puts the help's headings, group names and command descriptions in the language.
void add_language_option(CLI::App& app);

}  // namespace gpusage::cli
