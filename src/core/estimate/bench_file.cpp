#include "core/estimate/bench_file.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"

namespace gpusage::estimate {

namespace {

template <class T>
std::optional<T> optional_number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

BenchFile parse_bench_file(const std::string& json_text, const std::string& origin, std::string_view option) {
  const std::string where = fmt::format("{} '{}'", option, origin);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond a double (1e999)
    throw InputError(fmt::format("{}: not valid JSON ({})", where, e.what()));
  }
  auto require = [&](const nlohmann::json& j, const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
      throw InputError(fmt::format("{}: missing '{}' (expected gpusage bench --format json output)", where, key));
    }
    return j[key];
  };
  try {
    BenchFile file;
    file.origin = origin;
    const auto& environment = require(doc, "environment");
    file.device = environment.value("device", std::string("cuda"));
    file.device_name = require(environment, "device_name").get<std::string>();
    file.model = require(doc, "model").get<std::string>();
    file.precision = require(doc, "precision").get<std::string>();
    if (doc.contains("optimizer") && doc["optimizer"].is_string()) file.optimizer = doc["optimizer"].get<std::string>();
    file.resolution = optional_number<int>(doc, "resolution");
    file.seq_len = optional_number<int>(doc, "seq_len");
    for (const auto& run : require(doc, "runs")) {
      BenchRun r;
      r.batch = require(run, "batch").get<int>();
      r.ok = run.value("status", std::string("ok")) == "ok";
      if (run.contains("failure") && run["failure"].is_string()) r.failure = run["failure"].get<std::string>();
      r.throughput = optional_number<double>(run, "throughput");
      r.peak_memory_bytes = optional_number<double>(run, "peak_memory_bytes");
      file.runs.push_back(std::move(r));
    }
    if (file.runs.empty()) throw InputError(fmt::format("{}: 'runs' is empty", where));
    return file;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: unexpected value ({})", where, e.what()));
  }
}

}  // namespace gpusage::estimate
