#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/catalog/catalog.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024.0 * kMiB;

LogScan scan_fixture(const std::string& name) {
  return scan_log(read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/" + name));
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
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.12 "
      "GiB "
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
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
      "31.36 "
      "GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 30.85 GiB memory in "
      "use. Of "
      "the allocated memory 29.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but "
      "unallocated.");
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
      "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacty of 79.15 GiB of which "
      "18.69 MiB "
      "is free. Process 1234 has 79.12 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by "
      "PyTorch, with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), and 8.00 GiB is reserved by "
      "PyTorch "
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
  const LogScan s = scan_log(
      "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
      "reported\n");
  ASSERT_EQ(s.cuda_oom.size(), 1u);
  EXPECT_EQ(s.cuda_oom[0].wording, "cuda");
  const auto f = find(check_log(s, {}), "log-cuda-oom");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "CUDA out of memory (1x): allocation failed");
}

TEST(ScanLog, JoinsAnOomMessageWrappedOverLines) {
  const LogScan s = scan_log(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity "
      "of\n"
      "  31.36 GiB of which 512.00 MiB is free. Of the allocated memory 29.10 GiB is allocated by PyTorch, "
      "and\n"
      "  1.20 GiB is reserved by PyTorch but unallocated.\n"
      "next line\n");
  ASSERT_EQ(s.cuda_oom.size(), 1u);
  EXPECT_EQ(s.cuda_oom[0].at.line, 1u);
  EXPECT_DOUBLE_EQ(*s.cuda_oom[0].capacity_bytes, 31.36 * kGiB);
  EXPECT_DOUBLE_EQ(*s.cuda_oom[0].unallocated_bytes, 1.20 * kGiB);
}

TEST(ScanLog, FindsTheBatchSizeTheRunPrinted) {
  EXPECT_EQ(scan_fixture("oom_pytorch1.log").batch_size, std::optional<int>(256));
  EXPECT_EQ(scan_log("eval_batch_size=8\nper_device_train_batch_size: 16\n").batch_size,
            std::optional<int>(16));
}

// The scaled model's memory at `batch`, as plan_oom computes it (for a card of the log's capacity).
double scaled_need(const workload::Workload& w, const OomPlan& p, int batch, catalog::Precision precision,
                   bool checkpointing = false) {
  estimate::TrainingConfig c;
  c.batch_per_gpu = batch;
  c.precision = precision;
  c.optimizer = estimate::Optimizer::momentum;
  c.checkpointing = checkpointing;
  catalog::Gpu card;
  card.memory_gb = p.capacity_bytes / kGiB;
  return p.scale * estimate::estimate_memory(w, c, card).required_bytes();  // what has to fit
}

TEST(LogRules, Pytorch1OomWithModelGivesTheLargestBatchForTheLogsCapacity) {
  const LogScan scan = scan_fixture("oom_pytorch1.log");
  ASSERT_EQ(scan.cuda_oom.size(), 1u);
  const workload::Workload resnet = workload::build("resnet50");
  RunContext ctx;
  ctx.workload = &resnet;  // batch from the log (256), capacity from the log (23.69 GiB), no card named
  const auto findings = check_log(scan, ctx);
  const std::optional<Finding> oom = find(findings, "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  EXPECT_EQ(oom->severity, Severity::error);
  EXPECT_EQ(
      oom->title,
      "CUDA out of memory (1x): tried to allocate 2.00 GiB on GPU 0 (23.69 GiB total, 20.12 GiB allocated by "
      "PyTorch, 1.05 GiB free)");
  EXPECT_EQ(oom->evidence.rfind("line 9: RuntimeError: CUDA out of memory.", 0), 0u) << oom->evidence;

  const std::optional<OomPlan> p = plan_oom(scan.cuda_oom[0], scan, ctx);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->capacity_bytes, 23.69 * kGiB);
  EXPECT_EQ(p->capacity_from, "the log");
  // Measured: 23.69 - 1.05 GiB in use plus the 2.00 GiB request.
  EXPECT_NEAR(*p->needed_bytes, (23.69 - 1.05 + 2.00) * kGiB, 1e3);
  EXPECT_EQ(p->batch, std::optional<int>(256));
  // The scaled model needs at batch 256 exactly what the log shows (or more, when the model says more).
  EXPECT_GE(scaled_need(resnet, *p, 256, catalog::Precision::fp32), *p->needed_bytes * 0.999);
  // The largest batch fits the log's capacity and the next does not.
  ASSERT_GT(p->largest_batch, 0);
  ASSERT_LT(p->largest_batch, 256);
  EXPECT_LE(scaled_need(resnet, *p, p->largest_batch, catalog::Precision::fp32), p->capacity_bytes);
  EXPECT_GT(scaled_need(resnet, *p, p->largest_batch + 1, catalog::Precision::fp32), p->capacity_bytes);
  ASSERT_TRUE(p->micro_batch && p->accumulation_steps);
  EXPECT_LE(*p->micro_batch, p->largest_batch);
  EXPECT_GE(*p->micro_batch * *p->accumulation_steps, 256);
  EXPECT_LE(scaled_need(resnet, *p, *p->checkpointing_batch, catalog::Precision::fp32, true),
            p->capacity_bytes);
  EXPECT_LE(scaled_need(resnet, *p, *p->mixed_precision_batch, catalog::Precision::bf16), p->capacity_bytes);
  EXPECT_GT(*p->checkpointing_batch, p->largest_batch);

  EXPECT_NE(oom->fix.find("Measured at the failure: at least 24.64 GiB needed"), std::string::npos)
      << oom->fix;
  EXPECT_NE(oom->fix.find(fmt::format("Largest batch that fits on the log's 23.69 GiB capacity: {}.",
                                      p->largest_batch)),
            std::string::npos)
      << oom->fix;
  EXPECT_NE(oom->fix.find(fmt::format("batch {} with {} gradient accumulation steps", *p->micro_batch,
                                      *p->accumulation_steps)),
            std::string::npos)
      << oom->fix;
  EXPECT_NE(oom->fix.find(fmt::format("would allow batch {}.", *p->mixed_precision_batch)),
            std::string::npos);
  // No card is named the log does not name.
  EXPECT_EQ(oom->fix.find("RTX"), std::string::npos) << oom->fix;
  EXPECT_EQ(oom->fix.find("guess"), std::string::npos) << oom->fix;
  // 1.38 GiB unallocated of 23.69 GiB is under 10% and under the 2 GiB request: no fragmentation finding.
  EXPECT_FALSE(find(findings, "log-oom-fragmentation").has_value());
}

TEST(LogRules, ALogThatFailedAtABatchTheModelSaysFitsIsBelievedOverTheModel) {
  // resnet50 at batch 64 fits an RTX 4090 by the model; the log says it ran out of memory on 23.69 GiB.
  const workload::Workload resnet = workload::build("resnet50");
  const catalog::Gpu& rtx4090 = catalog::Catalog::active().resolve("rtx4090");
  estimate::TrainingConfig c;
  c.batch_per_gpu = 64;
  c.optimizer = estimate::Optimizer::momentum;
  ASSERT_GE(estimate::max_batch(resnet, c, rtx4090), 64);
  RunContext ctx;
  ctx.workload = &resnet;
  ctx.batch = 64;
  ctx.gpu = &rtx4090;
  const LogScan scan = scan_fixture("oom_pytorch1.log");
  const std::optional<OomPlan> p = plan_oom(scan.cuda_oom[0], scan, ctx);
  ASSERT_TRUE(p.has_value());
  EXPECT_GT(p->scale, 1.0);
  EXPECT_LT(p->largest_batch, 64);
  ASSERT_TRUE(p->accumulation_steps.has_value());
  EXPECT_GE(*p->micro_batch * *p->accumulation_steps, 64);
  const std::optional<Finding> oom = find(check_log(scan, ctx), "log-cuda-oom");
  EXPECT_NE(oom->fix.find("Keep the effective batch of 64"), std::string::npos) << oom->fix;
}

TEST(LogRules, WithoutAModelTheFixGivesTheShortfallOnTheLogsCapacity) {
  const std::optional<Finding> oom = find(
      check_log(
          scan_log(
              "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 "
              "has a total capacty of 6.00 GiB of which 0 bytes is free. Of the allocated memory "
              "2.93 GiB is allocated by PyTorch, and 2.30 GiB is reserved by PyTorch but unallocated.\n"),
          {}),
      "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  // 6.00 GiB in use + 1.70 GiB = 7.70 GiB on 6.00 GiB: 1.70 GiB short, 23% less.
  EXPECT_EQ(
      oom->fix.rfind("Measured at the failure: at least 7.70 GiB needed on the log's 6.00 GiB capacity: 1.70 "
                     "GiB short, so this step needs at least 23% less memory.",
                     0),
      0u)
      << oom->fix;
}

TEST(LogRules, TensorflowOomWithAModelUsesTheDeviceMemoryTensorFlowCreated) {
  const workload::Workload resnet = workload::build("resnet50");
  RunContext ctx;
  ctx.workload = &resnet;
  ctx.batch = 16;
  const LogScan scan = scan_log(
      "2018-09-26 11:04:10.387493: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1097] Created "
      "TensorFlow device "
      "(/device:GPU:0 with 7000 MB memory) -> physical GPU (device: 0)\n"
      "ResourceExhaustedError: OOM when allocating tensor with shape[16,112,112,147] and type float on "
      "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n");
  const std::optional<OomPlan> p = plan_oom(scan.tf_oom[0], scan, ctx);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->capacity_bytes, 7000.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*scan.tf_oom[0].requested_bytes, 16.0 * 112 * 112 * 147 * 4);
  EXPECT_DOUBLE_EQ(*p->needed_bytes, 7000.0 * 1024 * 1024 + 16.0 * 112 * 112 * 147 * 4);
  EXPECT_LT(p->largest_batch, 16);
  const std::optional<Finding> f = find(check_log(scan, ctx), "log-tf-oom");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(
      f->title,
      "TensorFlow ran out of GPU memory (1x): a [16,112,112,147] tensor (112.55 MiB) did not fit on GPU 0");
  EXPECT_NE(f->fix.find(
                fmt::format("Largest batch that fits on the log's 6.84 GiB capacity: {}.", p->largest_batch)),
            std::string::npos)
      << f->fix;
}

TEST(LogRules, OomWithoutAModelGivesTheGenericFix) {
  const auto findings = check_log(scan_fixture("oom_pytorch1.log"), RunContext{});
  const std::optional<Finding> oom = find(findings, "log-cuda-oom");
  ASSERT_TRUE(oom.has_value());
  EXPECT_NE(oom->fix.find("Give --model and --batch for the largest batch that fits 23.69 GiB."),
            std::string::npos)
      << oom->fix;
  // Without any capacity, the generic fix says what to pass.
  const auto bare = check_log(scan_log("RuntimeError: CUDA error: out of memory\n"), RunContext{});
  EXPECT_NE(bare.front().fix.find("Give --model, --batch, --precision and --gpu for concrete numbers."),
            std::string::npos);
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
  const LogScan scan = scan_log(
      "grad_norm=1.0\ngrad_norm=1.1\ngrad_norm=0.9\ngrad_norm=1.0\ngrad_norm=1.2\n"
      "grad_norm=5.0\n");
  EXPECT_FALSE(find(check_log(scan, {}), "log-grad-explosion").has_value());
}

TEST(LogRules, NoKernelImageNamesTheGpuAndTheBuildToInstall) {
  const std::optional<Finding> f =
      find(check_log(scan_fixture("no_kernel_image.log"), {}), "log-no-kernel-image");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(
      f->title,
      "No kernel image for this GPU (2x) on NVIDIA GeForce RTX 5090 (sm_120); the build supports sm_50 sm_60 "
      "sm_70 sm_75 sm_80 sm_86 sm_90");
  EXPECT_NE(f->fix.find("Install PyTorch 2.7 or newer built for CUDA 12.8 or newer"), std::string::npos)
      << f->fix;
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
  const std::optional<Finding> f =
      find(check_log(scan_fixture("dataloader_shm.log"), {}), "log-dataloader-killed");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "DataLoader worker died (2x) (Bus error)");
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
  EXPECT_EQ(
      f->title,
      "TensorFlow ran out of GPU memory (2x): a [256,64,112,112] tensor (784.00 MiB) did not fit on GPU 0");
}

TEST(LogRules, ManyFp16OverflowSkipsAtAHealthyScaleAreAWarningAFewAreNot) {
  const std::optional<Finding> f =
      find(check_log(scan_fixture("overflow_skips.log"), {}), "log-overflow-skips");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "25 optimizer steps skipped for fp16 overflow: the loss scale keeps collapsing");
  const LogScan few = scan_log("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536\n");
  EXPECT_FALSE(find(check_log(few, {}), "log-overflow-skips").has_value());
}

TEST(LogRules, ALossScaleDownToZeroIsACollapse) {
  const auto findings = check_log(scan_fixture("fp16_overflow.log"), {});
  const std::optional<Finding> f = find(findings, "log-loss-scale-collapse");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::error);
  EXPECT_EQ(f->title.rfind("The fp16 loss scale collapsed to 0 (from 32768;", 0), 0u) << f->title;
  EXPECT_FALSE(find(findings, "log-overflow-skips").has_value());  // one finding for one problem
}

TEST(LogRules, ANormalLossScaleIsNotACollapse) {
  EXPECT_EQ(
      check_log(scan_log("Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 131072.0\n"),
                {})
          .front()
          .id,
      "log-clean");
}

TEST(LogRules, DataLoaderWithoutWorkers) {
  const std::optional<Finding> f =
      find(check_log(scan_fixture("workers_zero.log"), {}), "log-dataloader-workers-zero");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::warning);
}

TEST(LogRules, CleanLogSaysSo) {
  const auto findings = check_log(scan_fixture("clean.log"), {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "log-clean");
  EXPECT_EQ(findings[0].title, "No known failure pattern in 4 log lines");
}

std::string real_fixture(const std::string& name) {
  return read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/real/" + name);
}

TEST(LogScanner, ChunksSplitAnywhereGiveTheSameScanAsTheWholeText) {
  const std::string text =
      read_log_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/doctor/logs/oom_pytorch2.log");
  const LogScan whole = scan_log(text);
  LogScanner scanner;
  for (char c : text) scanner.feed_text(std::string_view(&c, 1));
  scanner.finish();
  const LogScan& chunked = scanner.scan();
  EXPECT_EQ(chunked.lines, whole.lines);
  ASSERT_EQ(chunked.cuda_oom.size(), whole.cuda_oom.size());
  EXPECT_EQ(chunked.cuda_oom[0].capacity_bytes, whole.cuda_oom[0].capacity_bytes);
  EXPECT_EQ(chunked.cuda_oom[0].at.line, whole.cuda_oom[0].at.line);
}

TEST(LogScanner, KeepsCountsButOnlyTheFirstLinesOfAPattern) {
  LogScanner scanner;
  for (int i = 0; i < 100000; ++i) scanner.feed_line("RuntimeError: NCCL Error 2: unhandled system error");
  scanner.finish();
  EXPECT_EQ(scanner.scan().nccl_error.size(), 100000u);
  EXPECT_EQ(scanner.scan().nccl_error.kept().size(), Matches::kKept);
  EXPECT_EQ(scanner.scan().nccl_error_detail, std::optional<std::string>("unhandled system error"));
}

TEST(LogRules, AnOomFollowedByCublasInitFailuresIsOneFinding) {
  const auto findings = check_log(scan_log(real_fixture("oom-pt1-cublas-cascade-aoda.log")), {});
  ASSERT_EQ(findings.size(), 1u) << testing::PrintToString(ids(findings));
  EXPECT_EQ(findings[0].id, "log-cuda-oom");
  EXPECT_NE(findings[0].evidence.find("then 1 cuBLAS/cuDNN handle(s) could not be created"),
            std::string::npos)
      << findings[0].evidence;
  EXPECT_NE(findings[0].evidence.find("CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos);
}

TEST(LogRules, NcclErrorsAfterARankRanOutOfMemoryAreEvidenceOfTheOom) {
  const auto findings = check_log(
      scan_log("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
               "total "
               "capacity of 79.15 GiB of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is "
               "allocated by "
               "PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n"
               "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=808, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600020 milliseconds\n"
               "[rank1]: RuntimeError: NCCL Error 2: unhandled system error\n"),
      {});
  EXPECT_EQ(ids(findings), std::vector<std::string>{"log-cuda-oom"});
  EXPECT_NE(findings[0].evidence.find("then 2 NCCL error/timeout line(s)"), std::string::npos)
      << findings[0].evidence;
}

TEST(LogRules, IndependentProblemsAreListedInTheOrderTheyHappened) {
  const auto findings = check_log(scan_log("{'loss': nan, 'epoch': 1}\n"
                                           "RuntimeError: DataLoader worker (pid(s) 42) exited unexpectedly\n"
                                           "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED\n"),
                                  {});
  EXPECT_EQ(ids(findings),
            (std::vector<std::string>{"log-non-finite", "log-dataloader-killed", "log-cudnn-error"}));
}

TEST(LogRules, DriverTooOldReadsTheFoundVersionAndGivesTheTablesMinimum) {
  const LogScan scan = scan_log(real_fixture("driver-pt-runtimeerror-11040-smi.log"));
  EXPECT_EQ(scan.driver_cuda, std::optional<std::string>("11.4"));
  RunContext ctx;
  ctx.framework_cuda = "12.1";
  const std::optional<Finding> f = find(check_log(scan, ctx), "log-driver-too-old");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(
      f->title,
      "The NVIDIA driver is too old for the CUDA runtime in use (1x) (the driver supports CUDA up to 11.4)");
  const CudaDriverFact* fact = RuleTable::builtin().min_driver_for(*Version::parse("12.1"));
  ASSERT_NE(fact, nullptr);
  EXPECT_EQ(
      f->fix.rfind(
          fmt::format("Install NVIDIA driver {} or newer (the minimum for CUDA 12.1, which the installed "
                      "framework was built with), or install a framework build for CUDA 11.4 or older.",
                      fact->linux_driver),
          0),
      0u)
      << f->fix;
  // Without the framework's CUDA: the minimum per newer CUDA major, from the compatibility table.
  const std::optional<Finding> g = find(check_log(scan, {}), "log-driver-too-old");
  EXPECT_NE(g->fix.find(fmt::format("CUDA 12.x builds need driver {} or newer",
                                    RuleTable::builtin().minor_compat(12)->linux_driver)),
            std::string::npos)
      << g->fix;
}

TEST(LogRules, TheDriverFixUsesTheCudaRuntimeTheLogNames) {
  const LogScan scan = scan_log(
      "2023-03-17 15:10:16.549035: I dso_loader.cc:50] Successfully opened dynamic library "
      "libcudart.so.12\n"
      "tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. "
      "Status: CUDA driver version is insufficient for CUDA runtime version\n");
  EXPECT_EQ(scan.runtime_cuda, std::optional<std::string>("12"));
  const std::optional<Finding> f = find(check_log(scan, {}), "log-driver-too-old");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->fix.find("(the minimum for CUDA 12.0, which the log names)"), std::string::npos) << f->fix;
}

TEST(LogRules, TensorflowOomOnTheCpuAllocatorIsAHostMemoryFinding) {
  const auto findings = check_log(scan_log(real_fixture("hostoom-tf-cpu-darkflow.log")), {});
  EXPECT_EQ(ids(findings), std::vector<std::string>{"log-host-oom"});
  EXPECT_EQ(findings[0].title, "The host ran out of memory (RAM) (2x): TensorFlow's cpu allocator");
}

TEST(LogRules, AWorkerKilledWithSigkillIsTheHostOutOfMemory) {
  const auto findings =
      check_log(scan_log("RuntimeError: DataLoader worker (pid 75890) is killed by signal: Killed.\n"), {});
  EXPECT_EQ(ids(findings), std::vector<std::string>{"log-host-oom"});
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
    for (const char* key : {"id", "severity", "title", "evidence", "fix"})
      EXPECT_TRUE(f[key].is_string()) << key;
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
  // The log's findings come first (what was asked), then the environment's and the GPUs'.
  EXPECT_EQ(j["findings"].front()["category"], "log");
  EXPECT_EQ(j["findings"].back()["category"], "gpu");
}

}  // namespace
}  // namespace gpusage::diagnose
