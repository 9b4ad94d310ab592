// Issue 30's log families: kernel faults, device-side asserts, JAX/XLA OOM, cuDNN and driver mismatches,
// compilers without the GPU's architecture, the OOM killer, DataLoader file descriptors, codes with their own
// fix; and the warnings that must stay silent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

std::vector<Finding> diagnose(const std::string& text) { return check_log(scan_log(text), RunContext{}); }

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

TEST(LogFamilies, IllegalMemoryAccessNamesTheCodeAndTheWayToFindIt) {
  const auto f = diagnose("RuntimeError: CUDA error: an illegal memory access was encountered\n").front();
  EXPECT_EQ(f.id, "log-illegal-memory-access");
  EXPECT_TRUE(has(f.title, "cudaErrorIllegalAddress (700)")) << f.title;
  EXPECT_TRUE(has(f.fix, "CUDA_LAUNCH_BLOCKING=1")) << f.fix;
  EXPECT_TRUE(has(f.fix, "compute-sanitizer")) << f.fix;
}

TEST(LogFamilies, AnXlaWrapperIsExplainedByTheCudaErrorInside) {
  const auto findings = diagnose(
      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to launch CUDA kernel: CUDA_ERROR_ILLEGAL_ADDRESS: "
      "an illegal memory access was encountered\n");
  EXPECT_EQ(ids(findings), std::vector<std::string>{"log-illegal-memory-access"});
}

TEST(LogFamilies, DeviceAssertOnAnEmbeddingIndexPointsAtTheVocabulary) {
  const auto f = diagnose(
                     "../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex: block: [5,0,0], thread: "
                     "[31,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
                     "RuntimeError: CUDA error: device-side assert triggered\n")
                     .front();
  EXPECT_EQ(f.id, "log-device-assert");
  EXPECT_TRUE(has(f.title, "srcIndex < srcSelectDimSize")) << f.title;
  EXPECT_TRUE(has(f.fix, "vocabulary")) << f.fix;
  EXPECT_TRUE(has(f.evidence, "line 1:")) << f.evidence;
}

TEST(LogFamilies, DeviceAssertOnAClassLabelPointsAtNumClasses) {
  const auto f = diagnose("Loss.cu:240: nll_loss_forward: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t "
                          "< n_classes` failed.\n")
                     .front();
  EXPECT_EQ(f.id, "log-device-assert");
  EXPECT_TRUE(has(f.fix, "class label outside [0, num_classes)")) << f.fix;
}

TEST(LogFamilies, JaxOomGivesTheRequestAndXlasMemoryVariables) {
  const auto findings = diagnose(
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
      "4770354232 bytes.\nBufferAssignment OOM Debugging.\n");
  ASSERT_EQ(ids(findings), std::vector<std::string>{"log-jax-oom"});
  EXPECT_TRUE(has(findings.front().title, "4.44 GiB could not be allocated")) << findings.front().title;
  EXPECT_TRUE(has(findings.front().fix, "XLA_PYTHON_CLIENT_MEM_FRACTION")) << findings.front().fix;
  EXPECT_TRUE(has(findings.front().fix, "XLA_PYTHON_CLIENT_PREALLOCATE=false")) << findings.front().fix;
}

TEST(LogFamilies, ATensorflowOomWithResourceExhaustedStaysTensorflows) {
  const auto findings = diagnose(
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
      "shape[256,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0\n"
      "W tensorflow/core/framework/op_kernel.cc:1828] OP_REQUIRES failed at x.cc:1 : RESOURCE_EXHAUSTED: OOM\n");
  EXPECT_EQ(findings.front().id, "log-tf-oom");
  EXPECT_FALSE(find(findings, "log-jax-oom").has_value());
}

TEST(LogFamilies, CudnnVersionMismatchReadsBothVersions) {
  auto f = diagnose("E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.5.0 "
                    "but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version\n"
                    "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:417] could not create cudnn handle: "
                    "CUDNN_STATUS_INTERNAL_ERROR\n");
  ASSERT_EQ(ids(f), std::vector<std::string>{"log-cudnn-version-mismatch"});
  EXPECT_TRUE(has(f.front().title, "loaded 8.5.0, built with 8.6.0")) << f.front().title;
  f = diagnose("RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 9, 2) but found "
               "runtime version (8, 5, 0).\n");
  EXPECT_TRUE(has(f.front().title, "loaded 8, 5, 0, built with 8, 9, 2")) << f.front().title;
}

TEST(LogFamilies, PtxasWithoutTheArchitectureNamesTheToolkitThatAddsIt) {
  auto f = diagnose("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n").front();
  EXPECT_EQ(f.id, "log-arch-unsupported");
  EXPECT_TRUE(has(f.title, "(sm_120)")) << f.title;
  EXPECT_TRUE(has(f.fix, "needs CUDA 12.8 or newer")) << f.fix;
  EXPECT_TRUE(has(f.fix, "PyTorch 2.7 or newer")) << f.fix;
  f = diagnose("ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n").front();
  EXPECT_TRUE(has(f.fix, "sm_121a (Blackwell (GB10: DGX Spark)) needs CUDA 12.9 or newer")) << f.fix;
}

TEST(LogFamilies, EveryCompilerThatRejectsAnArchitectureIsRecognised) {
  for (const auto& [line, arch] : std::vector<std::pair<std::string, std::string>>{
           {"nvcc fatal : Value 'sm_86' is not defined for option 'gpu-architecture'", "sm_86"},
           {"'sm_120' is not a recognized processor for this target (ignoring processor)", "sm_120"},
           {"W external/org_tensorflow/asm_compiler.cc:231] Falling back to the CUDA driver for PTX compilation; ptxas "
            "does not support CC 8.9",
            "sm_89"},
           {"LLVM Fatal Error: Reason: PTX version 8.8 does not support target 'sm_107a'.", "sm_107a"}}) {
    const auto f = diagnose(line + "\n").front();
    EXPECT_EQ(f.id, "log-arch-unsupported") << line;
    EXPECT_TRUE(has(f.title, "(" + arch + ")")) << f.title;
  }
}

TEST(LogFamilies, CudnnThatCannotLoadOrDiffersIsAVersionMismatch) {
  for (const char* line : {"Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!",
                           "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot "
                           "open shared object file: No such file or directory",
                           "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600"}) {
    EXPECT_EQ(diagnose(std::string(line) + "\n").front().id, "log-cudnn-version-mismatch") << line;
  }
  // TensorFlow's warning when it runs on the CPU without cuDNN is not a failure of the run.
  EXPECT_EQ(diagnose("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
                     "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file\n")
                .front()
                .id,
            "log-clean");
}

TEST(LogFamilies, AKernelAssertWrappedBeforeFailedStillCounts) {
  const auto f = diagnose("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: "
                          "[31,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` \nfailed.\n")
                     .front();
  EXPECT_EQ(f.id, "log-device-assert");
}

TEST(LogFamilies, DriverMismatchesAreTheirOwnFindingInTheDriverFamily) {
  for (const char* line :
       {"Error 803: system has unsupported display driver / cuda driver combination",
        "F0101 common.cpp:151] Check failed: error == cudaSuccess (803 vs. 0)",
        "failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non "
        "supported HW",
        "kernel version 418.67.0 does not match DSO version 440.33.1 -- cannot find working devices",
        "Failed to initialize NVML: Driver/library version mismatch"}) {
    const auto f = diagnose(std::string(line) + "\n").front();
    EXPECT_EQ(f.id, "log-driver-mismatch") << line;
    EXPECT_TRUE(has(f.fix, "reboot")) << line;
  }
}

TEST(LogFamilies, TheKernelsOomKillerInItsShapes) {
  for (const char* line : {"Killed", "Getötet", "**Killed**", "Training failed with exit code -9", "/var/spool/slurm/job1/slurm_script: line 5: 4242 Killed  python x.py",
                           "  exitcode  : -9 (pid: 1234)", "Signal 9 (SIGKILL) received by PID 1234",
                           "[12345.6] Out of memory: Killed process 1234 (python)",
                           "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1.0"}) {
    EXPECT_EQ(diagnose(std::string(line) + "\n").front().id, "log-host-oom") << line;
  }
  EXPECT_EQ(diagnose("Model killed the baseline by 3 points\n").front().id, "log-clean");
}

TEST(LogFamilies, ALossColumnWithASuffixReadsAsTheLoss) {
  EXPECT_EQ(diagnose("train iter: 100 loss_net: nan loss_scale: 785.42 norm: nan\n").front().id, "log-non-finite");
}

TEST(LogFamilies, DataLoaderFileDescriptorsAndWorkerCrashes) {
  auto f = diagnose("RuntimeError: received 0 items of ancdata\n").front();
  EXPECT_EQ(f.id, "log-dataloader-killed");
  EXPECT_TRUE(has(f.fix, "ulimit -n")) << f.fix;
  EXPECT_TRUE(has(f.fix, "set_sharing_strategy(\"file_system\")")) << f.fix;
  f = diagnose("ERROR: Unexpected segmentation fault encountered in worker.\n").front();
  EXPECT_EQ(f.id, "log-dataloader-killed");
  EXPECT_TRUE(has(f.title, "Segmentation fault")) << f.title;
}

TEST(LogFamilies, ACodeWithItsOwnFixSpeaksWhenNothingElseExplainsTheLog) {
  auto findings = diagnose("RuntimeError: CUDA error: unknown error\n");
  EXPECT_EQ(findings.front().id, "log-cuda-error");
  EXPECT_TRUE(has(findings.front().title, "cudaErrorUnknown (999)")) << findings.front().title;
  EXPECT_TRUE(has(findings.front().fix, "nvidia_uvm")) << findings.front().fix;
  // Beside a real cause it is not reported.
  findings = diagnose("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB\nCUDA error: unknown error\n");
  EXPECT_FALSE(find(findings, "log-cuda-error").has_value());
}

TEST(LogFamilies, WarningsThatAreNotFailuresStaySilent) {
  const std::vector<std::string> warnings = {
      // PyTorch 2.3.0 (fixed in 2.3.1): a rejected cuDNN plan, the next one runs.
      "/usr/lib/python3/site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with a cudnnException: "
      "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: "
      "CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)",
      // NCCL's optional network plugin.
      "node1:123:456 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
      "node1:123:456 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
      // TensorFlow's note on a large host allocation.
      "2023-01-01 10:00:00.0: W tensorflow/core/framework/cpu_allocator_impl.cc:82] Allocation of 411041792 exceeds "
      "10% of free system memory.",
      // NCCL without InfiniBand uses sockets.
      "h0913n:12877:12877 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
  };
  for (const auto& w : warnings) EXPECT_EQ(diagnose(w + "\n").front().id, "log-clean") << w;
  // DeepSpeed's dynamic loss scale searching down from 2^32: skipped steps at huge scales.
  std::string deepspeed;
  for (int power = 32; power > 10; --power) {
    deepspeed += fmt::format("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {}, reducing to {}\n",
                             1LL << power, 1LL << (power - 1));
  }
  const auto findings = diagnose(deepspeed);
  EXPECT_EQ(findings.front().id, "log-clean") << findings.front().title;
}

// A loss scale at or under the floor is a collapse only when the scaler was seen lowering it, or below 1. The
// scale bf16 and fp32 runs print on every step (Megatron-LM and Megatron-DeepSpeed: "loss scale: 1.0", as in
// the corpus's train logs) and a setting whose name ends in loss_scale (fairseq's argument dump) stay clean.
TEST(LogFamilies, AConstantLossScaleOfOneOrASettingIsNotACollapse) {
  std::string megatron;
  for (int it = 1; it <= 5; ++it) {
    megatron += fmt::format(
        " iteration {:8d}/  250000 | consumed samples: {:12d} | elapsed time per iteration (ms): 4247.9 | learning "
        "rate: 2.999E-04 | global batch size:     8 | loss scale: 1.0 | grad norm: 0.794 |\n",
        it, 8 * it);
  }
  EXPECT_EQ(diagnose(megatron).front().id, "log-clean");
  EXPECT_EQ(diagnose("Namespace(fp16=True, fp16_init_scale=128, min_loss_scale=0.0001, lr=[0.0005])\n").front().id,
            "log-clean");
  // The same scale of 1 reached by halving from 2^16, or named by DeepSpeed's overflow, is a collapse; so is a
  // scale below 1 named once (fairseq's "loss_scale 0.000").
  std::string falling;
  for (int power = 16; power >= 0; --power) {
    falling += fmt::format(" iteration {:8d}/  250000 | loss scale: {}.0 | grad norm: 0.794 |\n", 17 - power,
                           1 << power);
  }
  EXPECT_EQ(diagnose(falling).front().id, "log-loss-scale-collapse");
  EXPECT_EQ(diagnose("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n").front().id,
            "log-loss-scale-collapse");
  EXPECT_EQ(diagnose("| epoch 028 | loss 3.976 | nll_loss 2.204 | oom 0.000 | loss_scale 0.000\n").front().id,
            "log-loss-scale-collapse");
}

}  // namespace
}  // namespace gpusage::diagnose
