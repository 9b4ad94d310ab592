// JSON helpers shared by every writer: a metric that may be missing is written as null, never as 0.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace gpusage::json_util {

template <class T>
nlohmann::json optional(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The number under `key`, or nothing when it is absent, null or not a number.
template <class T>
std::optional<T> optional_number(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<T>();
}

// The string under `key`, or `fallback` when it is absent or not a string.
inline std::string string_or(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace gpusage::json_util
