#include "core/diagnose/probe.hpp"

#include <future>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/common/text.hpp"

namespace gpusage::diagnose {

namespace {

std::vector<std::string> lines_of(std::string_view text) { return text::split(text, '\n'); }

// An environment variable that is set and not empty (CUDA_HOME= means unset).
std::optional<std::string> variable(Environment& env, const std::string& name) {
  auto value = env.getenv(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// Header locations: distribution packages, the CUDA toolkit, and $CUDA_HOME when set.
std::vector<std::string> include_dirs(Environment& env) {
  std::vector<std::string> dirs = {"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/local/cuda/include",
                                   "/usr/local/include"};
  if (auto home = variable(env, "CUDA_HOME")) dirs.insert(dirs.begin(), *home + "/include");
  return dirs;
}

std::optional<Installed> header_version(Environment& env, const std::vector<std::string>& names,
                                        const std::vector<std::string>& macros) {
  for (const auto& dir : include_dirs(env)) {
    for (const auto& name : names) {
      const std::string path = dir + "/" + name;
      if (auto text = env.read_file(path)) {
        if (auto v = parse_define_version(*text, macros)) return Installed{*v, path};
      }
    }
  }
  return std::nullopt;
}

std::optional<Installed> probe_libtorch(Environment& env) {
  const std::string header = "/include/torch/csrc/api/include/torch/version.h";
  std::vector<std::string> prefixes;
  if (auto dir = variable(env, "LIBTORCH")) prefixes.push_back(*dir);
  prefixes.insert(prefixes.end(), {"/usr", "/usr/local", "/opt/libtorch"});
  for (const auto& prefix : prefixes) {
    const std::string path = prefix + header;
    if (auto text = env.read_file(path)) {
      if (auto v = parse_define_version(*text, {"TORCH_VERSION_MAJOR", "TORCH_VERSION_MINOR", "TORCH_VERSION_PATCH"})) {
        return Installed{*v, path};
      }
    }
  }
  // Debian/Ubuntu's libtorch-dev package, when the header is elsewhere.
  if (auto status = env.read_file("/var/lib/dpkg/status")) {
    if (auto v = parse_dpkg_version(*status, "libtorch-dev")) return Installed{*v, "dpkg: libtorch-dev"};
  }
  return std::nullopt;
}

void probe_python(Environment& env, const ProbeOptions& options, PythonInfo& info) {
  info.interpreter = options.python;
  info.timeout_s = options.python_timeout_s;
  auto path = env.find_program(options.python);
  if (!path) return;
  info.path = *path;
  const CommandResult r = env.run({*path, "-c", python_probe_script()}, options.python_timeout_s);
  info.ran = r.started;
  info.timed_out = r.timed_out;
  parse_python_probe(r.out, info);
}

}  // namespace

const char* python_probe_script() {
  // One JSON object per line, flushed, so a run stopped at the deadline still reports the steps it
  // finished. Package versions come from importlib.metadata (no import: fast); torch is imported for its
  // build facts. _cuda_getArchFlags is what torch.cuda.get_arch_list() splits, without the check for a
  // usable GPU that makes get_arch_list() return [] on a machine without one.
  return R"PY(import json, sys
def emit(key, value):
    print(json.dumps({key: value}), flush=True)
emit("python", sys.version.split()[0])
try:
    from importlib import metadata
except ImportError:
    metadata = None
packages = {}
for name in ("torch", "tensorflow", "tensorflow-gpu"):
    try:
        packages[name] = metadata.version(name) if metadata else None
    except Exception:
        packages[name] = None
emit("packages", packages)
try:
    import torch
    info = {"version": str(torch.__version__), "cuda": torch.version.cuda}
    try:
        flags = torch._C._cuda_getArchFlags()
    except Exception:
        flags = None
    info["arch_list"] = flags.split() if flags else []
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
    except Exception:
        info["cuda_available"] = None
    emit("torch", info)
except Exception as e:
    emit("torch_error", type(e).__name__ + ": " + str(e))
)PY";
}

void parse_python_probe(std::string_view out, PythonInfo& info) {
  auto text_or_empty = [](const nlohmann::json& j) -> std::optional<std::string> {
    if (j.is_string()) return j.get<std::string>();
    return std::nullopt;
  };
  for (const auto& line : lines_of(out)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("python")) info.version = text_or_empty(j["python"]);
    if (j.contains("packages") && j["packages"].is_object()) {
      const auto& p = j["packages"];
      info.packages_reported = true;
      if (p.contains("torch")) info.torch_distribution = text_or_empty(p["torch"]);
      if (p.contains("tensorflow")) info.tensorflow = text_or_empty(p["tensorflow"]);
      if (p.contains("tensorflow-gpu")) info.tensorflow_gpu = text_or_empty(p["tensorflow-gpu"]);
    }
    if (j.contains("torch") && j["torch"].is_object()) {
      const auto& t = j["torch"];
      info.torch_reported = true;
      if (t.contains("version")) info.torch_version = text_or_empty(t["version"]);
      if (t.contains("cuda")) info.torch_cuda = text_or_empty(t["cuda"]);
      if (t.contains("arch_list") && t["arch_list"].is_array()) {
        for (const auto& a : t["arch_list"]) {
          if (a.is_string()) info.torch_arch_list.push_back(a.get<std::string>());
        }
      }
      if (t.contains("cuda_available") && t["cuda_available"].is_boolean()) {
        info.torch_cuda_available = t["cuda_available"].get<bool>();
      }
    }
    if (j.contains("torch_error")) {
      info.torch_reported = true;
      info.torch_error = text_or_empty(j["torch_error"]);
    }
  }
}

std::optional<std::string> parse_nvcc_version(std::string_view text) {
  static const std::regex pattern(R"(release (\d+\.\d+)(?:, V(\d+\.\d+\.\d+))?)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, pattern)) return std::nullopt;
  return m[2].matched ? m[2].str() : m[1].str();
}

std::optional<std::string> parse_proc_driver_version(std::string_view text) {
  // Proprietary: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 …"
  // Open modules: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build …"
  static const std::regex pattern(R"(NVRM version:.*?Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)(?:\s|$))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, pattern)) return std::nullopt;
  return m[1].str();
}

std::optional<std::string> parse_define_version(std::string_view header, const std::vector<std::string>& macros) {
  std::string version;
  for (const auto& macro : macros) {
    const std::regex pattern("#\\s*define\\s+" + macro + "\\s+(\\d+)");
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(header.begin(), header.end(), m, pattern)) return std::nullopt;
    version += (version.empty() ? "" : ".") + m[1].str();
  }
  return version;
}

std::optional<std::string> parse_dpkg_version(std::string_view status, std::string_view package) {
  // Paragraphs separated by blank lines; "Package:", "Status: install ok installed", "Version:".
  bool in_package = false;
  bool installed = false;
  std::optional<std::string> version;
  for (const auto& raw : lines_of(status)) {
    const std::string line = text::trim(raw);
    if (line.empty()) {
      if (in_package && installed && version) return version;
      in_package = installed = false;
      version.reset();
      continue;
    }
    if (line.rfind("Package:", 0) == 0) in_package = text::trim(line.substr(8)) == package;
    if (!in_package) continue;
    if (line.rfind("Status:", 0) == 0)
      installed = line.find("installed") != std::string::npos && line.find("not-installed") == std::string::npos;
    if (line.rfind("Version:", 0) == 0) version = text::trim(line.substr(8));
  }
  if (in_package && installed && version) return version;
  return std::nullopt;
}

std::optional<unsigned> parse_cpu_count(std::string_view cpuinfo) {
  unsigned count = 0;
  for (const auto& line : lines_of(cpuinfo)) {
    if (line.rfind("processor", 0) == 0 && line.find(':') != std::string::npos) ++count;
  }
  if (count == 0) return std::nullopt;
  return count;
}

EnvironmentFacts probe(Environment& env, const ProbeOptions& options) {
  EnvironmentFacts facts;
  // The python probe is the slow one (importing torch): it runs beside the rest, so the whole probe takes
  // about as long as the python deadline at worst.
  auto python = std::async(std::launch::async, [&env, &options] {
    PythonInfo info;
    probe_python(env, options, info);
    return info;
  });
  facts.system = env.gpus();
  if (facts.system.driver_version) {
    facts.driver_version = facts.system.driver_version;
    facts.driver_from = "NVML";
  } else if (auto text = env.read_file("/proc/driver/nvidia/version")) {
    facts.driver_version = parse_proc_driver_version(*text);
    if (facts.driver_version) facts.driver_from = "/proc/driver/nvidia/version";
  }
  facts.cuda_driver_version = facts.system.cuda_driver_version;

  std::vector<std::string> cuda_bins = {"/usr/local/cuda/bin"};
  if (auto home = variable(env, "CUDA_HOME")) cuda_bins.insert(cuda_bins.begin(), *home + "/bin");
  if (auto nvcc = env.find_program("nvcc", cuda_bins)) {
    const CommandResult r = env.run({*nvcc, "--version"}, options.tool_timeout_s);
    if (auto v = parse_nvcc_version(r.out)) facts.nvcc = Installed{*v, *nvcc};
  }
  // cuDNN 8+ keeps its version in cudnn_version.h; 7 and older in cudnn.h.
  facts.cudnn = header_version(env, {"cudnn_version.h", "cudnn.h"}, {"CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"});
  facts.nccl = header_version(env, {"nccl.h"}, {"NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"});
  facts.libtorch = probe_libtorch(env);
  facts.python = python.get();
  facts.tf_force_gpu_allow_growth = env.getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  if (auto cpuinfo = env.read_file("/proc/cpuinfo")) facts.cpu_count = parse_cpu_count(*cpuinfo);
  facts.wsl = probe_wsl(env);
  return facts;
}

}  // namespace gpusage::diagnose
