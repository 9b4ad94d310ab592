#include "report/monitor_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/device/metric_fields.hpp"
#include "core/device/sample_json.hpp"

namespace gpusage::report {

namespace {

template <class T>
bool parse_number(const std::string& cell, T& out) {
  const char* end = cell.data() + cell.size();
  auto [ptr, ec] = std::from_chars(cell.data(), end, out);
  return ec == std::errc() && ptr == end;
}

MonitorLog parse_csv(std::istringstream& in, const std::string& origin) {
  MonitorLog log;
  log.origin = origin;
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::size_t> column;
  const std::vector<std::string> header = text::csv_fields(line);
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* key : {"unix_time_s", "gpu", "name", "uuid"}) {
    if (!column.count(key))
      throw InputError(fmt::format("--monitor-log '{}': the CSV header has no '{}' column", origin, key));
  }
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> cells = text::csv_fields(line);
    if (cells.size() != header.size()) {
      throw InputError(fmt::format("--monitor-log '{}' line {}: {} fields where the header has {}", origin, number,
                                   cells.size(), header.size()));
    }
    auto cell = [&](const std::string& key) -> const std::string& {
      static const std::string empty;
      auto it = column.find(key);
      return it == column.end() ? empty : cells[it->second];
    };
    double time_s = 0;
    if (!parse_number(cell("unix_time_s"), time_s)) {
      throw InputError(fmt::format("--monitor-log '{}' line {}: unix_time_s '{}' is not a number", origin, number,
                                   cell("unix_time_s")));
    }
    // Rows of one sample are consecutive and share the time.
    if (log.samples.empty() || log.samples.back().unix_time_s != time_s) {
      device::Sample sample;
      sample.unix_time_s = time_s;
      sample.backend = "log";
      device::for_each_metric(sample.host, [&](const char* key, auto& value) {
        typename std::remove_reference_t<decltype(value)>::value_type parsed{};
        if (parse_number(cell(std::string("host_") + key), parsed)) value = parsed;
      });
      log.samples.push_back(std::move(sample));
    }
    if (cell("gpu").empty()) continue;  // a sample taken while no GPU was available
    device::GpuSample gpu;
    if (!parse_number(cell("gpu"), gpu.index)) {
      throw InputError(
          fmt::format("--monitor-log '{}' line {}: gpu '{}' is not an index", origin, number, cell("gpu")));
    }
    gpu.name = cell("name");
    gpu.uuid = cell("uuid");
    device::for_each_metric(gpu, [&](const char* key, auto& value) {
      typename std::remove_reference_t<decltype(value)>::value_type parsed{};
      if (parse_number(cell(key), parsed)) value = parsed;
    });
    for (const std::string& xid : text::split(cell("xid_events"), '|')) {
      std::uint64_t number = 0;
      if (parse_number(xid, number)) gpu.xid_events.push_back(number);
    }
    // The CSV keeps the processes' total memory only: one process stands for them, so that the monitor's
    // rules (a training job holds memory) can be evaluated again.
    unsigned count = 0;
    std::uint64_t bytes = 0;
    if (parse_number(cell("process_count"), count) && count > 0 && parse_number(cell("process_memory_bytes"), bytes)) {
      gpu.processes.push_back({0, fmt::format("{} process(es) in the log", count), bytes, std::nullopt});
    }
    log.samples.back().gpu_available = true;
    log.samples.back().gpus.push_back(std::move(gpu));
  }
  return log;
}

MonitorLog parse_json_lines(std::istringstream& in, const std::string& origin) {
  MonitorLog log;
  log.origin = origin;
  log.json_lines = true;
  std::set<std::tuple<unsigned, std::string, double, unsigned>> seen;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      log.samples.push_back(device::sample_from_json(j));
      for (const auto& a : j.value("alerts", nlohmann::json::array())) {
        AlertMark mark{a.at("since_unix_time_s").get<double>(), device::unsigned_from_json(a.at("gpu"), "gpu"),
                       a.at("kind").get<std::string>(), a.value("severity", ""), a.value("message", "")};
        // An alert is listed on every sample while it holds; it was raised once. XID events of one sample share
        // their time: their numbers tell them apart.
        const unsigned xid = a.contains("xid") ? device::unsigned_from_json(a.at("xid"), "xid") : 0;
        if (seen.insert({mark.gpu, mark.kind, mark.unix_time_s, xid}).second) log.alerts.push_back(std::move(mark));
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(
          fmt::format("--monitor-log '{}' line {} is not a gpusage monitor sample: {}", origin, number, e.what()));
    }
  }
  return log;
}

}  // namespace

MonitorLog parse_monitor_log(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  MonitorLog log;
  if (first != std::string::npos && text[first] == '{') {
    log = parse_json_lines(in, origin);
  } else if (text.starts_with("time_utc,")) {
    log = parse_csv(in, origin);
  } else {
    throw InputError(
        fmt::format("--monitor-log '{}' is not a gpusage monitor log (expected the CSV or JSON Lines "
                    "that `gpusage monitor --log FILE.csv|FILE.jsonl` writes)",
                    origin));
  }
  if (log.samples.empty()) throw InputError(fmt::format("--monitor-log '{}' holds no samples", origin));
  if (std::none_of(log.samples.begin(), log.samples.end(), [](const device::Sample& s) { return !s.gpus.empty(); })) {
    throw InputError(
        fmt::format("--monitor-log '{}' has no GPU readings (it was recorded while no GPU was available)", origin));
  }
  return log;
}

MonitorLog read_monitor_log(const std::string& path) {
  return parse_monitor_log(io::read_file(path, "--monitor-log file"), path);
}

}  // namespace gpusage::report
