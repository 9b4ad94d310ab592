// Windows Subsystem for Linux 2: how the doctor recognises it and what goes wrong there. Under WSL2 the GPU
// driver is the Windows one; Windows mounts its CUDA and NVML libraries into the Linux VM at /usr/lib/wsl/lib
// (NVIDIA, CUDA on WSL User Guide), and the VM's memory is a share of the host's that .wslconfig sets
// (Microsoft, Advanced settings configuration in WSL).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/environment.hpp"
#include "core/diagnose/finding.hpp"
#include "core/diagnose/rules.hpp"

namespace gpusage::diagnose {

struct EnvironmentFacts;

struct WslFacts {
  std::string kernel;                         // /proc/sys/kernel/osrelease, "5.15.167.4-microsoft-standard-WSL2"
  bool gpu_libraries = false;                 // /usr/lib/wsl/lib/libcuda.so.1 exists (the Windows driver's libcuda)
  bool on_loader_path = false;                // /etc/ld.so.cache or $LD_LIBRARY_PATH has /usr/lib/wsl/lib
  std::vector<std::string> linux_driver;      // signs of a Linux NVIDIA driver inside the VM: packages, files
  std::optional<std::uint64_t> memory_bytes;  // MemTotal of /proc/meminfo: the VM's memory
};

// WSL2's kernels name themselves "…-microsoft-standard-WSL2" (WSL1 has no Linux kernel, and its
// osrelease ends in "-Microsoft").
bool is_wsl2_kernel(std::string_view osrelease);
// "MemTotal:       16318412 kB" -> bytes.
std::optional<std::uint64_t> parse_meminfo_total(std::string_view meminfo);
// Installed packages of a dpkg status file that are a Linux NVIDIA driver (nvidia-driver-*, cuda-drivers*,
// libnvidia-compute-*, nvidia-utils-*), "name version".
std::vector<std::string> linux_driver_packages(std::string_view dpkg_status);

// The facts, when the kernel is WSL2's; nullopt elsewhere (nothing else is read then).
std::optional<WslFacts> probe_wsl(Environment& env);

// The WSL2 findings (recognised, a Linux driver inside, /usr/lib/wsl/lib not loadable, memory limit).
void check_wsl(const EnvironmentFacts& facts, const RuleTable& rules, std::vector<Finding>& out);

}  // namespace gpusage::diagnose
