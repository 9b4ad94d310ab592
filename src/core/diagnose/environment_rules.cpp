#include "core/diagnose/environment_rules.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/common/text.hpp"
#include "core/device/query.hpp"

namespace gpusage::diagnose {

namespace {

struct ArchFlag {
  bool ptx = false;       // compute_XY
  bool specific = false;  // sm_XYa: runs only on exactly XY
  int major = 0;
  int minor = 0;
};

// "sm_86" -> 8.6, "sm_120" -> 12.0, "sm_90a" -> 9.0 specific, "compute_90" -> PTX 9.0.
std::optional<ArchFlag> parse_arch_flag(const std::string& flag) {
  ArchFlag f;
  std::string digits;
  std::string rest;
  if (flag.rfind("sm_", 0) == 0) {
    rest = flag.substr(3);
  } else if (flag.rfind("compute_", 0) == 0) {
    f.ptx = true;
    rest = flag.substr(8);
  } else {
    return std::nullopt;
  }
  std::size_t i = 0;
  while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) digits += rest[i++];
  if (digits.size() < 2) return std::nullopt;
  f.specific = i < rest.size() && rest[i] == 'a';
  const int value = std::stoi(digits);
  f.major = value / 10;
  f.minor = value % 10;
  return f;
}

std::string pcie_text(std::optional<unsigned> gen, std::optional<unsigned> width) {
  std::string s = gen ? fmt::format("Gen{}", *gen) : std::string("Gen?");
  if (width) s += fmt::format(" x{}", *width);
  return s;
}

std::string watts(double w) { return fmt::format("{:.0f}", w); }

// The driver-versus-CUDA rule for one consumer of the driver (the toolkit, a framework build).
void check_driver_for(const std::string& what, const std::string& cuda_text, const EnvironmentFacts& facts,
                      const RuleTable& rules, std::vector<Finding>& out) {
  const auto cuda = Version::parse(cuda_text);
  if (!cuda || !facts.driver_version) return;
  std::optional<Version> driver_cuda;
  if (facts.cuda_driver_version) {
    driver_cuda = Version{{facts.cuda_driver_version->major, facts.cuda_driver_version->minor}};
  } else if (facts.wsl) {
    return;  // WSL2's driver is the Windows one, numbered unlike the Linux drivers of the table
  } else {
    driver_cuda = cuda_for_driver(*facts.driver_version, rules);
  }
  if (!driver_cuda) return;
  const Version wanted{{cuda->major(), cuda->minor()}};
  if (wanted <= *driver_cuda) return;
  const CudaDriverFact* need = rules.min_driver_for(wanted);
  const std::string min_driver = need ? need->linux_driver : std::string("newer");
  const Args args = {{"what", what},
                     {"cuda", wanted.to_string()},
                     {"driver", *facts.driver_version},
                     {"driver_cuda", driver_cuda->to_string()},
                     {"min_driver", min_driver}};
  // Same major and a driver at least the family's minimum: minor version compatibility still runs it.
  const MinorCompatFact* compat = rules.minor_compat(wanted.major());
  const auto driver = Version::parse(*facts.driver_version);
  const bool minor_ok =
      compat && driver && wanted.major() == driver_cuda->major() && *driver >= *Version::parse(compat->linux_driver);
  // Under WSL2 the driver to update is the Windows one, never a Linux driver inside the VM.
  if (facts.wsl) {
    out.push_back(rules.make(minor_ok ? "wsl-driver-minor-compat" : "wsl-driver-too-old", Category::environment, args));
    return;
  }
  out.push_back(rules.make(minor_ok ? "driver-minor-compat" : "driver-too-old", Category::environment, args));
}

void check_python(const EnvironmentFacts& facts, const RuleTable& rules, std::vector<Finding>& out) {
  const PythonInfo& py = facts.python;
  if (py.path.empty()) {
    out.push_back(rules.make("python-missing", Category::environment,
                             {{"python", fmt::format("no '{}' found on PATH", py.interpreter)}}));
    return;
  }
  if (!py.ran) {
    out.push_back(rules.make("python-missing", Category::environment,
                             {{"python", fmt::format("'{}' could not be started", py.path)}}));
    return;
  }
  if (!py.timed_out && !py.version) {  // ran, but not as the Python 3 the probe script needs
    out.push_back(rules.make("python-missing", Category::environment,
                             {{"python", fmt::format("'{}' ran but did not answer the probe (needs Python 3.8 or "
                                                     "newer)",
                                                     py.path)}}));
    return;
  }
  if (py.timed_out && !py.torch_reported) {
    out.push_back(rules.make("python-timeout", Category::environment,
                             {{"python", py.path}, {"seconds", fmt::format("{:g}", py.timeout_s)}}));
  }
  if (py.torch_reported && !py.torch_version) {
    out.push_back(rules.make("torch-missing", Category::environment, {{"python", py.path}},
                             py.torch_error ? *py.torch_error : std::string()));
  }
  if (py.tensorflow_gpu) {
    out.push_back(rules.make("tensorflow-gpu-package", Category::environment, {{"version", *py.tensorflow_gpu}}));
  }
  const auto tf = py.tensorflow ? py.tensorflow : py.tensorflow_gpu;
  if (tf) {
    const bool growth = facts.tf_force_gpu_allow_growth && text::to_lower(*facts.tf_force_gpu_allow_growth) == "true";
    if (!growth) out.push_back(rules.make("tensorflow-memory-growth", Category::environment, {{"version", *tf}}));
  }
  if (py.torch_version) {
    const std::size_t gpus = facts.system.gpus.size();
    if (!py.torch_cuda && gpus > 0) {
      out.push_back(rules.make("torch-cpu-only", Category::environment,
                               {{"version", *py.torch_version}, {"gpus", std::to_string(gpus)}}));
    }
    if (py.torch_cuda) check_driver_for("PyTorch " + *py.torch_version, *py.torch_cuda, facts, rules, out);
    for (const auto& gpu : facts.system.gpus) {
      if (!gpu.compute_capability || py.torch_arch_list.empty()) continue;
      const auto cc = *gpu.compute_capability;
      if (arch_list_covers(py.torch_arch_list, cc.major, cc.minor)) continue;
      const ArchitectureFact* arch = rules.architecture(cc.major, cc.minor);
      const Args args = {{"framework", "PyTorch"},
                         {"version", *py.torch_version},
                         {"index", std::to_string(gpu.index)},
                         {"gpu", gpu.name},
                         {"sm", fmt::format("{}{}", cc.major, cc.minor)},
                         {"cc", cc.to_string()},
                         {"arch_list", text::join(py.torch_arch_list, " ")},
                         {"requirement", torch_requirement(cc.major, cc.minor, rules)}};
      out.push_back(rules.make("gpu-arch-missing", Category::gpu, args, {}, {},
                               arch && !arch->sources.empty() ? arch->sources.back() : std::string()));
    }
    if (facts.system.available && !facts.system.gpus.empty()) {
      const std::string cpus = facts.cpu_count ? std::to_string(*facts.cpu_count) : std::string("available");
      out.push_back(rules.make("dataloader-defaults", Category::environment, {{"cpus", cpus}}));
    }
  }
}

void check_gpus(const EnvironmentFacts& facts, const RuleTable& rules, std::vector<Finding>& out) {
  if (!facts.system.available) {
    const std::string message = facts.system.message.empty() ? "no NVIDIA GPU found" : facts.system.message;
    out.push_back(rules.make("no-gpu", Category::gpu, {{"message", message}}));
    return;
  }
  for (const auto& gpu : facts.system.gpus) {
    const std::string index = std::to_string(gpu.index);
    if (gpu.persistence_mode && !*gpu.persistence_mode) {
      out.push_back(rules.make("persistence-mode-off", Category::gpu, {{"index", index}, {"gpu", gpu.name}}));
    }
    if (device::power_limit_reduced(gpu)) {
      out.push_back(rules.make("power-limit-reduced", Category::gpu,
                               {{"index", index},
                                {"gpu", gpu.name},
                                {"limit", watts(*gpu.power_limit_w)},
                                {"default", watts(*gpu.power_limit_default_w)}}));
    }
    if (device::pcie_link_degraded(gpu)) {
      out.push_back(rules.make("pcie-link-degraded", Category::gpu,
                               {{"index", index},
                                {"gpu", gpu.name},
                                {"current", pcie_text(gpu.pcie_gen_current, gpu.pcie_width_current)},
                                {"max", pcie_text(gpu.pcie_gen_max, gpu.pcie_width_max)}}));
    }
    if (facts.nvcc && gpu.compute_capability) {
      const auto cc = *gpu.compute_capability;
      const ArchitectureFact* arch = rules.architecture(cc.major, cc.minor);
      const auto toolkit = Version::parse(facts.nvcc->version);
      if (arch && toolkit) {
        const Version toolkit_mm{{toolkit->major(), toolkit->minor()}};
        const Args base = {{"toolkit", toolkit_mm.to_string()},
                           {"index", index},
                           {"gpu", gpu.name},
                           {"sm", arch->sm()},
                           {"arch", arch->name}};
        if (toolkit_mm < arch->first_cuda) {
          Args args = base;
          args.emplace_back("first_cuda", arch->first_cuda.to_string());
          out.push_back(rules.make("toolkit-too-old-for-gpu", Category::gpu, args, {}, {}, arch->sources.front()));
        } else if (arch->dropped_in_cuda && toolkit_mm >= *arch->dropped_in_cuda) {
          Args args = base;
          args.emplace_back("dropped", arch->dropped_in_cuda->to_string());
          out.push_back(rules.make("toolkit-dropped-gpu", Category::gpu, args));
        }
      }
    }
  }
}

}  // namespace

bool arch_list_covers(const std::vector<std::string>& arch_list, int major, int minor) {
  for (const auto& entry : arch_list) {
    const auto f = parse_arch_flag(entry);
    if (!f) continue;
    if (f->ptx) {
      if (f->major < major || (f->major == major && f->minor <= minor)) return true;
    } else if (f->specific) {
      if (f->major == major && f->minor == minor) return true;
    } else if (f->major == major && f->minor <= minor) {
      return true;
    }
  }
  return false;
}

std::optional<Version> cuda_for_driver(const std::string& driver, const RuleTable& rules) {
  const auto d = Version::parse(driver);
  if (!d) return std::nullopt;
  for (const auto& fact : rules.cuda_drivers()) {  // newest first
    const auto need = Version::parse(fact.linux_driver);
    if (need && *d >= *need) return fact.cuda;
  }
  return std::nullopt;
}

std::string torch_requirement(int major, int minor, const RuleTable& rules) {
  const ArchitectureFact* arch = rules.architecture(major, minor);
  if (!arch) return fmt::format("a PyTorch build whose torch.cuda.get_arch_list() includes sm_{}{}", major, minor);
  std::string s = arch->pytorch_min ? fmt::format("PyTorch {} or newer built for CUDA {} or newer", *arch->pytorch_min,
                                                  arch->first_cuda.to_string())
                                    : fmt::format("a PyTorch build for CUDA {} or newer", arch->first_cuda.to_string());
  if (arch->pytorch_wheel) {
    s += fmt::format(" (pip install torch --index-url https://download.pytorch.org/whl/{})", *arch->pytorch_wheel);
  }
  return s;
}

std::vector<Finding> check_environment(const EnvironmentFacts& facts, const RuleTable& rules) {
  std::vector<Finding> out;
  check_gpus(facts, rules, out);
  if (facts.nvcc) check_driver_for("CUDA toolkit (nvcc)", facts.nvcc->version, facts, rules, out);
  check_python(facts, rules, out);
  check_wsl(facts, rules, out);
  return out;
}

}  // namespace gpusage::diagnose
