#include "cli/options.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/estimate/parallel_aliases.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::cli {

const char* to_string(Format format) {
  switch (format) {
    case Format::table: return "table";
    case Format::markdown: return "markdown";
    case Format::csv: return "csv";
    case Format::json: return "json";
    case Format::prometheus: return "prometheus";
  }
  return "?";
}

namespace {

std::string braces(const std::vector<std::string>& names) { return "{" + text::join(names, ",") + "}"; }

std::string not_one_of(const std::string& value, const std::vector<std::string>& names) {
  std::string message = i18n::trf("'{}' is not one of {}", value, text::join(names, ", "));
  const std::vector<std::string> close = text::closest(value, names, 1);
  if (!close.empty()) message += i18n::trf("; did you mean {}?", close.front());
  return message;
}

}  // namespace

CLI::Validator one_of(std::vector<std::string> names) {
  const std::string description = braces(names);
  return CLI::Validator(
      [names = std::move(names)](std::string& value) -> std::string {
        for (const std::string& n : names) {
          if (text::to_lower(n) == text::to_lower(value)) {
            value = n;
            return {};
          }
        }
        return not_one_of(value, names);
      },
      description, "one_of");
}

CLI::Validator parallel_choice() {
  const std::vector<std::string> names = text::split(estimate::parallel_names(), '|');
  return CLI::Validator(
      [names](std::string& value) -> std::string {
        if (const auto canonical = estimate::canonical_parallel_name(value)) {
          value = *canonical;
          return {};
        }
        return not_one_of(value, names) +
               i18n::tr(" (aliases: zero3, ds_z3, full_shard, fsdp2 = fsdp; ds_z2, shard_grad_op = zero2)");
      },
      braces(names), "parallel");
}

void add_format_option(CLI::App& command, Format& format, std::vector<Format> allowed) {
  std::vector<std::string> names;
  for (Format f : allowed) names.push_back(to_string(f));
  format = allowed.front();
  command.add_option("--format", format, i18n::trf("Output format: {}", text::join(names, " | ")))
      ->transform(CLI::Validator(
          [names, allowed](std::string& value) -> std::string {
            for (std::size_t i = 0; i < names.size(); ++i) {
              if (text::to_lower(value) == names[i]) {
                value = std::to_string(static_cast<int>(allowed[i]));  // what the enum option reads
                return {};
              }
            }
            return not_one_of(value, names);
          },
          braces(names), "format"))
      ->type_name("FORMAT")
      ->default_str(to_string(allowed.front()));
}

void emit(std::string_view content, const std::string& path) {
  if (path.empty()) {
    std::cout << content;
    std::cout.flush();
  } else {
    io::write_file_atomically(path, content);
  }
}

int terminal_width() {
  if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) > 20) return std::atoi(columns);
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 120;
}

}  // namespace gpusage::cli
