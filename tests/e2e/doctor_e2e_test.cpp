// gpusage doctor end to end: the built binary against scripted machines. NVML answers from the scripted
// stub (tests/fixtures/nvml_stub), files and programs from a fixture tree (GPUSAGE_DOCTOR_ROOT, PATH).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

// The environment prefix for a run on scripted machine `env_name` with NVML script `nvml_script`. PATH is
// only the fixture's bin (its scripts use shell built-ins), so this machine's own nvcc or python never answer.
std::string machine(const std::string& env_name, const std::string& nvml_script) {
  const std::string root = fixture("doctor/envs/" + env_name);
  return "GPUSAGE_NVML_LIBRARY=" + std::string(GPUSAGE_NVML_STUB_MODERN) + " GPUSAGE_NVML_STUB_SCRIPT=" +
         fixture(nvml_script) + " GPUSAGE_DOCTOR_ROOT=" + root + " PATH=" + root + "/bin" +
         " CUDA_HOME= LIBTORCH= TF_FORCE_GPU_ALLOW_GROWTH= COLUMNS=120";
}

const nlohmann::json* finding(const nlohmann::json& report, const std::string& id) {
  for (const auto& f : report["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

TEST(DoctorE2E, WithoutAGpuItStillRunsAndSaysWhatItCannotCheck) {
  const CliResult r = run_cli("doctor --format json", machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto* no_gpu = finding(j, "no-gpu");
  ASSERT_NE(no_gpu, nullptr) << r.out;
  EXPECT_EQ((*no_gpu)["severity"], "not_checked");
  const auto* torch = finding(j, "torch-missing");
  ASSERT_NE(torch, nullptr) << r.out;
  EXPECT_EQ((*torch)["severity"], "not_checked");
  EXPECT_EQ((*torch)["evidence"], "ModuleNotFoundError: No module named 'torch'");
  EXPECT_EQ(j["environment"]["gpu_available"], false);
  EXPECT_EQ(j["environment"]["python"]["version"], "3.10.12");
  EXPECT_TRUE(j["environment"]["cuda_toolkit"].is_null());
}

TEST(DoctorE2E, TableGroupsFindingsAndShowsTheEnvironment) {
  const CliResult r = run_cli("doctor", machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Environment\n  NVIDIA driver  not found\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nGPU findings\n  [not_checked] GPU checks not run: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  CUDA toolkit   not found\n"), std::string::npos) << r.out;
}

TEST(DoctorE2E, Rtx5090WithAPreBlackwellStack) {
  const CliResult r = run_cli("doctor --format json", machine("rtx5090-old-torch", "doctor/nvml/rtx5090.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& env = j["environment"];
  EXPECT_EQ(env["driver_version"], "570.86.15");
  EXPECT_EQ(env["driver_from"], "NVML");
  EXPECT_EQ(env["cuda_driver_version"], "12.8");
  EXPECT_EQ(env["gpus"][0]["compute_capability"], "12.0");
  EXPECT_EQ(env["cuda_toolkit"]["version"], "12.4.131");
  EXPECT_EQ(env["cudnn"]["version"], "9.1.0");
  EXPECT_EQ(env["nccl"]["version"], "2.21.5");
  EXPECT_EQ(env["python"]["torch"]["version"], "2.5.1+cu124");
  EXPECT_EQ(env["cpu_count"], 4);

  const auto* arch = finding(j, "gpu-arch-missing");
  ASSERT_NE(arch, nullptr) << r.out;
  EXPECT_EQ((*arch)["severity"], "error");
  EXPECT_EQ((*arch)["title"], "PyTorch 2.5.1+cu124 has no kernels for GPU 0 (NVIDIA GeForce RTX 5090, sm_120)");
  for (const char* id : {"toolkit-too-old-for-gpu", "tensorflow-gpu-package", "tensorflow-memory-growth",
                         "persistence-mode-off", "power-limit-reduced", "pcie-link-degraded", "dataloader-defaults"}) {
    EXPECT_NE(finding(j, id), nullptr) << id << "\n" << r.out;
  }
  EXPECT_EQ(finding(j, "driver-too-old"), nullptr) << r.out;  // 12.4 builds on a 12.8 driver are fine
  const auto* power = finding(j, "power-limit-reduced");
  EXPECT_EQ((*power)["evidence"], "power limit 450 W; default 575 W");
}

TEST(DoctorE2E, OldDriverForTheToolkitAndTheFrameworkBuild) {
  const CliResult r = run_cli("doctor --format json", machine("a100-driver535", "doctor/nvml/a100_driver535.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto* too_old = finding(j, "driver-too-old");
  ASSERT_NE(too_old, nullptr) << r.out;
  EXPECT_EQ((*too_old)["title"],
            "Driver 535.161.08 (CUDA 12.2) is too old for CUDA toolkit (nvcc) built with CUDA 13.0");
  const auto* compat = finding(j, "driver-minor-compat");
  ASSERT_NE(compat, nullptr) << r.out;
  EXPECT_EQ((*compat)["severity"], "warning");
  EXPECT_EQ(finding(j, "gpu-arch-missing"), nullptr) << r.out;  // cu128 wheels include sm_80
}

TEST(DoctorE2E, OomLogWithTheModelGivesConcreteFixes) {
  const CliResult r = run_cli("doctor --log " + fixture("doctor/logs/oom_pytorch1.log") +
                                  " --model resnet50 --gpu rtx4090 --precision fp32",
                              machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Log findings (" + fixture("doctor/logs/oom_pytorch1.log") + ", 9 lines)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  [error] CUDA out of memory (1x): tried to allocate 2.00 GiB on GPU 0"), std::string::npos)
      << r.out;
  // The log's capacity wins over the card's: the fix is computed for what the run really had.
  EXPECT_NE(r.out.find("Largest batch that fits on the log's 23.69 GiB capacity: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gradient accumulation steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Measured at the failure: at least 24.64 GiB needed"), std::string::npos) << r.out;
}

TEST(DoctorE2E, APastedLogOnStandardInputIsReadAndItsFindingsComeFirst) {
  const CliResult r = run_cli(
      "doctor --log -",
      "echo 'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.12 "
      "GiB already allocated; 1.05 GiB free; 21.50 GiB reserved in total by PyTorch)' | " +
          machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Log findings (standard input, 1 lines)\n"
                        "  [error] CUDA out of memory (1x): tried to allocate 2.00 GiB on GPU 0",
                        0),
            0u)
      << r.out;
  const std::size_t environment = r.out.find("\nEnvironment\n");
  ASSERT_NE(environment, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("Log findings"), environment);
}

TEST(DoctorE2E, ARealCascadeLogIsOneFindingInJson) {
  const CliResult r = run_cli("doctor --format json --log " + fixture("doctor/real/oom-pt1-cublas-cascade-aoda.log"),
                              machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> log_ids;
  for (const auto& f : j["findings"]) {
    if (f["category"] == "log") log_ids.push_back(f["id"]);
  }
  EXPECT_EQ(log_ids, std::vector<std::string>{"log-cuda-oom"}) << r.out;
  EXPECT_EQ(j["log"]["lines"], 6);
}

TEST(DoctorE2E, JsonOutFileIsWrittenWhole) {
  const std::string path = std::string(GPUSAGE_BINARY_DIR) + "/doctor-e2e-report.json";
  std::remove(path.c_str());
  const CliResult r = run_cli("doctor --format json --log " + fixture("doctor/logs/nccl_timeout.log") + " --out " + path,
                              machine("no-gpu", "nvml_stub/init_fails.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const auto j = nlohmann::json::parse(read_text(path));
  const auto* timeout = finding(j, "log-nccl-timeout");
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ((*timeout)["category"], "log");
  EXPECT_EQ(j["log"]["lines"], 3);
  std::remove(path.c_str());
}

TEST(DoctorE2E, UnreadableLogIsBadInput) {
  const CliResult r = run_cli("doctor --log /nonexistent/train.log", machine("no-gpu", "nvml_stub/init_fails.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: cannot read log file '/nonexistent/train.log'\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(DoctorE2E, DirectoryAsLogIsBadInput) {
  const std::string dir = fixture("doctor/logs");
  const CliResult r = run_cli("doctor --log " + dir, machine("no-gpu", "nvml_stub/init_fails.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: log file '" + dir + "' is a directory\n");
}

TEST(DoctorE2E, UnknownGpuOrModelIsBadInput) {
  const std::string env = machine("no-gpu", "nvml_stub/init_fails.json");
  const CliResult gpu = run_cli("doctor --gpu notagpu9000", env);
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_EQ(gpu.err.rfind("gpusage: ", 0), 0u) << gpu.err;
  EXPECT_NE(gpu.err.find("notagpu9000"), std::string::npos) << gpu.err;
  const CliResult model = run_cli("doctor --model notamodel", env);
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("notamodel"), std::string::npos) << model.err;
}

}  // namespace
}  // namespace gpusage::testing
