// JSON helpers shared by every writer: a metric that may be missing is written as null, never as 0.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "core/common/error.hpp"

namespace gpusage::json_util {

template <class T>
nlohmann::json optional(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// A number too large for the field it fills (found by fuzz/bench_json: a resolution of 9.2e21 read into an
// int, undefined behaviour). Readers add the file's name.
class NumberOutOfRange : public InputError {
 public:
  using InputError::InputError;
};

// `value` (a JSON number) as T. An integral T takes only numbers inside its range: a float beyond 2^53 or a
// whole number past T's limits throws NumberOutOfRange naming `key`, instead of an undefined conversion.
template <class T>
T number_as(const nlohmann::json& value, const char* key) {
  if constexpr (std::is_integral_v<T>) {
    auto out_of_range = [&] {
      return NumberOutOfRange(fmt::format("'{}' is {}, outside the whole numbers {} to {}", key, value.dump(),
                                          std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    };
    std::int64_t whole = 0;
    if (value.is_number_unsigned()) {
      const auto u = value.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) throw out_of_range();
      whole = static_cast<std::int64_t>(u);
    } else if (value.is_number_integer()) {
      whole = value.get<std::int64_t>();
    } else {
      const double d = value.get<double>();
      if (!(std::fabs(d) < 9007199254740992.0)) throw out_of_range();  // 2^53, NaN and infinities included
      whole = static_cast<std::int64_t>(d);
    }
    if constexpr (std::is_signed_v<T>) {
      if (whole < std::numeric_limits<T>::min() || whole > std::numeric_limits<T>::max()) throw out_of_range();
    } else {
      if (whole < 0 || static_cast<std::uint64_t>(whole) > std::numeric_limits<T>::max()) throw out_of_range();
    }
    return static_cast<T>(whole);
  } else {
    return value.get<T>();
  }
}

// The number under `key`, or nothing when it is absent, null or not a number (NumberOutOfRange when an
// integral T cannot hold it).
template <class T>
std::optional<T> optional_number(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return number_as<T>(*it, key);
}

// The string under `key`, or `fallback` when it is absent or not a string.
inline std::string string_or(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace gpusage::json_util
