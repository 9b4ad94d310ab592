// TOML data files read one way (the GPU catalog, the price book): a syntax error, and every problem a
// reader finds in a table, is an InputError naming the file, the table and the field. Core-internal:
// toml++ stays out of the public headers.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>

namespace gpusage::toml_data {

// Throws InputError "origin:line:column: what is wrong" on a syntax error.
toml::table parse(std::string_view text, const std::string& origin);

// A TOML integer or float as a double; nullopt for any other node (each reader words its own error).
std::optional<double> number_value(const toml::node& node);

// The base of a reader of one table: `what` names the table in messages ("gpu 'rtx5090'", "rent #2").
class TableReader {
 public:
  TableReader(const toml::table& table, const std::string& origin, std::string what)
      : table_(table), origin_(origin), what_(std::move(what)) {}

  // Throws InputError "origin: what: field 'field' problem".
  [[noreturn]] void fail(std::string_view field, std::string_view problem) const;

 protected:
  const toml::table& table_;
  const std::string& origin_;
  std::string what_;
};

}  // namespace gpusage::toml_data
