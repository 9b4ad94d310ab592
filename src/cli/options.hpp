// Options and output plumbing shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::cli {

enum class Format { table, markdown, csv, json, prometheus };

// Adds `--format` accepting `allowed` (the first is the default).
void add_format_option(CLI::App& command, Format& format, std::vector<Format> allowed);
const char* to_string(Format format);

// Writes `content` to stdout, or atomically to `path` when it is not empty (temp file, then rename).
void emit(std::string_view content, const std::string& path = {});

// Terminal width for tables: $COLUMNS, else the tty's width, else 120.
int terminal_width();

}  // namespace gpusage::cli
