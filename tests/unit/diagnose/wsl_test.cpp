// WSL 2 (core/diagnose/environment_wsl): recognised by its kernel, its pitfalls found on fixture machines
// (tests/fixtures/doctor/envs/wsl2-*: the files a WSL 2 Ubuntu has, read through the live prober rooted there).
#include <gtest/gtest.h>

#include "core/diagnose/environment_rules.hpp"
#include "core/diagnose/environment_wsl.hpp"
#include "core/diagnose/probe.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

std::string machine(const std::string& name) { return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/envs/" + name; }

// The fixture machine's facts, with an RTX 4090 (24 GiB) as NVML would report it there.
EnvironmentFacts probe_machine(const std::string& name) {
  HostOptions options;
  options.root = machine(name);
  options.search_path = {machine(name) + "/bin"};  // no python3 there
  auto env = open_host_environment(options);
  EnvironmentFacts facts = probe(*env, {});
  facts.system.available = true;
  device::GpuInfo gpu;
  gpu.name = "NVIDIA GeForce RTX 4090";
  gpu.memory_total_bytes = 24ULL << 30;
  facts.system.gpus = {gpu};
  return facts;
}

TEST(Wsl, RecognisesWsl2ByItsKernelOnly) {
  EXPECT_TRUE(is_wsl2_kernel("5.15.167.4-microsoft-standard-WSL2\n"));
  EXPECT_TRUE(is_wsl2_kernel("6.6.36.6-microsoft-standard-WSL2+"));
  EXPECT_FALSE(is_wsl2_kernel("4.4.0-19041-Microsoft"));  // WSL 1: no GPU support at all
  EXPECT_FALSE(is_wsl2_kernel("6.1.0-18-amd64"));
}

TEST(Wsl, ReadsMemTotalAndTheLinuxDriverPackages) {
  EXPECT_EQ(parse_meminfo_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n").value_or(0), 16318412ULL * 1024);
  EXPECT_FALSE(parse_meminfo_total("MemFree: 1 kB\n").has_value());
  const std::string status = "Package: nvidia-driver-550\nStatus: install ok installed\nVersion: 550.120-0ubuntu1\n\n"
                             "Package: nvidia-utils-535\nStatus: deinstall ok config-files\nVersion: 535.183\n\n"
                             "Package: cuda-drivers-560\nStatus: install ok installed\nVersion: 560.35.03-1\n\n"
                             "Package: nvidia-settings\nStatus: install ok installed\nVersion: 510\n";
  EXPECT_EQ(linux_driver_packages(status),
            (std::vector<std::string>{"nvidia-driver-550 550.120-0ubuntu1", "cuda-drivers-560 560.35.03-1"}));
}

TEST(Wsl, FindsALinuxDriverTheLoaderPathAndTheMemoryLimit) {
  const EnvironmentFacts facts = probe_machine("wsl2-linux-driver");
  ASSERT_TRUE(facts.wsl.has_value());
  EXPECT_EQ(facts.wsl->kernel, "5.15.167.4-microsoft-standard-WSL2");
  EXPECT_TRUE(facts.wsl->gpu_libraries);
  EXPECT_FALSE(facts.wsl->on_loader_path);  // no ld.so.cache listing /usr/lib/wsl/lib
  EXPECT_EQ(facts.wsl->memory_bytes.value_or(0), 16318412ULL * 1024);
  const auto findings = check_environment(facts);
  const auto wsl = find(findings, "wsl2");
  ASSERT_TRUE(wsl.has_value());
  EXPECT_EQ(wsl->severity, Severity::info);
  EXPECT_NE(wsl->title.find("15.6 GiB of memory"), std::string::npos) << wsl->title;
  const auto driver = find(findings, "wsl-linux-driver");
  ASSERT_TRUE(driver.has_value());
  EXPECT_EQ(driver->severity, Severity::error);
  EXPECT_EQ(driver->evidence, "found: nvidia-driver-550 550.120-0ubuntu0.22.04.1, libnvidia-compute-550 "
                              "550.120-0ubuntu0.22.04.1, /usr/lib/x86_64-linux-gnu/libcuda.so.1");
  const auto loader = find(findings, "wsl-lib-not-on-loader-path");
  ASSERT_TRUE(loader.has_value());
  EXPECT_NE(loader->fix.find("echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf"), std::string::npos);
  const auto memory = find(findings, "wsl-memory-limit");
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->title, "The WSL 2 VM has 15.6 GiB of memory, less than its GPUs' 24.0 GiB");
  EXPECT_FALSE(find(findings, "wsl-gpu-libraries-missing").has_value());
}

TEST(Wsl, AHealthyWsl2IsRecognisedAndNothingElse) {
  const EnvironmentFacts facts = probe_machine("wsl2-ok");
  ASSERT_TRUE(facts.wsl.has_value());
  EXPECT_TRUE(facts.wsl->on_loader_path);
  EXPECT_TRUE(facts.wsl->linux_driver.empty());
  const auto findings = check_environment(facts);
  EXPECT_TRUE(find(findings, "wsl2").has_value());
  for (const char* id : {"wsl-linux-driver", "wsl-lib-not-on-loader-path", "wsl-gpu-libraries-missing",
                         "wsl-memory-limit"}) {
    EXPECT_FALSE(find(findings, id).has_value()) << id;
  }
}

TEST(Wsl, NativeLinuxHasNoWslFacts) {
  const EnvironmentFacts facts = probe_machine("rtx5090-old-torch");
  EXPECT_FALSE(facts.wsl.has_value());
  for (const auto& id : ids(check_environment(facts))) EXPECT_EQ(id.rfind("wsl", 0), std::string::npos) << id;
}

TEST(Wsl, TheWindowsDriverIsJudgedByTheCudaVersionNvmlReports) {
  EnvironmentFacts facts;
  facts.wsl = WslFacts{"5.15.167.4-microsoft-standard-WSL2", true, true, {}, 32ULL << 30};
  facts.system.available = true;
  facts.driver_version = "560.94";  // a Windows driver number
  facts.python.interpreter = "python3";
  facts.python.path = "/usr/bin/python3";
  facts.python.ran = true;
  facts.python.version = "3.11.9";
  facts.python.torch_reported = true;
  facts.python.torch_version = "2.9.0+cu130";
  facts.python.torch_cuda = "13.0";
  // Without NVML's CUDA version: the Linux table does not apply to Windows numbers, so no verdict.
  EXPECT_FALSE(find(check_environment(facts), "driver-too-old").has_value());
  EXPECT_FALSE(find(check_environment(facts), "wsl-driver-too-old").has_value());
  facts.cuda_driver_version = device::CudaVersion{12, 6};
  const auto findings = check_environment(facts);
  const auto old = find(findings, "wsl-driver-too-old");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->title, "The Windows driver 560.94 (CUDA 12.6) is too old for PyTorch 2.9.0+cu130 built with CUDA 13.0");
  EXPECT_FALSE(find(findings, "driver-too-old").has_value());
  facts.python.torch_cuda = "12.8";  // same major, driver past 12.x's minor-compatibility floor
  EXPECT_TRUE(find(check_environment(facts), "wsl-driver-minor-compat").has_value());
}

}  // namespace
}  // namespace gpusage::diagnose
