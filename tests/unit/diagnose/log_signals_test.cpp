// Issue 54's families, each in the wordings of at least three frameworks or libraries (the lines are from
// train logs of the real corpus or the libraries' own messages): non-finite values, host memory outside
// PyTorch, DataLoader workers (file descriptors, the spawn start method), a GPU too old for a kernel library,
// cuDNN's engine selection and versions, TensorFlow's allocators, PTX newer than the driver, CUDA errors at
// teardown.
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_signals.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

std::string first_id(const std::string& text) { return check_log(scan_log(text), RunContext{}).front().id; }
Finding first(const std::string& text) { return check_log(scan_log(text), RunContext{}).front(); }
bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(LogSignals, AnExceptionNamedAtTheStartOfALineIsReadWhateverWrapsIt) {
  EXPECT_EQ(scan_text::exception_at_start("ValueError:Network outputs is NAN!"), "ValueError");
  EXPECT_EQ(scan_text::exception_at_start("numpy.core._exceptions._ArrayMemoryError: Unable to allocate"),
            "_ArrayMemoryError");
  EXPECT_EQ(scan_text::exception_at_start("  `AssertionError: Rank 11: found NaN`"), "AssertionError");
  EXPECT_EQ(scan_text::exception_at_start("FloatingPointError                        Traceback"), "");
  EXPECT_EQ(scan_text::exception_at_start("loss: nan - val_loss: nan"), "");
}

TEST(LogSignals, NonFiniteValuesInEachFrameworksOwnWords) {
  // Megatron-Core's gradient check, a user's own check, JAX's debug_nans, Keras' TerminateOnNaN.
  for (const char* line : {
           "AssertionError: Rank 11: found NaN in local grad norm in backward pass before data-parallel "
           "communication collective. Device: 3",
           "ValueError:Network outputs is NAN! Stop Training",
           "invalid value (nan) encountered in jit(convert_element_type). Because "
           "jax_config.debug_nans.value and/or "
           "config.jax_debug_infs is set, the de-optimized function ... was called",
           "`Batch 6: Invalid loss, terminating training`",
       }) {
    EXPECT_EQ(first_id(std::string(line) + "\n"), "log-non-finite") << line;
  }
  const Finding megatron = first("AssertionError: Rank 0: found NaN in local grad norm in backward pass\n");
  EXPECT_TRUE(has(megatron.title, "Non-finite gradients")) << megatron.title;
}

TEST(LogSignals, JaxsNanCheckInTheTracebacksLastFrameIsEnough) {
  const std::string log =
      "File ~/anaconda3/envs/mjx/lib/python3.12/site-packages/jax/_src/dispatch.py:319, in "
      "_check_special(name, "
      "dtype, buf)\n"
      "    [318] if config.debug_nans.value and np.any(np.isnan(np.asarray(buf))):\n";
  EXPECT_EQ(first_id(log), "log-non-finite");
}

TEST(LogSignals, ExceptionsWithoutANonFiniteValueAreNotDivergence) {
  EXPECT_EQ(first_id("ValueError: too many values to unpack (expected 2)\n"), "log-clean");
  EXPECT_EQ(first_id("UserWarning: the loss became nan once; skipping\n"), "log-clean");
  EXPECT_EQ(first_id("ValueError: could not read the financial records\n"), "log-clean");
}

TEST(LogSignals, HostMemoryRefusedOutsidePyTorch) {
  // numpy (two module paths), Python's errno 12 from fork, torchrun's and DeepSpeed's launchers reporting a
  // child killed by signal 9.
  for (const char* line : {
           "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 58.0 GiB for an array with shape "
           "(176351, "
           "176460) and data type uint16",
           "numpy.core._exceptions.MemoryError: Unable to allocate 7.91 GiB for an array with shape "
           "(1396913, 190, 4) "
           "and data type float64",
           "OSError: [Errno 12] Cannot allocate memory",
           "E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
           "failed "
           "(exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python",
           "[ERROR] [launch.py:321:sigkill_handler [xxx] exits with return code = -9",
       }) {
    EXPECT_EQ(first_id(std::string(line) + "\n"), "log-host-oom") << line;
  }
  const Finding numpy = first(
      "numpy._core._exceptions._ArrayMemoryError: Unable to allocate 32.0 GiB for an array with shape (2048, "
      "2048, "
      "2048, 4) and data type uint8\n");
  EXPECT_TRUE(has(numpy.title, "numpy) could not allocate 32.0 GiB")) << numpy.title;
  // PyTorch's GPU OOM exception is not the host's.
  EXPECT_EQ(first_id("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"),
            "log-cuda-oom");
}

TEST(LogSignals, WorkersOutOfFileDescriptorsByErrno24InAnyWrapper) {
  for (const char* line : {
           "OSError: [Errno 24] Too many open files",
           "IOError: [Errno 24] Too many open files",
           "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please "
           "increase "
           "the limit using `ulimit -n` in the shell",
       }) {
    const Finding f = first(std::string(line) + "\n");
    EXPECT_EQ(f.id, "log-dataloader-killed") << line;
    EXPECT_TRUE(has(f.title, "file descriptors")) << f.title;
  }
}

TEST(LogSignals, TheSpawnStartMethodFailingInItsShapes) {
  // Python's own message; the Windows traceback through spawn_main; a broken pipe while a DataLoader starts
  // its workers; a Windows notebook paste that ends on the worker-start frame; a dataset that cannot be
  // pickled.
  const std::string bootstrapping =
      "RuntimeError: An attempt has been made to start a new process before the current process has finished "
      "its "
      "bootstrapping phase.\n";
  const std::string spawn_main =
      "Traceback (most recent call last):\n"
      "  File \"<string>\", line 1, in <module>\n"
      "  File \"C:\\Python37\\lib\\multiprocessing\\spawn.py\", line 105, in spawn_main\n"
      "    exitcode = _main(fd)\n";
  const std::string broken_pipe =
      "  File \"C:\\Users\\me\\lib\\site-packages\\torch\\utils\\data\\dataloader.py\", line 719, in "
      "__init__\n"
      "    w.start()\n"
      "BrokenPipeError: [Errno 32] Broken pipe\n";
  const std::string cut =
      "~\\Anaconda3\\envs\\pytorch\\lib\\site-packages\\torch\\utils\\data\\dataloader.py in __iter__(self)\n"
      "--> 501         return _DataLoaderIter(self)\n"
      "--> 289                 w.start()\n";
  const std::string unpicklable =
      "  File \"E:\\Anaconda3\\lib\\multiprocessing\\popen_spawn_win32.py\", line 89, in __init__\n"
      "TypeError: can't pickle module objects\n"
      "  File \"E:\\Anaconda3\\lib\\multiprocessing\\spawn.py\", line 115, in _main\n"
      "    self = reduction.pickle.load(from_parent)\n"
      "EOFError: Ran out of input\n";
  for (const std::string& log : {bootstrapping, spawn_main, broken_pipe, cut, unpicklable}) {
    EXPECT_EQ(first_id(log), "log-dataloader-spawn") << log;
  }
  EXPECT_TRUE(has(first(bootstrapping).fix, "if __name__ == \"__main__\":"));
}

TEST(LogSignals, SpawnFramesOrBrokenPipesAloneAreNotASpawnFailure) {
  // torch.multiprocessing on Linux shows spawn.py too; a broken pipe without a DataLoader is something else;
  // a worker-start frame followed by the exception it raised is that exception's.
  EXPECT_EQ(first_id("  File \"/usr/lib/python3.10/multiprocessing/spawn.py\", line 116, in spawn_main\n"),
            "log-clean");
  EXPECT_EQ(first_id("BrokenPipeError: [Errno 32] Broken pipe\n"), "log-clean");
  EXPECT_EQ(first_id("  File \"C:\\x\\dataloader.py\", line 1040, in __init__\n    w.start()\n"
                     "OSError: [Errno 24] Too many open files\n"),
            "log-dataloader-killed");
}

TEST(LogSignals, AGpuTooOldForAKernelLibraryNamesTheLibraryAndTheCapabilities) {
  struct Case {
    const char* line;
    const char* title;
  };
  for (const Case& c : {
           Case{"RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
                "FlashAttention does not support"},
           Case{"RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the "
                "implementation needs a large amount of shared memory.",
                "needs an A100 or H100"},
           Case{"RuntimeError: Found Tesla P40 which is too old to be supported by the triton GPU compiler, "
                "which is "
                "used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your "
                "device is of "
                "CUDA capability 6.1",
                "needs compute capability 7.0 or newer; Tesla P40 has 6.1"},
           Case{"    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)",
                "above 8.0; this GPU has 7.5"},
           Case{"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
                "Your Tesla T4 "
                "GPU has compute capability 7.5. You can use float16 instead",
                "they need compute capability 8.0; Tesla T4 has 7.5"},
       }) {
    const Finding f = first(std::string(c.line) + "\n");
    EXPECT_EQ(f.id, "log-gpu-too-old") << c.line;
    EXPECT_TRUE(has(f.title, c.title)) << f.title;
  }
  // xFormers on a GPU newer than its build is not "too old".
  EXPECT_NE(
      first_id(
          "    requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)\n"),
      "log-gpu-too-old");
}

TEST(LogSignals, CudnnEngineSelectionAndMixedCudnnLibraries) {
  for (const char* line :
       {"RuntimeError: GET was unable to find an engine to execute this computation",
        "RuntimeError: FIND was unable to find an engine to execute this computation",
        "!!! Exception during processing !!! GET was unable to find an engine to execute this "
        "computation"}) {
    const Finding f = first(std::string(line) + "\n");
    EXPECT_EQ(f.id, "log-cudnn-error") << line;
    EXPECT_TRUE(has(f.title, "no cuDNN engine")) << f.title;
  }
  // Another cuDNN than the framework's: PyTorch's sub-libraries of two versions, JAX's and TensorFlow's
  // version check.
  for (const char* line : {
           "UserWarning: Attempt to open cnn_infer failed: handle=0 error: "
           "/x/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: "
           "undefined symbol: _Z22cudnnGenericOpTensorNd, version libcudnn_ops_infer.so.8",
           "E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source "
           "was "
           "compiled with: 9.13.1.",
           "E tensorflow/stream_executor/cuda/cuda_dnn.cc:319] Loaded runtime CuDNN library: 7.4.1 but "
           "source was "
           "compiled with: 7.6.4.",
       }) {
    EXPECT_EQ(first_id(std::string(line) + "\nRuntimeError: GET was unable to find an engine\n"),
              "log-cudnn-version-mismatch")
        << line;
  }
}

TEST(LogSignals, TensorflowAllocatorFailuresInTheirOtherWords) {
  EXPECT_EQ(
      first_id(": F tensorflow/core/common_runtime/gpu/gpu_device.cc:103] EigenAllocator for GPU ran out of "
               "memory when allocating 0. See error logs for more detailed info.\n"),
      "log-tf-oom");
  // A Windows build's backslash path says TensorFlow as much as a slash does (not JAX's XLA).
  EXPECT_EQ(
      first_id(
          "2017-11-03 11:34:30.628747: E C:\\tf_jenkins\\home\\workspace\\rel-win\\M\\windows-gpu\\PY\\35\\"
          "tensorflow\\stream_executor\\cuda\\cuda_driver.cc:924] failed to allocate 1.97G (2120187392 "
          "bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n"),
      "log-tf-oom");
  EXPECT_EQ(
      first_id("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
               "with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0\n"),
      "log-tf-oom");
}

TEST(LogSignals, PtxNewerThanTheDriverWithOrWithoutTheWordCuda) {
  // cuTENSOR's sample, gpu-burn, ggml, TensorRT's sample: code 222 by message, number or name.
  for (const char* line : {
           "Error: the provided PTX was compiled with an unsupported toolchain.",
           "Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:243): the provided PTX was "
           "compiled with "
           "an unsupported toolchain.",
           "CUDA error 222 at /home/test/PowerInfer/ggml-cuda.cu:9635: the provided PTX was compiled with an "
           "unsupported toolchain.",
           "CUDA Runtime error cudaEventCreate(&begin_) # the provided PTX was compiled with an unsupported "
           "toolchain., code = cudaErrorUnsupportedPtxVersion [ 222 ] in file timer.hpp:34",
       }) {
    EXPECT_EQ(first_id(std::string(line) + "\n"), "log-driver-too-old") << line;
  }
}

TEST(LogSignals, CudaErrorsReportedAsWarningsAtTeardown) {
  // PyTorch's destructors, TensorFlow's event teardown, dlib's stream teardown.
  for (const char* line : {
           "Warning: CUDA warning: an illegal memory access was encountered (function destroyEvent)",
           "2018-05-16 14:46:53.244085: E tensorflow/stream_executor/event.cc:32] error destroying CUDA "
           "event in "
           "context 0xddfc780: CUDA_ERROR_ILLEGAL_ADDRESS",
           "cudaStreamDestroy() failed. Reason: an illegal memory access was encountered",
       }) {
    EXPECT_EQ(first_id(std::string(line) + "\n"), "log-illegal-memory-access") << line;
  }
  // The driver unloading at exit is not a failure.
  EXPECT_EQ(first_id("[W CUDAGuardImpl.h:46] Warning: CUDA warning: driver shutting down (function "
                     "uncheckedGetDevice)\n"),
            "log-clean");
}

TEST(LogSignals, PytorchsOomByItsExceptionClassOrTheAsyncAllocatorsMessage) {
  // ComfyUI's error report, a bare exception line, the cudaMallocAsync backend's message.
  for (const char* text :
       {"- **Exception Type:** torch.OutOfMemoryError\n- **Exception Message:** Allocation on device\n",
        "torch.cuda.OutOfMemoryError\n",
        "SamplerCustomAdvanced: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
        "Currently allocated     : 9.43 GiB\n"}) {
    EXPECT_EQ(first_id(text), "log-cuda-oom") << text;
  }
}

TEST(LogSignals, PytorchsOomMessagePastedWithoutItsFirstWords) {
  const Finding f = first(
      "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; "
      "1.25 GiB reserved in total by PyTorch)\n");
  EXPECT_EQ(f.id, "log-cuda-oom");
  EXPECT_TRUE(has(f.title, "tried to allocate 20.00 MiB on GPU 0")) << f.title;
}

}  // namespace
}  // namespace gpusage::diagnose
