#include "core/device/sample_json.hpp"

#include "core/device/fields.hpp"

namespace gpusage::device {

namespace {

using nlohmann::json;

template <class T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

template <class T>
void read_optional(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
  } else {
    out = it->get<T>();
  }
}

}  // namespace

json to_json(const GpuSample& gpu) {
  json j = {{"index", gpu.index}, {"name", gpu.name}, {"uuid", gpu.uuid}};
  for_each_metric(gpu, [&](const char* key, const auto& value) { j[key] = optional_json(value); });
  // Readable throttle reasons beside the raw mask (the mask keeps bits gpusage does not know yet).
  j["throttle_reasons"] = gpu.throttle_mask ? json(throttle::decode_ids(*gpu.throttle_mask)) : json(nullptr);
  json processes = json::array();
  for (const GpuProcess& p : gpu.processes)
    processes.push_back({{"pid", p.pid},
                         {"name", p.name},
                         {"used_memory_bytes", optional_json(p.used_memory_bytes)},
                         {"cpu_percent", optional_json(p.cpu_percent)}});
  j["processes"] = std::move(processes);
  return j;
}

json to_json(const HostSample& host) {
  json j = json::object();
  for_each_metric(host, [&](const char* key, const auto& value) { j[key] = optional_json(value); });
  return j;
}

json to_json(const Sample& sample) {
  json gpus = json::array();
  for (const GpuSample& gpu : sample.gpus) gpus.push_back(to_json(gpu));
  return {{"unix_time_s", sample.unix_time_s},
          {"backend", sample.backend},
          {"gpu_available", sample.gpu_available},
          {"gpu_message", sample.gpu_message.empty() ? json(nullptr) : json(sample.gpu_message)},
          {"driver_version", optional_json(sample.driver_version)},
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
    std::string text = it->get<std::string>();
    auto dot = text.find('.');
    if (dot != std::string::npos)
      s.cuda_driver_version = CudaVersion{std::stoi(text.substr(0, dot)), std::stoi(text.substr(dot + 1))};
  }
  if (auto it = j.find("host"); it != j.end() && it->is_object())
    for_each_metric(s.host, [&](const char* key, auto& value) { read_optional(*it, key, value); });
  for (const json& g : j.value("gpus", json::array())) {
    GpuSample gpu;
    gpu.index = g.at("index").get<unsigned>();
    gpu.name = g.value("name", "");
    gpu.uuid = g.value("uuid", "");
    for_each_metric(gpu, [&](const char* key, auto& value) { read_optional(g, key, value); });
    for (const json& p : g.value("processes", json::array())) {
      GpuProcess process;
      process.pid = p.at("pid").get<unsigned>();
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
