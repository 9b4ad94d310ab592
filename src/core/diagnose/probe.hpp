// What the doctor learns about the machine: driver, GPUs, CUDA toolkit, cuDNN, NCCL, LibTorch and the
// Python frameworks, each probed through an Environment. Missing pieces are empty, never errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device/backend.hpp"
#include "core/diagnose/environment.hpp"
#include "core/diagnose/environment_wsl.hpp"

namespace gpusage::diagnose {

struct Installed {
  std::string version;  // "12.4.131", "9.1.0"
  std::string where;    // the file or program it was read from
};

struct PythonInfo {
  std::string interpreter;  // what was asked for ("python3" or --python)
  std::string path;         // resolved executable; empty when not found
  bool ran = false;         // the interpreter started
  bool timed_out = false;
  double timeout_s = 0;                           // the deadline it ran under
  std::optional<std::string> version;             // "3.11.4"
  bool packages_reported = false;                 // the importlib.metadata step finished
  std::optional<std::string> torch_distribution;  // pip metadata versions
  std::optional<std::string> tensorflow;
  std::optional<std::string> tensorflow_gpu;
  bool torch_reported = false;               // the `import torch` step finished (successfully or not)
  std::optional<std::string> torch_version;  // torch.__version__
  std::optional<std::string> torch_cuda;     // torch.version.cuda; empty for CPU-only builds
  std::vector<std::string> torch_arch_list;  // "sm_80", "compute_90", …
  std::optional<bool> torch_cuda_available;
  std::optional<std::string> torch_error;  // "ModuleNotFoundError: No module named 'torch'"
};

struct EnvironmentFacts {
  device::SystemInfo system;
  std::optional<std::string> driver_version;
  std::string driver_from;  // "NVML" or "/proc/driver/nvidia/version"
  std::optional<device::CudaVersion> cuda_driver_version;
  std::optional<Installed> nvcc;
  std::optional<Installed> cudnn;
  std::optional<Installed> nccl;
  std::optional<Installed> libtorch;
  PythonInfo python;
  std::optional<std::string> tf_force_gpu_allow_growth;
  std::optional<unsigned> cpu_count;
  std::optional<WslFacts> wsl;  // under WSL2 only (core/diagnose/environment_wsl.hpp)
};

struct ProbeOptions {
  std::string python = "python3";
  double python_timeout_s = 2.0;
  double tool_timeout_s = 1.0;  // nvcc --version (about 50 ms when healthy)
};

// Asks `env` for everything; quick (every command has a deadline) and never throws for a missing piece.
EnvironmentFacts probe(Environment& env, const ProbeOptions& options = {});

// Parsers, public for the tests (they run on real output formats).
// "Cuda compilation tools, release 12.4, V12.4.131" -> "12.4.131" (or "12.4" without the V part).
std::optional<std::string> parse_nvcc_version(std::string_view text);
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar …" -> "550.54.15".
std::optional<std::string> parse_proc_driver_version(std::string_view text);
// "#define CUDNN_MAJOR 9" … joined by dots, for the given macro names in order; all must be present.
std::optional<std::string> parse_define_version(std::string_view header, const std::vector<std::string>& macros);
// The Version: field of `package` in a dpkg status file, when it is installed.
std::optional<std::string> parse_dpkg_version(std::string_view status, std::string_view package);
// The JSON lines the Python probe prints (python_probe_script), into `info`. Lines that do not parse are
// skipped (a partial run stopped at the deadline still yields what it printed).
void parse_python_probe(std::string_view out, PythonInfo& info);
// The script run as `python -c`: prints one JSON object per line as each step finishes.
const char* python_probe_script();
// Logical CPUs in /proc/cpuinfo text ("processor : N" lines).
std::optional<unsigned> parse_cpu_count(std::string_view cpuinfo);

}  // namespace gpusage::diagnose
