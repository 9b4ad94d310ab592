#include "cli/options.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "core/common/i18n.hpp"
#include "core/common/io.hpp"

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

void add_format_option(CLI::App& command, Format& format, std::vector<Format> allowed) {
  std::map<std::string, Format> names;
  std::string list;
  for (Format f : allowed) {
    names[to_string(f)] = f;
    list += (list.empty() ? "" : "|") + std::string(to_string(f));
  }
  format = allowed.front();
  command.add_option("--format", format, i18n::trf("Output format: {}", list))
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
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
