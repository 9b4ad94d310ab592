#include "core/diagnose/doctor.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/common/json.hpp"
#include "core/diagnose/environment_rules.hpp"

namespace gpusage::diagnose {

namespace {

nlohmann::json installed_json(const std::optional<Installed>& value) {
  if (!value) return nullptr;
  return {{"version", value->version}, {"from", value->where}};
}

}  // namespace

std::string read_log_file(const std::string& path) {
  check_log_file(path);
  return io::read_file(path, "log file", io::kNoSizeLimit);  // logs are long; this is for text given whole
}

void check_log_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("log file '{}' is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read log file '{}'", path));
}

DoctorReport run_doctor(Environment& env, const DoctorRequest& request, const RuleTable& rules) {
  DoctorReport report;
  report.facts = probe(env, request.probe);
  std::vector<Finding> findings = check_environment(report.facts, rules);
  if (request.log_text || request.log_path || request.log_stream) {
    // A file or a stream is streamed (bounded memory however large it is); text given inline is scanned at once.
    const LogScan scan = request.log_text ? scan_log(*request.log_text)
                         : request.log_stream
                             ? scan_log_stream(*request.log_stream, request.log_path.value_or("-"), rules.thresholds())
                             : scan_log_file(*request.log_path, rules.thresholds());
    report.log_path = request.log_path;
    report.log_lines = scan.lines;
    RunContext run = request.run;
    if (!run.framework_cuda && report.facts.python.torch_cuda) run.framework_cuda = report.facts.python.torch_cuda;
    auto log = check_log(scan, run, rules);
    findings.insert(findings.end(), log.begin(), log.end());
  }
  // Grouped by category (log, environment, GPUs: with a log, its findings are what was asked), most severe
  // first within each; log findings keep the order the problems happened in.
  std::vector<Finding> ordered;
  for (Category c : {Category::log, Category::environment, Category::gpu}) {
    std::vector<Finding> group;
    for (const auto& f : findings) {
      if (f.category == c) group.push_back(f);
    }
    if (c != Category::log) sort_findings(group);
    ordered.insert(ordered.end(), group.begin(), group.end());
  }
  report.findings = std::move(ordered);
  return report;
}

nlohmann::json to_json(const Finding& f) {
  return {{"id", f.id},
          {"severity", to_string(f.severity)},
          {"category", to_string(f.category)},
          {"title", f.title},
          {"evidence", f.evidence},
          {"fix", f.fix},
          {"source", f.source_url},
          {"source_title", f.source_title}};
}

nlohmann::json to_json(const EnvironmentFacts& facts) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : facts.system.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"compute_capability", g.compute_capability ? nlohmann::json(g.compute_capability->to_string())
                                                                : nlohmann::json(nullptr)},
                    {"memory_total_bytes", json_util::optional(g.memory_total_bytes)},
                    {"persistence_mode", json_util::optional(g.persistence_mode)},
                    {"power_limit_w", json_util::optional(g.power_limit_w)},
                    {"power_limit_default_w", json_util::optional(g.power_limit_default_w)},
                    {"pcie_gen_current", json_util::optional(g.pcie_gen_current)},
                    {"pcie_gen_max", json_util::optional(g.pcie_gen_max)},
                    {"pcie_width_current", json_util::optional(g.pcie_width_current)},
                    {"pcie_width_max", json_util::optional(g.pcie_width_max)}});
  }
  const PythonInfo& py = facts.python;
  nlohmann::json python = nullptr;
  if (!py.path.empty()) {
    nlohmann::json torch = nullptr;
    if (py.torch_version) {
      torch = {{"version", *py.torch_version},
               {"cuda", json_util::optional(py.torch_cuda)},
               {"arch_list", py.torch_arch_list},
               {"cuda_available", json_util::optional(py.torch_cuda_available)}};
    }
    python = {{"interpreter", py.path},
              {"version", json_util::optional(py.version)},
              {"timed_out", py.timed_out},
              {"torch", torch},
              {"tensorflow", json_util::optional(py.tensorflow)},
              {"tensorflow_gpu", json_util::optional(py.tensorflow_gpu)}};
  }
  return {{"gpu_available", facts.system.available},
          {"gpu_message", facts.system.message},
          {"driver_version", json_util::optional(facts.driver_version)},
          {"driver_from", facts.driver_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(facts.driver_from)},
          {"cuda_driver_version", facts.cuda_driver_version ? nlohmann::json(facts.cuda_driver_version->to_string())
                                                            : nlohmann::json(nullptr)},
          {"gpus", gpus},
          {"cuda_toolkit", installed_json(facts.nvcc)},
          {"cudnn", installed_json(facts.cudnn)},
          {"nccl", installed_json(facts.nccl)},
          {"libtorch", installed_json(facts.libtorch)},
          {"python", python},
          {"cpu_count", json_util::optional(facts.cpu_count)}};
}

nlohmann::json to_json(const DoctorReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) findings.push_back(to_json(f));
  nlohmann::json log = nullptr;
  if (report.log_lines) log = {{"path", json_util::optional(report.log_path)}, {"lines", *report.log_lines}};
  return {{"findings", findings}, {"environment", to_json(report.facts)}, {"log", log}};
}

}  // namespace gpusage::diagnose
