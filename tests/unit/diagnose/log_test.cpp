#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <cmath>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/estimate/plan.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::diagnose {
namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024.0 * kMiB;

LogScan scan_fixture(const std::string& name) {
  return scan_log(read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/" + name));
}

// A copy: the findings are often a temporary.
std::optional<Finding> find(const std::vector<Finding>& findings, const std::string& id) {
  auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
  if (it == findings.end()) return std::nullopt;
  return *it;
}

TEST(ParseSize, ReadsPytorchFormatSizeUnits) {
  EXPECT_DOUBLE_EQ(*parse_size_bytes("2.00 GiB"), 2 * kGiB);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("512.00 MiB"), 512 * kMiB);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("20.00 KiB"), 20 * 1024.0);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("0 bytes"), 0);
  EXPECT_FALSE(parse_size_bytes("2 GB").has_value());
}

TEST(ParseOom, ReadsThePytorch1Wording) {
  const OomReport r = parse_oom(
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.12 GiB "
      "already allocated; 1.05 GiB free; 21.50 GiB reserved in total by PyTorch)");
  EXPECT_EQ(r.wording, "pytorch-1");
  EXPECT_EQ(r.gpu_index, std::optional<int>(0));
  EXPECT_DOUBLE_EQ(*r.requested_bytes, 2 * kGiB);
  EXPECT_DOUBLE_EQ(*r.capacity_bytes, 23.69 * kGiB);
  EXPECT_DOUBLE_EQ(*r.allocated_bytes, 20.12 * kGiB);
  EXPECT_DOUBLE_EQ(*r.free_bytes, 1.05 * kGiB);
  EXPECT_DOUBLE_EQ(*r.reserved_bytes, 21.50 * kGiB);
  EXPECT_NEAR(*r.unallocated_bytes, 1.38 * kGiB, 1e3);
}

TEST(ParseOom, ReadsThePytorch2Wording) {
  const OomReport r = parse_oom(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 31.36 "
      "GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 30.85 GiB memory in use. Of "
      "the allocated memory 29.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.");
  EXPECT_EQ(r.wording, "pytorch-2");
  EXPECT_DOUBLE_EQ(*r.requested_bytes, 1.5 * kGiB);
  EXPECT_DOUBLE_EQ(*r.capacity_bytes, 31.36 * kGiB);
  EXPECT_DOUBLE_EQ(*r.free_bytes, 512 * kMiB);
  EXPECT_DOUBLE_EQ(*r.process_bytes, 30.85 * kGiB);
  EXPECT_DOUBLE_EQ(*r.allocated_bytes, 29.10 * kGiB);
  EXPECT_DOUBLE_EQ(*r.unallocated_bytes, 1.20 * kGiB);
}

TEST(ParseOom, ReadsPrivatePoolWordingAndTheCapactyTypo) {
  // PyTorch 2.1 spelled "capacty"; later versions insert the private-pool clause before "and".
  const OomReport r = parse_oom(
      "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacty of 79.15 GiB of which 18.69 MiB "
      "is free. Process 1234 has 79.12 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by "
      "PyTorch, with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), and 8.00 GiB is reserved by PyTorch "
      "but unallocated.");
  EXPECT_EQ(r.gpu_index, std::optional<int>(3));
  EXPECT_DOUBLE_EQ(*r.capacity_bytes, 79.15 * kGiB);
  EXPECT_DOUBLE_EQ(*r.allocated_bytes, 70 * kGiB);
  EXPECT_DOUBLE_EQ(*r.unallocated_bytes, 8 * kGiB);
}

TEST(ParseOom, Pytorch1WithAMemoryFractionCapStillReadsEveryFigure) {
  // set_per_process_memory_fraction adds "X allowed;" before the reserved figure.
  const OomReport r = parse_oom(
      "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 10.76 GiB total capacity; 4.29 GiB already "
      "allocated; 10.12 MiB free; 4.46 GiB allowed; 4.38 GiB reserved in total by PyTorch)");
  EXPECT_EQ(r.gpu_index, std::optional<int>(1));
  EXPECT_DOUBLE_EQ(*r.free_bytes, 10.12 * kMiB);
  EXPECT_DOUBLE_EQ(*r.reserved_bytes, 4.38 * kGiB);
}

TEST(LogRules, BareCudaOutOfMemoryHasNoFiguresButStillCounts) {
  const LogScan s = scan_log("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
                             "reported\n");
  ASSERT_EQ(s.cuda_oom.size(), 1u);
  EXPECT_EQ(s.cuda_oom[0].wording, "cuda");
  const auto f = find(check_log(s, {}), "log-cuda-oom");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "CUDA out of memory (1x): allocation failed");
}

TEST(ScanLog, JoinsAnOomMessageWrappedOverLines) {
  const LogScan s = scan_log(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of\n"
      "  31.36 GiB of which 512.00 MiB is free. Of the allocated memory 29.10 GiB is allocated by PyTorch, and\n"
      "  1.20 GiB is reserved by PyTorch but unallocated.\n"
      "next line\n");
  ASSERT_EQ(s.cuda_oom.size(), 1u);
  EXPECT_EQ(s.cuda_oom[0].at.line, 1u);
  EXPECT_DOUBLE_EQ(*s.cuda_oom[0].capacity_bytes, 31.36 * kGiB);
  EXPECT_DOUBLE_EQ(*s.cuda_oom[0].unallocated_bytes, 1.20 * kGiB);
}

TEST(ScanLog, FindsTheBatchSizeTheRunPrinted) {
  EXPECT_EQ(scan_fixture("oom_pytorch1.log").batch_size, std::optional<int>(256));
  EXPECT_EQ(scan_log("eval_batch_size=8\nper_device_train_batch_size: 16\n").batch_size, std::optional<int>(16));
}

TEST(LogRules, Pytorch1OomWithModelGivesTheLargestBatchAndAccumulation) {
  const LogScan scan = scan_fixture("oom_pytorch1.log");
  ASSERT_EQ(scan.cuda_oom.size(), 1u);
  const workload::Workload resnet = workload::build("resnet50");
  RunContext ctx;
  ctx.workload = &resnet;  // batch from the log (256), GPU guessed from 23.69 GiB
  const auto findings = check_log(scan, ctx);
  const std::optional<Finding> oom = find(findings, "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  EXPECT_EQ(oom->severity, Severity::error);
  EXPECT_EQ(oom->title,
            "CUDA out of memory (1x): tried to allocate 2.00 GiB on GPU 0 (23.69 GiB total, 20.12 GiB allocated by "
            "PyTorch, 1.05 GiB free)");
  EXPECT_EQ(oom->evidence.rfind("line 9: RuntimeError: CUDA out of memory.", 0), 0u) << oom->evidence;

  // The same numbers the planner gives for that configuration.
  const catalog::Gpu& rtx4090 = catalog::Catalog::active().resolve("rtx4090");
  estimate::TrainingConfig c;
  c.batch_per_gpu = 256;
  c.precision = catalog::Precision::fp32;
  c.optimizer = estimate::Optimizer::momentum;
  const int largest = estimate::max_batch(resnet, c, rtx4090);
  ASSERT_GT(largest, 0);
  ASSERT_LT(largest, 256);
  const estimate::TrainingConfig split = estimate::plan_target_batch(resnet, c, rtx4090, 256);
  EXPECT_NE(oom->fix.find("a guess from the log's 23.69 GiB total capacity"), std::string::npos) << oom->fix;
  EXPECT_NE(oom->fix.find(fmt::format("Largest batch that fits: {}.", largest)), std::string::npos) << oom->fix;
  EXPECT_NE(oom->fix.find(fmt::format("batch {} with {} gradient accumulation steps", split.batch_per_gpu,
                                      split.accumulation_steps)),
            std::string::npos)
      << oom->fix;
  estimate::TrainingConfig mixed = c;
  mixed.precision = catalog::Precision::bf16;
  EXPECT_NE(oom->fix.find(fmt::format("Mixed precision (bf16 autocast) would allow batch {}.",
                                      estimate::max_batch(resnet, mixed, rtx4090))),
            std::string::npos)
      << oom->fix;
  estimate::TrainingConfig ckpt = c;
  ckpt.checkpointing = true;
  EXPECT_NE(oom->fix.find(fmt::format("Activation checkpointing (torch.utils.checkpoint) would allow batch {}.",
                                      estimate::max_batch(resnet, ckpt, rtx4090))),
            std::string::npos)
      << oom->fix;
  // 1.38 GiB unallocated of 23.69 GiB is under 10% and under the 2 GiB request: no fragmentation finding.
  EXPECT_FALSE(find(findings, "log-oom-fragmentation").has_value());
}

TEST(LogRules, OomWithoutAModelGivesTheGenericFix) {
  const auto findings = check_log(scan_fixture("oom_pytorch1.log"), RunContext{});
  const std::optional<Finding> oom = find(findings, "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  EXPECT_NE(oom->fix.find("Give --model, --batch, --precision and --gpu for concrete numbers."), std::string::npos);
}

TEST(LogRules, GivenGpuIsUsedAndNotGuessed) {
  const workload::Workload resnet = workload::build("resnet50");
  RunContext ctx;
  ctx.workload = &resnet;
  ctx.gpu = &catalog::Catalog::active().resolve("a100-sxm4-80gb");
  ctx.batch = 64;
  ctx.precision = catalog::Precision::bf16;
  const std::optional<Finding> oom = find(check_log(scan_fixture("oom_pytorch1.log"), ctx), "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  EXPECT_EQ(oom->fix.find("a guess"), std::string::npos) << oom->fix;
  EXPECT_NE(oom->fix.find("at batch 64 in bf16 needs"), std::string::npos) << oom->fix;
  EXPECT_EQ(oom->fix.find("Mixed precision"), std::string::npos) << oom->fix;  // already mixed
}

TEST(LogRules, Pytorch2OomWithLargeUnallocatedSuggestsExpandableSegments) {
  const auto findings = check_log(scan_fixture("oom_pytorch2.log"), RunContext{});
  const std::optional<Finding> frag = find(findings, "log-oom-fragmentation");
  ASSERT_TRUE(frag.has_value());
  EXPECT_EQ(frag->severity, Severity::warning);
  EXPECT_EQ(frag->title, "5.20 GiB was reserved by PyTorch but unallocated when 1.50 GiB could not be found");
  EXPECT_NE(frag->fix.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos);
}

TEST(GuessGpu, PicksTheClosestMemorySizeAndListsTies) {
  const GpuGuess g = guess_gpu(31.36 * kGiB, catalog::Catalog::active());
  ASSERT_NE(g.gpu, nullptr);
  EXPECT_EQ(g.gpu->memory_gb, 32);
  for (const auto* other : g.same_memory) EXPECT_EQ(other->memory_gb, 32);
  EXPECT_EQ(guess_gpu(79.15 * kGiB, catalog::Catalog::active()).gpu->memory_gb, 80);
}

TEST(LogRules, NonFiniteLossAndGradients) {
  const LogScan scan = scan_fixture("nan_loss.log");
  EXPECT_EQ(scan.non_finite.size(), 2u);
  const std::optional<Finding> f = find(check_log(scan, {}), "log-non-finite");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "Non-finite loss and gradients in the log (2x): training diverged");
  EXPECT_EQ(f->evidence.rfind("line 5: {'loss': nan", 0), 0u) << f->evidence;
  EXPECT_NE(f->evidence.find("1 more at line 6"), std::string::npos) << f->evidence;
}

TEST(LogRules, NormsThatJumpTenfoldAreAnExplosion) {
  const LogScan scan = scan_fixture("grad_explosion.log");
  ASSERT_EQ(scan.grad_norms.size(), 8u);
  const std::optional<Finding> f = find(check_log(scan, {}), "log-grad-explosion");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "Gradient norm exploded to 1234.5 (median before it 0.91, 1357x)");
  EXPECT_EQ(f->evidence, "line 8: grad norm 1234.5 after 6 norms with median 0.91");
}

TEST(LogRules, SteadyNormsAreNotAnExplosion) {
  const LogScan scan = scan_log("grad_norm=1.0\ngrad_norm=1.1\ngrad_norm=0.9\ngrad_norm=1.0\ngrad_norm=1.2\n"
                                "grad_norm=5.0\n");
  EXPECT_FALSE(find(check_log(scan, {}), "log-grad-explosion").has_value());
}

TEST(LogRules, NoKernelImageNamesTheGpuAndTheBuildToInstall) {
  const std::optional<Finding> f = find(check_log(scan_fixture("no_kernel_image.log"), {}), "log-no-kernel-image");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title,
            "No kernel image for this GPU (2x) on NVIDIA GeForce RTX 5090 (sm_120); the build supports sm_50 sm_60 "
            "sm_70 sm_75 sm_80 sm_86 sm_90");
  EXPECT_NE(f->fix.find("Install PyTorch 2.7 or newer built for CUDA 12.8 or newer"), std::string::npos) << f->fix;
}

TEST(LogRules, NcclTimeoutCarriesTheCollectiveAndTimeout) {
  const std::optional<Finding> f = find(check_log(scan_fixture("nccl_timeout.log"), {}), "log-nccl-timeout");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "NCCL collective timed out (2x) (ALLREDUCE, timeout 600000 ms)");
  EXPECT_FALSE(find(check_log(scan_fixture("nccl_timeout.log"), {}), "log-nccl-error").has_value());
}

TEST(LogRules, NcclErrorPrefersTheDescriptiveText) {
  const std::optional<Finding> f = find(check_log(scan_fixture("nccl_error.log"), {}), "log-nccl-error");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "NCCL error (3x): unhandled system error");
}

TEST(LogRules, DataLoaderKilledForSharedMemory) {
  const std::optional<Finding> f = find(check_log(scan_fixture("dataloader_shm.log"), {}), "log-dataloader-killed");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "DataLoader worker killed (2x) (Bus error)");
  EXPECT_NE(f->fix.find("--shm-size"), std::string::npos);
}

TEST(LogRules, CudnnErrorGivesTheAdviceForItsStatus) {
  const std::optional<Finding> f = find(check_log(scan_fixture("cudnn_error.log"), {}), "log-cudnn-error");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "cuDNN error CUDNN_STATUS_NOT_SUPPORTED (1x)");
  EXPECT_EQ(f->fix.rfind("This convolution's shape, dtype or layout is not supported", 0), 0u) << f->fix;
}

TEST(LogRules, TensorflowOom) {
  const std::optional<Finding> f = find(check_log(scan_fixture("tf_oom.log"), {}), "log-tf-oom");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "TensorFlow ran out of GPU memory (1x)");
}

TEST(LogRules, ManyFp16OverflowSkipsAreAWarningAFewAreNot) {
  const std::optional<Finding> f = find(check_log(scan_fixture("fp16_overflow.log"), {}), "log-overflow-skips");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "25 optimizer steps skipped for fp16 overflow: the loss scale keeps collapsing");
  const LogScan few = scan_log("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536\n");
  EXPECT_FALSE(find(check_log(few, {}), "log-overflow-skips").has_value());
}

TEST(LogRules, DataLoaderWithoutWorkers) {
  const std::optional<Finding> f = find(check_log(scan_fixture("workers_zero.log"), {}), "log-dataloader-workers-zero");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::warning);
}

TEST(LogRules, CleanLogSaysSo) {
  const auto findings = check_log(scan_fixture("clean.log"), {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "log-clean");
  EXPECT_EQ(findings[0].title, "No known failure pattern in 4 log lines");
}

TEST(Doctor, JsonListsFindingsWithSeverityEvidenceFixAndSource) {
  ScriptedEnvironment env;
  env.system.message = "NVIDIA driver not found";
  DoctorRequest request;
  request.log_path = "train.log";
  request.log_text = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n";
  const nlohmann::json j = to_json(run_doctor(env, request));
  ASSERT_TRUE(j["findings"].is_array());
  bool saw_cudnn = false;
  for (const auto& f : j["findings"]) {
    for (const char* key : {"id", "severity", "title", "evidence", "fix"}) EXPECT_TRUE(f[key].is_string()) << key;
    EXPECT_EQ(f["source"].get<std::string>().rfind("https://", 0), 0u);
    EXPECT_TRUE(f["source_title"].is_string());
    if (f["id"] == "log-cudnn-error") {
      saw_cudnn = true;
      EXPECT_EQ(f["severity"], "error");
      EXPECT_EQ(f["category"], "log");
      EXPECT_EQ(f["evidence"], "line 1: RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR");
    }
  }
  EXPECT_TRUE(saw_cudnn);
  EXPECT_EQ(j["environment"]["gpu_available"], false);
  EXPECT_EQ(j["log"]["lines"], 1);
  // Environment findings come before GPU findings, then the log's.
  EXPECT_EQ(j["findings"].back()["category"], "log");
}

}  // namespace
}  // namespace gpusage::diagnose
