#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/environment.hpp"
#include "core/diagnose/probe.hpp"

namespace gpusage::diagnose {
namespace {

std::string fixture(const std::string& relative) {
  return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/" + relative;
}

TEST(ParseNvcc, ReadsTheFullReleaseVersion) {
  const char* text =
      "nvcc: NVIDIA (R) Cuda compiler driver\n"
      "Copyright (c) 2005-2024 NVIDIA Corporation\n"
      "Built on Thu_Mar_28_02:18:24_PDT_2024\n"
      "Cuda compilation tools, release 12.4, V12.4.131\n"
      "Build cuda_12.4.r12.4/compiler.34097967_0\n";
  EXPECT_EQ(parse_nvcc_version(text).value_or(""), "12.4.131");
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 11.8").value_or(""), "11.8");
  EXPECT_FALSE(parse_nvcc_version("command not found").has_value());
}

TEST(ParseProcDriver, ReadsProprietaryAndOpenModuleWording) {
  EXPECT_EQ(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
                                      "22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0\n")
                .value_or(""),
            "550.54.15");
  EXPECT_EQ(parse_proc_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release "
                                      "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 22:59:59 UTC 2025")
                .value_or(""),
            "570.86.15");
  EXPECT_FALSE(parse_proc_driver_version("garbage").has_value());
}

TEST(ParseDefineVersion, JoinsTheMacrosInOrderAndNeedsAll) {
  const char* header = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n";
  EXPECT_EQ(parse_define_version(header, {"CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"}).value_or(""), "9.1.0");
  EXPECT_FALSE(parse_define_version("#define NCCL_MAJOR 2\n", {"NCCL_MAJOR", "NCCL_MINOR"}).has_value());
}

TEST(ParseDpkg, FindsOnlyInstalledPackages) {
  const char* status =
      "Package: libtorch-test\nStatus: install ok installed\nVersion: 1.13.1+dfsg-4\n\n"
      "Package: libtorch-dev\nStatus: deinstall ok config-files\nVersion: 1.12.0-1\n\n";
  EXPECT_FALSE(parse_dpkg_version(status, "libtorch-dev").has_value());
  const char* installed = "Package: libtorch-dev\nStatus: install ok installed\nVersion: 1.13.1+dfsg-4\n";
  EXPECT_EQ(parse_dpkg_version(installed, "libtorch-dev").value_or(""), "1.13.1+dfsg-4");
}

TEST(ParsePythonProbe, KeepsWhatAPartialRunPrinted) {
  PythonInfo info;
  parse_python_probe("{\"python\": \"3.11.9\"}\n{\"packages\": {\"torch\": \"2.5.1\", \"tensorflow\": null, "
                     "\"tensorflow-gpu\": \"2.10.0\"}}\n{\"torch\": {\"version\": \"2.5.",
                     info);
  EXPECT_EQ(info.version.value_or(""), "3.11.9");
  EXPECT_TRUE(info.packages_reported);
  EXPECT_EQ(info.tensorflow_gpu.value_or(""), "2.10.0");
  EXPECT_FALSE(info.tensorflow.has_value());
  EXPECT_FALSE(info.torch_reported);
}

TEST(ParsePythonProbe, ReadsTorchBuildFacts) {
  PythonInfo info;
  parse_python_probe("{\"torch\": {\"version\": \"2.7.1+cu128\", \"cuda\": \"12.8\", \"arch_list\": [\"sm_90\", "
                     "\"sm_120\"], \"cuda_available\": false}}\n",
                     info);
  EXPECT_TRUE(info.torch_reported);
  EXPECT_EQ(info.torch_version.value_or(""), "2.7.1+cu128");
  EXPECT_EQ(info.torch_cuda.value_or(""), "12.8");
  EXPECT_EQ(info.torch_arch_list, (std::vector<std::string>{"sm_90", "sm_120"}));
  EXPECT_EQ(info.torch_cuda_available, std::optional<bool>(false));
}

TEST(ParseCpuCount, CountsProcessorLines) {
  EXPECT_EQ(parse_cpu_count("processor\t: 0\nmodel name\t: x\nprocessor\t: 1\n"), std::optional<unsigned>(2));
  EXPECT_FALSE(parse_cpu_count("").has_value());
}

ScriptedEnvironment scripted_machine() {
  ScriptedEnvironment env;
  env.system.available = true;
  env.system.driver_version = "550.54.15";
  env.system.cuda_driver_version = device::CudaVersion{12, 4};
  env.programs["nvcc"] = "/usr/local/cuda/bin/nvcc";
  env.commands["/usr/local/cuda/bin/nvcc --version"] = {true, false, 0, "Cuda compilation tools, release 12.4, V12.4.131\n"};
  env.files["/usr/local/cuda/include/cudnn_version.h"] = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n";
  env.files["/usr/include/nccl.h"] = "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n";
  env.files["/usr/include/torch/csrc/api/include/torch/version.h"] =
      "#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 5\n#define TORCH_VERSION_PATCH 1\n";
  env.programs["python3"] = "/usr/bin/python3";
  env.commands["/usr/bin/python3 -c"] = {true, false, 0,
                                         "{\"python\": \"3.11.9\"}\n{\"packages\": {\"torch\": \"2.5.1\"}}\n"
                                         "{\"torch\": {\"version\": \"2.5.1+cu124\", \"cuda\": \"12.4\", "
                                         "\"arch_list\": [\"sm_80\"], \"cuda_available\": true}}\n"};
  env.files["/proc/cpuinfo"] = "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\n";
  env.variables["TF_FORCE_GPU_ALLOW_GROWTH"] = "true";
  return env;
}

TEST(Probe, ReadsEveryPieceThroughTheEnvironment) {
  ScriptedEnvironment env = scripted_machine();
  const EnvironmentFacts f = probe(env);
  EXPECT_EQ(f.driver_version.value_or(""), "550.54.15");
  EXPECT_EQ(f.driver_from, "NVML");
  ASSERT_TRUE(f.nvcc.has_value());
  EXPECT_EQ(f.nvcc->version, "12.4.131");
  EXPECT_EQ(f.cudnn->version, "9.1.0");
  EXPECT_EQ(f.cudnn->where, "/usr/local/cuda/include/cudnn_version.h");
  EXPECT_EQ(f.nccl->version, "2.21.5");
  EXPECT_EQ(f.libtorch->version, "2.5.1");
  EXPECT_EQ(f.python.torch_version.value_or(""), "2.5.1+cu124");
  EXPECT_EQ(f.cpu_count, std::optional<unsigned>(3));
  EXPECT_EQ(f.tf_force_gpu_allow_growth.value_or(""), "true");
  // nvcc --version and the python script with -c (on its own thread: either may come first).
  ASSERT_EQ(env.runs.size(), 2u);
  const auto& python = env.runs[0][0] == "/usr/bin/python3" ? env.runs[0] : env.runs[1];
  ASSERT_EQ(python.size(), 3u);
  EXPECT_EQ(python[1], "-c");
  EXPECT_EQ(python[2], python_probe_script());
}

TEST(Probe, FallsBackToProcForTheDriverAndDpkgForLibtorch) {
  ScriptedEnvironment env;
  env.system.available = false;
  env.system.message = "NVIDIA driver not found";
  env.files["/proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.08  Wed Feb\n";
  env.files["/var/lib/dpkg/status"] = "Package: libtorch-dev\nStatus: install ok installed\nVersion: 1.13.1+dfsg-4\n";
  const EnvironmentFacts f = probe(env);
  EXPECT_EQ(f.driver_version.value_or(""), "535.161.08");
  EXPECT_EQ(f.driver_from, "/proc/driver/nvidia/version");
  EXPECT_FALSE(f.cuda_driver_version.has_value());
  EXPECT_EQ(f.libtorch->version, "1.13.1+dfsg-4");
  EXPECT_EQ(f.libtorch->where, "dpkg: libtorch-dev");
  EXPECT_FALSE(f.nvcc.has_value());
  EXPECT_TRUE(f.python.path.empty());
}

TEST(HostEnvironment, FindsProgramsOnItsPathThenInRootedExtraDirs) {
  HostOptions options;
  options.root = fixture("envs/rtx5090-old-torch");
  options.search_path = {fixture("envs/rtx5090-old-torch/bin")};
  auto env = open_host_environment(options);
  EXPECT_EQ(env->find_program("python3").value_or(""), fixture("envs/rtx5090-old-torch/bin/python3"));
  EXPECT_EQ(env->find_program("nvcc", {"/usr/local/cuda/bin"}).value_or(""),
            fixture("envs/rtx5090-old-torch/usr/local/cuda/bin/nvcc"));
  EXPECT_FALSE(env->find_program("nvcc").has_value());
  EXPECT_TRUE(env->read_file("/proc/driver/nvidia/version").has_value());
}

TEST(HostEnvironment, RunsAProgramAndCapturesItsOutput) {
  auto env = open_host_environment();
  const CommandResult r = env->run({fixture("envs/rtx5090-old-torch/usr/local/cuda/bin/nvcc"), "--version"}, 10);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(parse_nvcc_version(r.out).value_or(""), "12.4.131");
}

TEST(HostEnvironment, StopsAHangingProgramAtTheDeadlineAndKeepsItsOutput) {
  auto env = open_host_environment();
  // The script prints one line, then sleeps 30 s; the deadline stops it and its sleeping child.
  const CommandResult r = env->run({fixture("envs/slow-python"), "-c", "ignored"}, 0.5);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  PythonInfo info;
  parse_python_probe(r.out, info);
  EXPECT_EQ(info.version.value_or(""), "3.11.9");
  EXPECT_FALSE(info.packages_reported);
}

TEST(HostEnvironment, ReportsAProgramThatCannotStart) {
  auto env = open_host_environment();
  const CommandResult r = env->run({"/nonexistent/gpusage-test-program"}, 5);
  EXPECT_FALSE(r.started);
}

}  // namespace
}  // namespace gpusage::diagnose
