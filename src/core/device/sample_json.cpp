#include "core/device/sample_json.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/common/json.hpp"
#include "core/device/metric_fields.hpp"

namespace gpusage::device {

namespace {

using nlohmann::json;

// A number of a recorded trace as T. nlohmann's get<T>() casts a float to an integer type unchecked, which is
// undefined beyond T's range (found by fuzz/monitor_log: 2.06e20 bytes of host memory); out of range is a
// json::out_of_range here, which the readers turn into an error naming the line.
template <class T>
T number_as(const json& value, const char* key) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const auto out_of_range = [&] {
      return json::out_of_range::create(406, fmt::format("'{}' = {} is out of range", key, value.dump()), &value);
    };
    constexpr T lowest = std::numeric_limits<T>::min(), highest = std::numeric_limits<T>::max();
    if (value.is_number_float()) {
      const double v = value.get<double>();
      // [lowest, 2^digits): both ends exact in a double, unlike highest itself.
      if (!(v >= static_cast<double>(lowest) && v < std::ldexp(1.0, std::numeric_limits<T>::digits)))
        throw out_of_range();
      return static_cast<T>(v);
    }
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(highest)) throw out_of_range();
      return static_cast<T>(v);
    }
    if (value.is_number_integer()) {
      const auto v = value.get<std::int64_t>();
      if ((std::is_unsigned_v<T> && v < 0) || (std::is_signed_v<T> && v < static_cast<std::int64_t>(lowest)) ||
          (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(highest)))
        throw out_of_range();
      return static_cast<T>(v);
    }
  }
  return value.get<T>();
}

template <class T>
void read_optional(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
  } else {
    out = number_as<T>(*it, key);
  }
}

}  // namespace

unsigned unsigned_from_json(const json& value, const char* key) { return number_as<unsigned>(value, key); }

json to_json(const GpuSample& gpu) {
  json j = {{"index", gpu.index}, {"name", gpu.name}, {"uuid", gpu.uuid}};
  for_each_metric(gpu, [&](const char* key, const auto& value) { j[key] = json_util::optional(value); });
  // Readable throttle reasons beside the raw mask (the mask keeps bits gpusage does not know yet).
  j["throttle_reasons"] = gpu.throttle_mask ? json(throttle::decode_ids(*gpu.throttle_mask)) : json(nullptr);
  j["xid_events"] = gpu.xid_events;
  json processes = json::array();
  for (const GpuProcess& p : gpu.processes)
    processes.push_back({{"pid", p.pid},
                         {"name", p.name},
                         {"used_memory_bytes", json_util::optional(p.used_memory_bytes)},
                         {"cpu_percent", json_util::optional(p.cpu_percent)}});
  j["processes"] = std::move(processes);
  return j;
}

json to_json(const HostSample& host) {
  json j = json::object();
  for_each_metric(host, [&](const char* key, const auto& value) { j[key] = json_util::optional(value); });
  return j;
}

json to_json(const Sample& sample) {
  json gpus = json::array();
  for (const GpuSample& gpu : sample.gpus) gpus.push_back(to_json(gpu));
  return {{"unix_time_s", sample.unix_time_s},
          {"backend", sample.backend},
          {"gpu_available", sample.gpu_available},
          {"gpu_message", sample.gpu_message.empty() ? json(nullptr) : json(sample.gpu_message)},
          {"driver_version", json_util::optional(sample.driver_version)},
          {"cuda_driver_version",
           sample.cuda_driver_version ? json(sample.cuda_driver_version->to_string()) : json(nullptr)},
          {"host", to_json(sample.host)},
          {"gpus", std::move(gpus)}};
}

Sample sample_from_json(const json& j) {
  Sample s;
  s.unix_time_s = j.at("unix_time_s").get<double>();
  s.backend = j.value("backend", "replay");
  s.gpu_available = j.value("gpu_available", false);
  if (auto it = j.find("gpu_message"); it != j.end() && it->is_string()) s.gpu_message = it->get<std::string>();
  read_optional(j, "driver_version", s.driver_version);
  if (auto it = j.find("cuda_driver_version"); it != j.end() && it->is_string()) {
    // "12.4"; anything else is left out (std::stoi would throw outside the readers' JSON errors).
    const std::string text = it->get<std::string>();
    int major = 0, minor = 0;
    const char* end = text.data() + text.size();
    const auto [dot, major_error] = std::from_chars(text.data(), end, major);
    if (major_error == std::errc() && dot != end && *dot == '.') {
      const auto [rest, minor_error] = std::from_chars(dot + 1, end, minor);
      if (minor_error == std::errc() && rest == end) s.cuda_driver_version = CudaVersion{major, minor};
    }
  }
  if (auto it = j.find("host"); it != j.end() && it->is_object())
    for_each_metric(s.host, [&](const char* key, auto& value) { read_optional(*it, key, value); });
  for (const json& g : j.value("gpus", json::array())) {
    GpuSample gpu;
    gpu.index = number_as<unsigned>(g.at("index"), "index");
    gpu.name = g.value("name", "");
    gpu.uuid = g.value("uuid", "");
    for_each_metric(gpu, [&](const char* key, auto& value) { read_optional(g, key, value); });
    if (auto it = g.find("xid_events"); it != g.end() && it->is_array())
      for (const json& xid : *it) gpu.xid_events.push_back(number_as<std::uint64_t>(xid, "xid_events"));
    for (const json& p : g.value("processes", json::array())) {
      GpuProcess process;
      process.pid = number_as<unsigned>(p.at("pid"), "pid");
      process.name = p.value("name", "");
      read_optional(p, "used_memory_bytes", process.used_memory_bytes);
      read_optional(p, "cpu_percent", process.cpu_percent);
      gpu.processes.push_back(std::move(process));
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

}  // namespace gpusage::device
