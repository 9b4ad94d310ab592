#include "core/common/toml_data.hpp"

#include <fmt/format.h>

#include "core/common/error.hpp"

namespace gpusage::toml_data {

toml::table parse(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw InputError(
        fmt::format("{}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column, e.description()));
  }
}

std::optional<double> number_value(const toml::node& node) {
  if (node.is_integer()) return static_cast<double>(**node.as_integer());
  if (node.is_floating_point()) return **node.as_floating_point();
  return std::nullopt;
}

void TableReader::fail(std::string_view field, std::string_view problem) const {
  throw InputError(fmt::format("{}: {}: field '{}' {}", origin_, what_, field, problem));
}

}  // namespace gpusage::toml_data
