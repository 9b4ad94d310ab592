#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/diagnose/doctor.hpp"
#include "core/diagnose/environment_rules.hpp"
#include "core/diagnose/log_rules.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

device::GpuInfo gpu(unsigned index, const std::string& name, int major, int minor) {
  device::GpuInfo g;
  g.index = index;
  g.name = name;
  g.compute_capability = device::ComputeCapability{major, minor};
  g.persistence_mode = true;
  return g;
}

// A healthy machine: every rule quiet except the DataLoader reminder.
EnvironmentFacts healthy() {
  EnvironmentFacts f;
  f.system.available = true;
  f.system.gpus = {gpu(0, "NVIDIA H100 80GB HBM3", 9, 0)};
  f.driver_version = "550.54.15";
  f.driver_from = "NVML";
  f.cuda_driver_version = device::CudaVersion{12, 4};
  f.nvcc = Installed{"12.4.131", "/usr/local/cuda/bin/nvcc"};
  f.python.interpreter = "python3";
  f.python.path = "/usr/bin/python3";
  f.python.ran = true;
  f.python.version = "3.11.9";
  f.python.packages_reported = true;
  f.python.torch_reported = true;
  f.python.torch_version = "2.5.1+cu124";
  f.python.torch_cuda = "12.4";
  f.python.torch_arch_list = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"};
  f.cpu_count = 16;
  return f;
}

TEST(ArchListCovers, CubinsRunOnTheSameMajorWithAnEqualOrHigherMinor) {
  const std::vector<std::string> list = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"};
  EXPECT_TRUE(arch_list_covers(list, 8, 6));
  EXPECT_TRUE(arch_list_covers(list, 8, 9));   // Ada runs the sm_86 cubin
  EXPECT_FALSE(arch_list_covers(list, 12, 0));  // no sm_120, no PTX
  EXPECT_FALSE(arch_list_covers({"sm_86"}, 8, 0));
}

TEST(ArchListCovers, PtxRunsForwardAndArchSpecificOnlyOnItsTarget) {
  EXPECT_TRUE(arch_list_covers({"sm_80", "compute_90"}, 12, 0));
  EXPECT_FALSE(arch_list_covers({"sm_90a"}, 10, 0));
  EXPECT_TRUE(arch_list_covers({"sm_90a"}, 9, 0));
  EXPECT_TRUE(arch_list_covers({"sm_120"}, 12, 0));
}

TEST(EnvironmentRules, HealthyMachineOnlyGetsTheDataLoaderReminder) {
  EXPECT_EQ(ids(check_environment(healthy())), (std::vector<std::string>{"dataloader-defaults"}));
}

TEST(EnvironmentRules, Rtx50WithAPreBlackwellTorchIsAnErrorWithTheWheelToInstall) {
  EnvironmentFacts f = healthy();
  f.system.gpus = {gpu(0, "NVIDIA GeForce RTX 5090", 12, 0)};
  f.cuda_driver_version = device::CudaVersion{12, 8};
  f.driver_version = "570.86.15";
  const auto findings = check_environment(f);
  const std::optional<Finding> arch = find(findings, "gpu-arch-missing");
  ASSERT_TRUE(arch.has_value());
  EXPECT_EQ(arch->severity, Severity::error);
  EXPECT_EQ(arch->category, Category::gpu);
  EXPECT_EQ(arch->title, "PyTorch 2.5.1+cu124 has no kernels for GPU 0 (NVIDIA GeForce RTX 5090, sm_120)");
  EXPECT_EQ(arch->evidence,
            "compiled architectures: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90; GPU 0 is compute capability 12.0");
  EXPECT_NE(arch->fix.find("PyTorch 2.7 or newer built for CUDA 12.8 or newer (pip install torch --index-url "
                           "https://download.pytorch.org/whl/cu128)"),
            std::string::npos)
      << arch->fix;
  EXPECT_NE(arch->fix.find("no kernel image is available for execution on the device"), std::string::npos);
  EXPECT_EQ(arch->source_url, "https://pytorch.org/blog/pytorch-2-7/");
  // nvcc 12.4 cannot build for sm_120 either.
  const std::optional<Finding> toolkit = find(findings, "toolkit-too-old-for-gpu");
  ASSERT_TRUE(toolkit.has_value());
  EXPECT_EQ(toolkit->evidence, "nvcc 12.4; Blackwell (GeForce RTX 50, RTX PRO 6000) needs CUDA 12.8 or newer");
}

TEST(EnvironmentRules, NewerCudaMajorThanTheDriverIsAnError) {
  EnvironmentFacts f = healthy();
  f.nvcc = Installed{"13.0.88", "/usr/local/cuda/bin/nvcc"};
  const std::optional<Finding> d = find(check_environment(f), "driver-too-old");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->severity, Severity::error);
  EXPECT_EQ(d->title, "Driver 550.54.15 (CUDA 12.4) is too old for CUDA toolkit (nvcc) built with CUDA 13.0");
  EXPECT_NE(d->fix.find("Install NVIDIA driver 580.65.06 or newer"), std::string::npos) << d->fix;
}

TEST(EnvironmentRules, NewerMinorOnAFamilyDriverIsMinorVersionCompatibility) {
  EnvironmentFacts f = healthy();
  f.driver_version = "535.161.08";
  f.cuda_driver_version = device::CudaVersion{12, 2};
  f.nvcc.reset();
  f.python.torch_version = "2.7.1+cu128";
  f.python.torch_cuda = "12.8";
  const auto findings = check_environment(f);
  const std::optional<Finding> d = find(findings, "driver-minor-compat");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->severity, Severity::warning);
  EXPECT_EQ(d->evidence, "PyTorch 2.7.1+cu128: CUDA 12.8; driver 535.161.08 supports CUDA up to 12.2");
  EXPECT_NE(d->fix.find("570.26"), std::string::npos);
  EXPECT_FALSE(find(findings, "driver-too-old").has_value());
}

TEST(EnvironmentRules, DriverFromProcIsJudgedThroughTheTable) {
  EnvironmentFacts f = healthy();
  f.cuda_driver_version.reset();
  f.driver_version = "470.82.01";  // a CUDA 11.4 driver
  f.driver_from = "/proc/driver/nvidia/version";
  const std::optional<Finding> d = find(check_environment(f), "driver-too-old");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->title, "Driver 470.82.01 (CUDA 11.4) is too old for CUDA toolkit (nvcc) built with CUDA 12.4");
}

TEST(EnvironmentRules, CpuOnlyTorchOnAGpuMachineIsAWarning) {
  EnvironmentFacts f = healthy();
  f.python.torch_version = "2.5.1+cpu";
  f.python.torch_cuda.reset();
  f.python.torch_arch_list.clear();
  const std::optional<Finding> d = find(check_environment(f), "torch-cpu-only");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->title, "PyTorch 2.5.1+cpu is a CPU-only build, but this machine has 1 NVIDIA GPU(s)");
}

TEST(EnvironmentRules, TensorflowGpuPackageAndMemoryGrowth) {
  EnvironmentFacts f = healthy();
  f.python.tensorflow_gpu = "2.10.0";
  auto findings = check_environment(f);
  ASSERT_TRUE(find(findings, "tensorflow-gpu-package").has_value());
  const std::optional<Finding> growth = find(findings, "tensorflow-memory-growth");
  ASSERT_TRUE(growth.has_value());
  EXPECT_EQ(growth->severity, Severity::info);
  EXPECT_NE(growth->fix.find("tf.config.experimental.set_memory_growth"), std::string::npos);
  f.tf_force_gpu_allow_growth = "true";
  EXPECT_FALSE(find(check_environment(f), "tensorflow-memory-growth").has_value());
}

TEST(EnvironmentRules, GpuSettingsPersistencePowerAndPcie) {
  EnvironmentFacts f = healthy();
  device::GpuInfo& g = f.system.gpus[0];
  g.persistence_mode = false;
  g.power_limit_w = 400;
  g.power_limit_default_w = 450;
  g.pcie_gen_current = 1;
  g.pcie_gen_max = 4;
  g.pcie_width_current = 16;
  g.pcie_width_max = 16;
  const auto findings = check_environment(f);
  ASSERT_TRUE(find(findings, "persistence-mode-off").has_value());
  const std::optional<Finding> power = find(findings, "power-limit-reduced");
  ASSERT_TRUE(power.has_value());
  EXPECT_EQ(power->title, "GPU 0 (NVIDIA H100 80GB HBM3) is capped at 400 W, below its default 450 W");
  EXPECT_NE(power->fix.find("sudo nvidia-smi -i 0 -pl 450"), std::string::npos);
  const std::optional<Finding> pcie = find(findings, "pcie-link-degraded");
  ASSERT_TRUE(pcie.has_value());
  EXPECT_EQ(pcie->evidence, "PCIe link Gen1 x16 now, Gen4 x16 possible");
}

TEST(EnvironmentRules, Cuda13NoLongerTargetsVolta) {
  EnvironmentFacts f = healthy();
  f.system.gpus = {gpu(0, "Tesla V100-SXM2-32GB", 7, 0)};
  f.cuda_driver_version = device::CudaVersion{13, 0};
  f.driver_version = "580.65.06";
  f.nvcc = Installed{"13.0.88", "/usr/local/cuda/bin/nvcc"};
  const std::optional<Finding> d = find(check_environment(f), "toolkit-dropped-gpu");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->title, "CUDA toolkit 13.0 no longer targets GPU 0 (Tesla V100-SXM2-32GB, sm_70)");
}

TEST(EnvironmentRules, NoGpuSaysWhatItCannotCheck) {
  EnvironmentFacts f = healthy();
  f.system = {};
  f.system.message = "NVIDIA driver not found (libnvidia-ml.so.1: cannot open shared object file)";
  const auto findings = check_environment(f);
  const std::optional<Finding> d = find(findings, "no-gpu");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->severity, Severity::not_checked);
  EXPECT_EQ(d->title, "GPU checks not run: NVIDIA driver not found (libnvidia-ml.so.1: cannot open shared object file)");
  EXPECT_FALSE(find(findings, "dataloader-defaults").has_value());
}

TEST(EnvironmentRules, MissingPythonTimeoutAndMissingTorchAreNotChecked) {
  EnvironmentFacts f = healthy();
  f.python = {};
  f.python.interpreter = "python3";
  const std::optional<Finding> missing = find(check_environment(f), "python-missing");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->title, "Python frameworks not checked: no 'python3' found on PATH");
  EXPECT_EQ(missing->severity, Severity::not_checked);

  f.python.path = "/usr/bin/python3";
  const auto broken = find(check_environment(f), "python-missing");
  ASSERT_TRUE(broken.has_value());
  EXPECT_EQ(broken->title, "Python frameworks not checked: '/usr/bin/python3' could not be started");

  f.python.ran = true;
  const auto silent = find(check_environment(f), "python-missing");
  ASSERT_TRUE(silent.has_value());
  EXPECT_EQ(silent->title, "Python frameworks not checked: '/usr/bin/python3' ran but did not answer the probe "
                           "(needs Python 3.8 or newer)");

  f.python.timed_out = true;
  f.python.timeout_s = 2;
  const std::optional<Finding> timeout = find(check_environment(f), "python-timeout");
  ASSERT_TRUE(timeout.has_value());
  EXPECT_EQ(timeout->title,
            "Python probe stopped after 2 s (/usr/bin/python3); frameworks it had not reported are not checked");

  f.python.timed_out = false;
  f.python.version = "3.10.12";
  f.python.torch_reported = true;
  f.python.torch_error = "ModuleNotFoundError: No module named 'torch'";
  const std::optional<Finding> torch = find(check_environment(f), "torch-missing");
  ASSERT_TRUE(torch.has_value());
  EXPECT_EQ(torch->evidence, "ModuleNotFoundError: No module named 'torch'");
}

}  // namespace
}  // namespace gpusage::diagnose

namespace gpusage::diagnose {
namespace {

// Every rule in data/doctor/rules.toml fires in at least one scripted scenario or fixture log, so a rule
// added to the table without code (or code that stopped firing one) fails here.
TEST(RuleCoverage, EveryRuleInTheTableFiresSomewhere) {
  std::set<std::string> fired;
  auto note = [&](const std::vector<Finding>& findings) {
    for (const auto& f : findings) fired.insert(f.id);
  };
  EnvironmentFacts blackwell = healthy();
  blackwell.system.gpus = {gpu(0, "NVIDIA GeForce RTX 5090", 12, 0)};
  blackwell.system.gpus[0].persistence_mode = false;
  blackwell.system.gpus[0].power_limit_w = 450;
  blackwell.system.gpus[0].power_limit_default_w = 575;
  blackwell.system.gpus[0].pcie_gen_current = 3;
  blackwell.system.gpus[0].pcie_gen_max = 5;
  blackwell.python.tensorflow_gpu = "2.10.0";
  note(check_environment(blackwell));

  EnvironmentFacts old_driver = healthy();
  old_driver.nvcc = Installed{"13.0.88", "/usr/local/cuda/bin/nvcc"};
  old_driver.python.torch_cuda = "12.8";
  note(check_environment(old_driver));

  EnvironmentFacts volta = healthy();
  volta.system.gpus = {gpu(0, "Tesla V100-SXM2-32GB", 7, 0)};
  volta.cuda_driver_version = device::CudaVersion{13, 0};
  volta.driver_version = "580.65.06";
  volta.nvcc = Installed{"13.0.88", "/usr/local/cuda/bin/nvcc"};
  note(check_environment(volta));

  EnvironmentFacts cpu_torch = healthy();
  cpu_torch.python.torch_cuda.reset();
  note(check_environment(cpu_torch));

  EnvironmentFacts bare;
  bare.python.interpreter = "python3";
  note(check_environment(bare));

  EnvironmentFacts slow = healthy();
  slow.python.torch_reported = false;
  slow.python.torch_version.reset();
  slow.python.timed_out = true;
  note(check_environment(slow));

  EnvironmentFacts no_torch = healthy();
  no_torch.python.torch_version.reset();
  no_torch.python.torch_error = "ModuleNotFoundError: No module named 'torch'";
  note(check_environment(no_torch));

  // WSL 2 (wsl_test.cpp has the fixture machines): a Linux driver inside, libcuda off the loader's path, 16 GiB
  // for an 80 GiB GPU, a framework newer than the Windows driver; then no GPU libraries, minor compatibility.
  EnvironmentFacts wsl = healthy();
  wsl.system.gpus[0].memory_total_bytes = 80ULL << 30;
  wsl.wsl = WslFacts{"5.15.167.4-microsoft-standard-WSL2", true, false, {"nvidia-driver-550 550.120"}, 16ULL << 30};
  wsl.python.torch_cuda = "13.0";
  note(check_environment(wsl));
  wsl.wsl->gpu_libraries = false;
  wsl.python.torch_cuda = "12.8";
  note(check_environment(wsl));

  for (const char* log : {"oom_pytorch1.log", "oom_pytorch2.log", "nan_loss.log", "grad_explosion.log",
                          "no_kernel_image.log", "nccl_timeout.log", "nccl_error.log", "dataloader_shm.log",
                          "cudnn_error.log", "tf_oom.log", "workers_zero.log", "fp16_overflow.log", "overflow_skips.log",
                          "clean.log", "illegal_memory_access.log", "device_assert.log", "jax_oom.log",
                          "cudnn_version_mismatch.log", "arch_unsupported.log", "driver_mismatch.log", "cuda_error.log",
                          "xla_error.log", "unrecognised_error.log"}) {
    note(check_log(scan_log(read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/" + log)),
                   RunContext{}));
  }
  for (const char* log : {"driver-pt-found-6050.log", "hostoom-loader-killed-softgroup.log",
                          "oldgpu-triton-p40-vllm-docker.log", "dataloader-win-spawn-arabic-diacritization.log"}) {
    note(check_log(scan_log(read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/real/" + log)),
                   RunContext{}));
  }
  for (const auto& rule : RuleTable::builtin().rules()) EXPECT_EQ(fired.count(rule.id), 1u) << rule.id;
}

}  // namespace
}  // namespace gpusage::diagnose
