// log_scan_wordings.cpp's families, each in at least three frameworks', libraries' or shells' words (lines from
// train logs of the real corpus or the tools' own messages): the host out of memory, GPU memory outside
// PyTorch's allocator, DataLoader workers, TensorFlow's allocator, cuDNN that cannot load, non-finite values in
// prose, a kernel's assert pasted alone. A TensorFlow warning that says it is not a failure stays clean.
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"
#include "unit/diagnose/findings.hpp"

namespace gpusage::diagnose {
namespace {

std::string wording_first_id(const std::string& text) { return check_log(scan_log(text), RunContext{}).front().id; }

void expect_each(const char* id, std::initializer_list<const char*> lines) {
  for (const char* line : lines) EXPECT_EQ(wording_first_id(std::string(line) + "\n"), id) << line;
}

TEST(LogWordings, TheHostOutOfMemoryInWindowsShellsAndSchedulers) {
  expect_each("log-host-oom",
              {
                  // Windows (PyTorch's DLLs, the shared file mapping, os error 8)
                  "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error "
                  "loading \"C:\\x\\torch\\lib\\cudnn_adv_infer64_8.dll\" or one of its dependencies.",
                  "RuntimeError: Couldn't open shared file mapping: <torch_1234_5678>, error code: <1455>",
                  "OSError: [WinError 8] Not enough memory resources are available to process this command",
                  // shells: zsh, bash, bash in Chinese and German, macOS
                  "[1]    9301 killed     python3 train.py",
                  "[1]+  Killed                  python train.py",
                  "zsh: killed     python train.py",
                  "train.sh: 行 3: 12345 已杀死               python train.py",
                  "run.sh: Zeile 3: 12345 Getötet   python train.py",
                  "Killed: 9",
                  // Python's subprocess, torch.multiprocessing, gunicorn, joblib
                  "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.",
                  "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
                  "[2024-05-01 10:00:00 +0000] [1] [ERROR] Worker (pid:42) was sent SIGKILL! Perhaps out of memory?",
                  "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the "
                  "executor was unexpectedly terminated. The exit codes of the workers are {SIGKILL(-9)}",
                  // Ray, Slurm, Kubernetes, Docker, Colab
                  "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
                  "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1.batch. Some of your processes may "
                  "have been killed by the cgroup out-of-memory handler.",
                  "slurmstepd: error: Job 123 exceeded memory limit (123 > 100), being killed",
                  "srun: error: node1: task 0: Out Of Memory",
                  "    Reason: OOMKilled",
                  "subprocess.CalledProcessError: Command 'x' returned non-zero exit status 137.",
                  "Your session crashed after using all available RAM.",
                  // allocators: old PyTorch, libc, Rust, Arrow, LLVM
                  "RuntimeError: $ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM!",
                  "fork: Cannot allocate memory",
                  "Error: Cannot allocate memory (os error 12)",
                  "pyarrow.lib.ArrowMemoryError: malloc of size 123 failed",
                  "LLVM ERROR: out of memory",
                  "MemoryError",
              });
}

// The host's memory by signal, whoever reports it (issue 54's host OOM family; lines from train logs of the
// corpus or the tools' own messages): a SIGKILL exit status (-9, or 128 + 9) after any word that names a code,
// signal 9 by number or name, "Killed" glued to a progress bar, a process pool's worker gone, the allocators of
// other languages' runtimes, and the memory limits of schedulers and platforms.
TEST(LogWordings, TheHostOutOfMemoryBySignalAndStatusInEachLaunchersWords) {
  expect_each("log-host-oom",
              {
                  // exit statuses: DIGITS (Caffe), torchrun, DeepSpeed, Python's subprocess, Docker, OpenPAI
                  "ERROR: error code -9",
                  "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0",
                  "[launch.py:321:sigkill_handler] ['python', 'train.py'] exits with return code = -9",
                  "RuntimeError: training subprocess failed, returncode=-9",
                  "Exit Code: 137",
                  "\" code: 137",
                  // signal 9: PyCharm (full-width too), Open MPI, fish
                  "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
                  "Process finished with exit code 137 （interrupted by signal 9： SIGKILL）",
                  "mpirun noticed that process rank 0 with PID 1234 on node n1 exited on signal 9 (Killed).",
                  "fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)",
                  // Killed glued to a progress bar: Keras, tqdm, Lightning
                  "165376/296960 [===============>..............] - ETA: 365s - loss: 2.1371Killed",
                  " 31%|█████      | 331/1063 [01:06<03:59,  3.06it/s]Killed",
                  "Epoch 0:  12%|█▏        | 120/1000 [00:30<03:40, v_num=0, train_loss=0.512]Killed",
                  // process pools: concurrent.futures, joblib without its class
                  "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated "
                  "abruptly while the future was running or pending.",
                  "A worker process managed by the executor was unexpectedly terminated. This could be caused by a "
                  "segmentation fault while calling the function or by an excessive memory usage causing the "
                  "Operating System to kill the worker. The exit codes of the workers are {SIGKILL(-9)}",
                  // runtimes: Rust (tokenizers), Go, the JVM; Windows' error 14
                  "memory allocation of 150994960 bytes failedAborted",
                  // an allocation refused with RAM named: distributed-llama, and the same words elsewhere
                  "\xF0\x9F\x9A\xA7 Cannot allocate 262144000 bytes directly in RAM",
                  "error: cannot allocate 2.00 GiB in RAM for the KV cache",
                  "Cannot allocate 4096 bytes in RAM (requested by layer 3)",
                  "fatal error: runtime: out of memory",
                  "java.lang.OutOfMemoryError: Java heap space",
                  "OSError: [WinError 14] Not enough storage is available to complete this operation",
                  // schedulers and platforms: LSF, PBS Pro, Torque, Kubernetes, YARN, Vertex AI, Kaggle, Dask
                  "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
                  "Job 104759609 has exceeded memory allocation on node1",
                  "=>> PBS: job killed: mem 4194304kb exceeded limit 4194304kb",
                  "The node was low on resource: memory.",
                  "Container killed by YARN for exceeding memory limits. 10.4 GB of 10.4 GB physical memory used.",
                  "The replica workerpool0-0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL).",
                  "Your notebook tried to allocate more memory than is available. It has restarted.",
                  "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
              });
  // Numbers that only look like the statuses, and a launcher sending signals of its own, are not the family.
  for (const char* line : {"Epoch 137 | loss 0.42", "lr: 1e-9, exit code 1370", "unicode -9 offset",
                           "Sending process 1234 closing signal SIGTERM", "Killed off 3 stale checkpoints",
                           "cannot allocate a port in random mode", "RAM in use: 3.2 GB, cannot allocate yet"}) {
    EXPECT_NE(wording_first_id(std::string(line) + "\n"), "log-host-oom") << line;
  }
}

// The host's memory in the words of the daemons that watch it and of further allocators (each the tool's own
// message): the kernel, systemd and systemd-oomd, earlyoom, macOS, GCC's driver, Slurm's job state, MKL, MLX,
// MSVC, R, Ollama, SageMaker, Windows' NTSTATUS and localised commit limit, oneDNN's CPU allocator, Python.
TEST(LogWordings, TheHostOutOfMemoryInTheWordsOfMemoryWatchersAndFurtherAllocators) {
  expect_each("log-host-oom",
              {
                  // the kernel's and systemd's OOM killers, systemd-oomd, earlyoom, macOS' memorystatus
                  "user@1021.service: A process of this unit has been killed by the OOM killer.",
                  "[2059992.056260] oom_reaper: reaped process 25315 (python3), now anon-rss:0kB, file-rss:74732kB",
                  "Dec 18 19:34:56 host systemd-oomd[840]: Killed /user.slice/user-1001.slice/user@1001.service/"
                  "app.slice/vte-spawn-1.scope due to memory pressure for /user.slice being 51.07% > 50.00% for > "
                  "20s with reclaim activity",
                  "vte-spawn-1.scope: systemd-oomd killed 12 process(es) in this unit.",
                  "low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%",
                  "low swap: killing largest compressed process with pid 34341 (python3.7) and size 325 MB",
                  "Refer to the documentation on how to address the out of memory issue: "
                  "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html.",
                  // a compiler building an extension (flash-attn, apex) killed; Slurm's job state
                  "c++: fatal error: Killed signal terminated program cc1plus",
                  "State: OUT_OF_MEMORY (exit code 0)",
                  "65138579.batch      batch              OUT_OF_MEMORY      0:125",
                  // allocators: MKL, MLX, MSVC's bad_alloc, R, Ollama, SageMaker, Windows, oneDNN, CPython
                  "RuntimeError: mkl_malloc: failed to allocate memory",
                  "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] "
                  "Unable to allocate 9663676416 bytes.",
                  "RuntimeError: bad allocation",
                  "Error: cannot allocate vector of size 1.5 Gb",
                  "Error: model requires more system memory (12.3 GiB) than is available (8.0 GiB)",
                  "ClientError: Please use an instance type with more memory, or reduce the size of job data "
                  "processed on an instance.",
                  "Process finished with exit code -1073741801 (0xC0000017)",
                  "Server execution error: 页面文件太小，无法完成操作。 (os error 1455)",
                  "Allocator (mklcpu) ran out of memory trying to allocate 1.20GiB (rounded to 1288490240)requested "
                  "by op MatMul",
                  "Fatal Python error: Cannot recover from MemoryError while normalizing exception.",
                  // signal 9 and SIGKILL statuses in more words: Rust, systemd, Markdown around a status, a report's
                  // "Exit Status", Kubernetes' reason, Slurm's newer wording, bash in Korean
                  "error: process didn't exit successfully: `target/release/train` (signal: 9, SIGKILL: kill)",
                  "train.service: Main process exited, code=killed, status=9/KILL",
                  "> **Exit Code**: 137 (= 128 + 9, i.e., SIGKILL)",
                  "Exit Status: 137",
                  "> **Restart Reason**: OOMKill (memory exceeded limit, SIGKILL)",
                  "slurmstepd: error: Some of the step tasks have been OOM Killed.",
                  "죽었음",
                  // compilers out of memory (GCC, MSVC), platforms' limits (Spaces, HTCondor, Grid Engine)
                  "g++: internal compiler error: Killed (program cc1plus)",
                  "csrc\\flash_attn\\flash_api.cpp: fatal error C1060: compiler is out of heap space",
                  "Runtime error: Memory limit exceeded (16Gi)",
                  "Job has gone over memory limit of 2048 megabytes.",
                  "job 1234.1 exceeds job hard limit \"h_vmem\" of queue \"all.q\" (4.1G > limit:4.0G) - sending SIGKILL",
                  // Go's syscall error, llama.cpp's CPU buffer, Node's heap, LightGBM on Windows, a kill with the memory
                  "fork/exec /usr/bin/python3: cannot allocate memory",
                  "ggml_aligned_malloc: insufficient memory (attempted to allocate 24576.00 MB)",
                  "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
                  "[LightGBM] [Fatal] bad allocation",
                  "cv2.error: OpenCV(4.6.0) /io/opencv/modules/core/src/alloc.cpp:73: error: (-4:Insufficient memory) "
                  "Failed to allocate 4672512 bytes in function 'OutOfMemoryError'",
                  "Worker 3 killed: out of memory (RSS 61.2 GiB)",
              });
  // Docker's flag when it is false, a status that only ends in OUT_OF_MEMORY, and advice about the OOM killer are
  // not the family.
  for (const char* line : {"        \"OOMKilled\": false,", "OOMKilled:false,", "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                           "libgomp.so.1: cannot allocate memory in static TLS block", "signal 90 received",
                           "Lower MAX_JOBS so that the OOM killer does not stop the build"}) {
    EXPECT_NE(wording_first_id(std::string(line) + "\n"), "log-host-oom") << line;
  }
  // Ray's list of guesses for any worker that died is a likely host OOM (the OOM killer comes first), not a
  // certain one, and nothing at all beside a log's own error.
  const Finding ray = check_log(scan_log("(1) The process is killed by SIGKILL by OOM killer due to high memory "
                                         "usage. (2) ray stop --force is called.\n"),
                                RunContext{})
                          .front();
  EXPECT_EQ(ray.id, "log-host-oom");
  EXPECT_NE(ray.title.find("likely"), std::string::npos) << ray.title;
  EXPECT_EQ(wording_first_id("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                             "(1) The process is killed by SIGKILL by OOM killer due to high memory usage.\n"),
            "log-illegal-memory-access");
}

// Session 24's additions to the family, each in at least three tools' or users' wordings (train logs of the real
// corpus or the tools' own messages). Definite: Ray's memory monitor's report, pinned host buffers (XLA,
// TensorFlow), macOS' jetsam, AWS Batch, datasets' dead map worker, ENOMEM (Windows' CRT, Windows, Node), bash's
// SIGKILL in French, Spanish and Italian.
TEST(LogWordings, TheHostOutOfMemoryInRaysXlasBatchsAndWindowsWords) {
  expect_each("log-host-oom",
              {
                  "Memory on the node (IP: 10.1.180.84, ID: ba65c80c) where the task (task ID: d221d262, name=head, "
                  "rank=0,, pid=4503, memory used=460.7GB) was running was 476.2GB / 503.7GB (0.9454)",
                  "(29.61GB / 31.00GB (0.955)), which exceeds the memory usage threshold of 0.95. Ray killed this "
                  "worker (ID: 6a4d) because it was the most recently scheduled task;",
                  "W external/xla/xla/stream_executor/integrations/stream_executor_allocator.cc:66] could not "
                  "allocate pinned host of size: 4294967296",
                  "W external/local_xla/xla/stream_executor/integrations/device_host_allocator.h:51] could not "
                  "allocate pinned host memory of size: 2147483648",
                  "Process 1234 (python3.11) killed by jetsam reason per-process-limit",
                  "OutOfMemoryError: Container killed due to memory usage",
                  "One of the subprocesses has abruptly died during map operation.To debug the error, disable "
                  "multiprocessing.",
                  "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status -9.",
                  "OSError: [Errno 12] Not enough space",
                  "OSError: [WinError 8] Not enough memory resources are available to process this command",
                  "Error: spawn ENOMEM",
                  "./train.sh : ligne 5 : 12989 Processus arrêté      python train.py",
                  "./train.sh: línea 5: 12989 Terminado (killed)      python train.py",
                  "./train.sh: riga 5: 12989 Ucciso                  python train.py",
              });
  for (const char* line : {"Allocation of 1445222400 exceeds 10% of system memory.", "ENOMEMORY_LIMIT=3",
                           "Not enough space on the progress bar"}) {
    EXPECT_NE(wording_first_id(std::string(line) + "\n"), "log-host-oom") << line;
  }
}

// Likely (only when nothing else explains the log): a notebook kernel dead in Jupyter's, VS Code's and users'
// words, Ollama's runner gone with no status, Dask's workers dead, the OOM killer, a SIGKILL, signal 9 or status
// 137 told in words, "killed" after what was killed or an adverb, the host's memory said to be short or to have
// frozen the run (English, Chinese, Japanese, Korean), out of memory while loading data or saving a checkpoint.
TEST(LogWordings, TheHostOutOfMemoryToldInWordsIsLikely) {
  expect_each("log-host-oom",
              {"after some time I get the message \"Kernel died\"",
               "Dead kernel",
               "The kernel has died, and the automatic restart has failed.",
               "Canceled future for execute_request message before replies were done",
               "Error : llama runner process has terminated",
               "distributed.scheduler.KilledWorker: Attempted to run task ('read-parquet', 0) on 3 different "
               "workers, but all those workers died while running it.",
               "随机出现 OOM killer 失败退出",
               "the OOM killer kills the trainer after a few epochs",
               "It crashed with SIGKILL",
               "got signal 9",
               "the container exits with 137",
               "it just says killed after the model loads",
               "The process is suddenly killed during training",
               "training killed at epoch 3",
               "the cpu ram is consumed until it depletes thus silently killing the process",
               "the computer freezes and the RAM is at 100%",
               "RAM usage keeps increasing until the training crashes",
               "the system ran out of memory",
               "host memory exhausted while packing the dataset",
               "程序运行到一半就被系统kill掉了",
               "训练过程中内存爆了",
               "学習中にメモリ不足で止まる",
               "학습 중 메모리 부족으로 종료됨",
               "LoadData keeps failing due to out of memory error",
               "I encounter an out-of-memory (OOM) error when saving a checkpoint."});
  // Not the host's: a GPU named, DeepSpeed's handler's name, a launcher closing its workers, an Ollama status.
  for (const char* line : {"the GPU RAM is exhausted", "[launch.py:321:sigkill_handler] exits with return code = 1",
                           "Sending process 12 closing signal SIGKILL", "the process was not killed",
                           "Error: llama runner process has terminated: exit status 0xc0000409",
                           "CUDA out of memory while loading the dataset"}) {
    EXPECT_NE(wording_first_id(std::string(line) + "\n"), "log-host-oom") << line;
  }
}

// A notebook's kernel or a hosted session that died with no error of its own, or a kill told in prose, is named a
// host OOM, as likely, only when nothing else in the log explains it (Jupyter, its server, VS Code, Colab, users).
TEST(LogWordings, ANotebookKernelThatDiedIsALikelyHostOomOnlyWhenNothingElseExplainsIt) {
  expect_each("log-host-oom", {"The kernel appears to have died. It will restart automatically.",
                               "[I 10:00:00.000 NotebookApp] KernelRestarter: restarting kernel (1/5), keep random ports",
                               "The Kernel crashed while executing code in the current cell or a previous cell.",
                               "Your session crashed for an unknown reason.",
                               // a kill or a shortage of RAM told in prose, in English and Chinese
                               "Generate.py fails on `Loading checkpoint shards: 52%` with message `killed`.",
                               "The training process gets killed after the first epoch",
                               "运行到一半进程被kill了", "应该是内存不足导致的", "I think the machine ran out of RAM",
                               "training to 4w steps, it will crash, because of out of (cpu)memory",
                               "At ~4,200 steps, all swap region was used (and killed)",
                               "the usage of memory continues to rise until the usage of swap reaches 100%",
                               "Data results in MemoryError", "CPU OOM when training Qwen2.5-VL-7B with GRPO",
                               "the RAM usage shoots upto almost 1.3T, causing RAM OOMs"});
  // An OOM said to be the GPU's is not the host's.
  EXPECT_NE(wording_first_id("the program got a GPU OOM even though the RAM was free\n"), "log-host-oom");
  // A DataLoader worker's signal is its own family's; "killed" that is no kill is nothing.
  EXPECT_EQ(wording_first_id("RuntimeError: DataLoader worker (pid 7) is killed by signal: Segmentation fault.\n"),
            "log-dataloader-killed");
  EXPECT_EQ(wording_first_id("Skilledworker pool started\n"), "log-clean");
  const auto findings = check_log(scan_log("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                                           "The kernel appears to have died. It will restart automatically.\n"),
                                  RunContext{});
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().id, "log-illegal-memory-access");
  for (const auto& f : findings) EXPECT_NE(f.id, "log-host-oom");
}

TEST(LogWordings, AnExceptionNamedByANotebooksTracebackHeader) {
  expect_each("log-cuda-oom", {"OutOfMemoryError                          Traceback (most recent call last)"});
  expect_each("log-host-oom", {"MemoryError                               Traceback (most recent call last)",
                               "_ArrayMemoryError                         Traceback (most recent call last)"});
  EXPECT_EQ(wording_first_id("KeyError                                  Traceback (most recent call last)\n"),
            "log-clean");
}

TEST(LogWordings, GpuMemoryOutsidePyTorchsAllocator) {
  expect_each("log-cuda-oom",
              {
                  "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                  "when initializing the engine.",
                  "ValueError: Free memory on device (10.5/23.6 GiB) on startup is less than desired GPU memory "
                  "utilization (0.9, 21.2 GiB).",
                  "Error out of memory at line 380 in file /src/csrc/pythonInterface.cpp",
                  "RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB",
                  "paddle.fluid.core_avx.EnforceNotMet: Out of memory error on GPU 0. Cannot allocate 1.5GB",
                  "Could not allocate tensor with 123 bytes. There is not enough GPU video memory available!",
              });
}

TEST(LogWordings, DataLoaderWorkersInPyTorchsAndPaddlesWords) {
  expect_each("log-dataloader-killed",
              {
                  "RuntimeError: unable to write to file </torch_123_456_7>: No space left on device (28)",
                  "RuntimeError: unable to mmap 123 bytes from file </torch_123_456_7>: Cannot allocate memory (12)",
                  "RuntimeError: DataLoader timed out after 120 seconds",
                  "RuntimeError: Pin memory thread exited unexpectedly",
                  "ERROR: Unexpected segmentation fault encountered in DataLoader workers.",
              });
  expect_each("log-dataloader-spawn",
              {
                  "AttributeError: Can't pickle local object 'get_transform.<locals>.<lambda>'",
                  "_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f>: attribute lookup failed",
                  "TypeError: cannot pickle '_thread.lock' object",
              });
}

TEST(LogWordings, TensorFlowsAllocatorByItsDumpAndItsCopies) {
  expect_each("log-tf-oom",
              {
                  "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
                  "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in "
                  "order to run _EagerConst: Dst tensor is not initialized.",
                  "2020-02-15 17:58:43.775573: I tensorflow/core/common_runtime/bfc_allocator.cc:905] InUse at "
                  "00000007F7D4FD00 next 1940 of size 1605632",
                  "I tensorflow/core/common_runtime/bfc_allocator.cc:1040] Sum Total of in-use chunks: 3.2GiB",
                  "E tensorflow/core/common_runtime/bfc_allocator.cc:1012] BFCAllocator dump for GPU_0_bfc",
              });
  // Its retry warning says itself that it is not a failure.
  EXPECT_EQ(
      wording_first_id("W tensorflow/core/common_runtime/bfc_allocator.cc:245] Allocator (GPU_0_bfc) ran out of "
                       "memory trying to allocate 2.2GiB with freed_by_count=0. The caller indicates that this is "
                       "not a failure, but may mean that there could be performance gains if more memory were "
                       "available.\n"),
      "log-clean");
}

TEST(LogWordings, CudnnThatCannotLoadInJaxsTensorFlowsAndTheLoadersWords) {
  expect_each("log-cudnn-version-mismatch",
              {
                  "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:407] There was an error before creating "
                  "cudnn handle: Unable to load cuDNN",
                  "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. "
                  "DNN library is not found.",
                  "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
                  "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file\n"
                  "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. "
                  "Skipping registering GPU devices...",
                  "python3: relocation error: /x/libcudnn_cnn_infer.so.8: symbol _Z2, version "
                  "libcudnn_ops_infer.so.8 not defined in file libcudnn_ops_infer.so.8 with link time reference",
              });
}

TEST(LogWordings, NonFiniteValuesInProse) {
  expect_each("log-non-finite", {
                                    "WARNING: non-finite loss, ending training",
                                    "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: "
                                    "NaN loss during training.",
                                    "ERROR: NaN detected in gradients",
                                    "hello, I'm trying to train a lokr, but the loss goes nan.",
                                    "train_loss_step:     398  → nan",
                                    "qwen2.5-14b微调 loss为nan",
                                });
}

TEST(LogWordings, AKernelsAssertPastedAlone) {
  expect_each("log-device-assert", {"Assertion `t >= 0 && t < n_classes` failed."});
  // glibc's host assert closes its condition with a quote: not the GPU.
  EXPECT_NE(wording_first_id("python: malloc.c:2379: sysmalloc: Assertion `(old_top == initial_top (av))' failed.\n"),
            "log-device-assert");
}

TEST(LogWordings, AbortsAndMissingKernelsInOtherWords) {
  expect_each("log-nccl-error", {"RuntimeError: NCCL communicator was aborted on rank 1."});
  expect_each("log-no-kernel-image", {"RuntimeError: CUDA error: invalid device function"});
}

}  // namespace
}  // namespace gpusage::diagnose
