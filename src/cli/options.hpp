// Options and output plumbing shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::cli {

enum class Format { table, markdown, csv, json, prometheus };

// A validator for an option whose value is one of `names`, given in any case (--precision FP16): it turns the
// value into the name as listed, its help reads "{a,b,c}", and a wrong value is answered with the nearest name.
CLI::Validator one_of(std::vector<std::string> names);

// --parallel: gpusage's names and the ones people use for them (zero3, ds_z2, full_shard, fsdp2; the table is
// estimate::parallel_aliases()), turned into gpusage's name.
CLI::Validator parallel_choice();

// Adds `--format` accepting `allowed` (the first is the default), any case; help "FORMAT:{table,json}".
void add_format_option(CLI::App& command, Format& format, std::vector<Format> allowed);
const char* to_string(Format format);

// Writes `content` to stdout, or atomically to `path` when it is not empty (temp file, then rename).
void emit(std::string_view content, const std::string& path = {});

// Terminal width for tables: $COLUMNS, else the tty's width, else 120.
int terminal_width();

}  // namespace gpusage::cli
