// What a command-line parse error says: one line naming the bad word and the nearest valid one
// (`--seqlen` -> "did you mean --seq-len?", `gpusage plna` -> "did you mean plan?").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gpusage::cli {

// The message for `error`, raised while `app` parsed argv. Falls back to CLI11's own text.
std::string describe_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace gpusage::cli
