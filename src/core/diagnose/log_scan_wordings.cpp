// More of issue 54's families (called from scan_signals, gated by its trigger words): the same failures as
// the families in log_scan_signals.cpp, in the wordings of further libraries and shells.
//
// - An exception class named by a notebook's traceback header ("OutOfMemoryError   Traceback (most recent
//   call last)") or alone on a line ("MemoryError"), when the paste stops before the message.
// - The host out of memory as Windows, zsh, bash, Python's subprocess module, gunicorn, Ray and Slurm's cgroups
//   report it: the paging file too small (WinError 1455), a job "killed", a child "died with <Signals.SIGKILL:
//   9>" or "sent SIGKILL", Ray's memory monitor, the cgroup out-of-memory handler; and macOS', Go's,
//   Kubernetes', joblib's, Colab's and LLVM's words for the same.
// - Non-finite losses and gradients in prose ("non-finite loss", "NaN loss", "NaN detected").
// - vLLM's KV-cache sizing and bitsandbytes' C code out of GPU memory.
// - DataLoader workers: shared memory full while a worker writes a batch ("unable to write to file
//   </torch_…>"), a worker that stopped answering ("DataLoader timed out"), and a dataset that cannot be
//   pickled for a spawned worker (a lambda or a local object).
// - TensorFlow's BFC allocator out of memory by its chunk dump, by "Dst tensor is not initialized" or by an
//   input that could not be copied to the GPU.
// - cuDNN the framework cannot load at all (JAX's "Unable to load cuDNN", "DNN library is not found";
//   TensorFlow's dynamic loader failing on libcudnn / cudnn64_N.dll, once it skips the GPU for it).
// - An NCCL communicator aborted; a kernel missing for the GPU reported as "invalid device function"; a
//   translated "DataLoader worker … quit unexpectedly".
#include <cctype>
#include <regex>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan_signals.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::at;
using scan_text::contains;

namespace {

// The class a notebook's traceback header names: IPython prints "<Class>" padded with spaces, then
// "Traceback (most recent call last)", before the frames; the message comes last and a paste may stop earlier.
std::string_view notebook_header_class(std::string_view line) {
  const std::size_t tb = line.find("Traceback (most recent call last)");
  if (tb == std::string_view::npos) return {};
  std::string_view head = line.substr(0, tb);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (head.size() + 2 > tb) return {};  // the class is padded with at least two spaces
  std::size_t start = head.size();
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(head[start - 1])) != 0 || head[start - 1] == '_' ||
                       head[start - 1] == '.')) {
    --start;
  }
  std::string_view name = head.substr(start);
  if (const std::size_t dot = name.rfind('.'); dot != std::string_view::npos) name = name.substr(dot + 1);
  return name;
}

// Python's MemoryError with no message, alone on the traceback's last line ("MemoryError", or qualified).
bool bare_memory_error(std::string_view line) {
  const std::string t = text::trim(line);
  return t == "MemoryError" || (t.size() > 12 && t.substr(t.size() - 12) == ".MemoryError");
}

// A shell's job report of a process killed by a signal: zsh "[1]    9301 killed     python3 train.py", bash
// "[1]+  Killed                  python train.py" (read on the lower-case line).
bool shell_job_killed(std::string_view lower) {
  std::size_t i = 0;
  if (lower.empty() || lower[0] != '[') return false;
  while (++i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) != 0) {
  }
  if (i >= lower.size() || lower[i] != ']') return false;
  ++i;
  if (i < lower.size() && (lower[i] == '+' || lower[i] == '-')) ++i;
  const std::string rest = text::trim(lower.substr(i));
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) ++digits;
  return text::trim(std::string_view(rest).substr(digits)).rfind("killed ", 0) == 0;
}

// The process killed by SIGKILL in other words: macOS' shell ("Killed: 9"), Go's os/exec ("signal: killed"),
// Kubernetes' and Docker's container state ("OOMKilled"), joblib's worker pool ("TerminatedWorkerError" with
// "SIGKILL(-9)" or "excessive memory usage"), Colab's "session crashed after using all available RAM".
bool killed_elsewhere(std::string_view line, std::string_view lower) {
  const std::string t = text::trim(line);
  // Docker's inspect prints the flag either way ("OOMKilled": false): only a true one, or Kubernetes' reason.
  if (t == "Killed: 9" || contains(lower, "signal: killed") || contains(lower, "oom killed") ||
      (contains(line, "OOMKill") && !contains(lower, "oomkilled\": false") && !contains(lower, "oomkilled:false") &&
       !contains(lower, "oomkilled\":false") && !contains(lower, "oomkilled: false"))) {
    return true;
  }
  if (contains(line, "TerminatedWorkerError") &&
      (contains(line, "SIGKILL") || contains(lower, "excessive memory usage"))) {
    return true;
  }
  // joblib's message pasted without its class: the workers' exit codes, or its own guess at the cause.
  if (contains(line, "{SIGKILL(-9)}") ||
      contains(lower, "excessive memory usage causing the operating system to kill")) {
    return true;
  }
  // Kubernetes' kubelet evicting a pod when the node runs short of memory ("The node was low on resource:
  // memory."), YARN killing a Spark container, Vertex AI's replica, Kaggle's notebook, Dask's nanny.
  if (contains(line, "low on resource: memory") || contains(line, "killed by YARN for exceeding memory limits") ||
      contains(lower, "ran out-of-memory and exited") ||
      contains(lower, "tried to allocate more memory than is available") ||
      (contains(lower, "memory budget") && contains(lower, "restarting"))) {
    return true;
  }
  return contains(lower, "after using all available ram") || contains(line, "LLVM ERROR: out of memory");
}

// Allocations the host refused, in the words of old PyTorch ("Torch: not enough memory … Buy new RAM!"), libc
// ("fork: Cannot allocate memory", Rust's "(os error 12)"), Arrow, Windows ("[WinError 8] Not enough memory
// resources", a shared file mapping failing with error 1455), and Slurm's memory limit ("task 0: Out Of Memory",
// "Exceeded job memory limit"); and by the runtimes of other languages that ML libraries are written in:
// Rust's allocation-failure handler (tokenizers, polars, safetensors: "memory allocation of 1234 bytes
// failed"), Go's runtime ("fatal error: runtime: out of memory") and the JVM's heap (java.lang.OutOfMemoryError,
// under Spark or DL4J).
bool host_refused(std::string_view line, std::string_view lower) {
  if (contains(line, "Torch: not enough memory")) return true;
  // An inference engine that names RAM as what it could not allocate (distributed-llama: "Cannot allocate
  // 262144000 bytes directly in RAM").
  if (contains(lower, "cannot allocate ") && contains(lower, " in ram")) return true;
  if (contains(line, "memory allocation of") && contains(line, "bytes failed")) return true;
  if (contains(line, "runtime: out of memory") || contains(line, "java.lang.OutOfMemoryError")) return true;
  // (A DataLoader batch's shared-memory file "</torch_…>" that cannot be mapped is the DataLoader's family.)
  if (contains(line, "Cannot allocate memory") && !contains(line, "</torch_")) return true;
  // Windows' ERROR_NOT_ENOUGH_MEMORY (8) and ERROR_OUTOFMEMORY (14, "Not enough storage is available to
  // complete this operation").
  if (contains(line, "ArrowMemoryError") || contains(line, "[WinError 8]") || contains(line, "[WinError 14]") ||
      contains(line, "error code: <1455>")) {
    return true;
  }
  if ((contains(lower, "srun: error:") && contains(lower, ": out of memory")) ||
      (contains(lower, "slurmstepd: error:") && contains(lower, "memory limit"))) {
    return true;
  }
  // The other batch schedulers' memory limits: LSF ("TERM_MEMLIMIT: job killed after reaching LSF memory usage
  // limit"), PBS Pro ("Job 123 has exceeded memory allocation on node1") and Torque ("PBS: job killed: mem …
  // exceeded limit …").
  return contains(line, "TERM_MEMLIMIT") || contains(line, "has exceeded memory allocation") ||
         contains(line, "job killed: mem");
}

// Signal 9 named by number, as "signal 9" or Rust's "signal: 9" (not "signal 90"), beside a word that says a
// process ended by it: "killed by signal 9", "exited on signal 9", "received signal 9", "(signal: 9, SIGKILL:
// kill)".
bool names_signal_9(std::string_view lower) {
  bool number = false;
  for (std::string_view form : {std::string_view("signal 9"), std::string_view("signal: 9")}) {
    for (std::size_t pos = find_substring(lower, form); !number && pos != std::string_view::npos;
         pos = find_substring(lower, form, pos + 1)) {
      const std::size_t end = pos + form.size();
      number = end == lower.size() || std::isdigit(static_cast<unsigned char>(lower[end])) == 0;
    }
  }
  if (!number) return false;
  for (std::string_view verb : {"kill", "interrupted", "terminated", "received", "died", "exited", "caught"}) {
    if (contains(lower, verb)) return true;
  }
  return false;
}

// The process killed, in the words of bash ("Killed."), zsh ("zsh: killed     python train.py"), old kernels
// ("Out of memory: Kill process 1234"), and an exit status of 128 + SIGKILL ("exit status 137", Docker's
// "Exited (137)").
bool killed_by_status(std::string_view line, std::string_view lower) {
  // Signal 9 by number or by name, in the words of PyCharm ("interrupted by signal 9: SIGKILL"), Open MPI
  // ("exited on signal 9 (Killed)"), fish ("terminated by signal SIGKILL"), systemd ("code=killed,
  // status=9/KILL") and others ("killed by signal 9").
  if (names_signal_9(lower) || contains(lower, "by signal sigkill") || contains(lower, "status=9/kill")) {
    return true;
  }
  const std::string t = text::trim(line);
  // bash prints the signal's name in the user's language (glibc's strsignal): zh_CN "已杀死", zh_TW "已殺死",
  // ja "強制終了", de "Getötet", ru "Убито".
  if (contains(line, "已杀死") || contains(line, "已殺死") || contains(line, "強制終了") || contains(line, "Getötet") ||
      contains(line, "Убито")) {
    return true;
  }
  if (t == "Killed." || lower.rfind("zsh: killed ", 0) == 0 || contains(line, "Out of memory: Kill process")) {
    return true;
  }
  return contains(lower, "exit status 137") || contains(line, "Exited (137)");
}

void note_host(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower,
               std::string_view header_class) {
  std::string detail;
  if (bare_memory_error(line) || header_class == "MemoryError" || header_class == "_ArrayMemoryError") {
    detail = "Python's MemoryError: the host refused an allocation";
  } else if (contains(lower, "[winerror 1455]") || contains(lower, "paging file is too small")) {
    // Windows commits virtual memory against RAM plus the paging file; each DataLoader worker loads the CUDA
    // DLLs again, and the commit limit is reached before RAM is.
    detail = "Windows' paging file is too small (WinError 1455): RAM plus paging file are committed";
  } else if (host_refused(line, lower)) {
    detail = "the host refused an allocation (RAM, or the job's memory limit)";
  } else if (shell_job_killed(lower) || killed_elsewhere(line, lower) || killed_by_status(line, lower)) {
    detail = "the process was killed (SIGKILL), as the kernel's OOM killer does";
  } else if (contains(line, "died with <Signals.SIGKILL: 9>") || contains(line, "was sent SIGKILL") ||
             contains(line, "terminated with signal SIGKILL")) {
    // subprocess' CalledProcessError, gunicorn's arbiter ("Worker (pid:…) was sent SIGKILL! Perhaps out of
    // memory?") and torch.multiprocessing.spawn's ProcessExitedException
    detail = "a child process died of SIGKILL (signal 9), as the kernel's OOM killer does";
  } else if (contains(line, "killed due to the node running low on memory") ||
             contains(line, "killed due to memory pressure (OOM)")) {
    detail = "Ray's memory monitor killed a worker: the node's RAM passed its threshold";
  } else if (contains(line, "BrokenProcessPool") && contains(lower, "terminated abruptly")) {
    // concurrent.futures: a worker of a ProcessPoolExecutor died without an exception of its own, killed from
    // outside the process, as the OOM killer does.
    detail = "a process pool's worker was terminated abruptly (killed from outside, as the OOM killer does)";
  } else if (contains(lower, "cgroup out-of-memory handler")) {
    detail = "the scheduler's cgroup out-of-memory handler killed the job (Slurm)";
  } else {
    detail = host_memory_watchers(line, lower);
  }
  if (detail.empty() && host_oom_likely(lower)) scan.host_oom_likely.add(n, line);
  note_host_oom(scan, n, line, detail);
}

void note_dataloader(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  std::string detail;
  if (contains(line, "unable to write to file </torch_")) {
    detail = "shared memory (/dev/shm) is full: a worker could not write its batch";
  } else if (contains(line, "DataLoader timed out after")) {
    detail = "a worker stopped answering (DataLoader timed out)";
  } else if (contains(lower, "dataloader worker") && contains(lower, "quit unexpectedly")) {
    detail = "exited unexpectedly";  // a translated "exited unexpectedly"
  } else if (contains(line, "unable to mmap") && contains(line, "</torch_")) {
    detail = "shared memory (/dev/shm) is full: a worker could not write its batch";
  } else if (contains(line, "Pin memory thread exited unexpectedly")) {
    detail = "exited unexpectedly";
  } else if (contains(lower, "segmentation fault encountered in") && contains(lower, "worker")) {
    detail = "Segmentation fault";  // Paddle: "… encountered in DataLoader workers."
  }
  if (!detail.empty()) {
    scan.dataloader_killed.add(n, line);
    if (!scan.dataloader_detail || *scan.dataloader_detail == "exited unexpectedly") scan.dataloader_detail = detail;
  }
  // The spawn start method pickles the dataset for each worker: a lambda or a function defined inside
  // another cannot be pickled.
  // Python 3.8+ words it "cannot pickle '_thread.lock' object" for an object holding a lock or a handle.
  if (contains(line, "Can't pickle local object") || contains(line, "Can't pickle <function <lambda>") ||
      (contains(line, "cannot pickle '") && contains(line, "' object"))) {
    scan.dataloader_spawn.add(n, line);
  }
}

// Non-finite values in prose: YOLOv5's "WARNING: non-finite loss, ending training", "Detected NaN loss",
// TensorFlow Estimator's "NaN loss during training", "NaN detected in gradients".
void note_prose_non_finite(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  // A value skipped once is the framework coping with it, not the run diverging.
  if (contains(lower, "skipping") || contains(lower, " once")) return;
  std::string kind;
  if (contains(lower, "non-finite loss") || contains(lower, "nan loss") || contains(lower, "inf loss")) {
    kind = "loss";
  } else if (contains(lower, "nan detected in grad") || contains(lower, "nans detected in grad") ||
             contains(lower, "inf detected in grad")) {
    kind = "gradients";
  } else if (contains(lower, "nan detected") || contains(lower, "nans detected") || contains(lower, "detected nan")) {
    kind = "tensor values";
  }
  // A value's path pasted with arrows ("train_loss_step:  398 → nan", "grad_norm: 438 -> nan").
  const bool arrow = contains(lower, "→ nan") || contains(lower, "-> nan") || contains(lower, "→ inf");
  if (kind.empty() && arrow) kind = contains(lower, "loss") ? "loss" : (contains(lower, "norm") ? "gradients" : "");
  // The loss described in words: "the loss goes nan", "my loss is going NAN", "loss为nan" (Chinese: "loss is nan").
  static const std::regex loss_goes(
      R"(\bloss(?:es)?\s+(?:is\s+|was\s+)?(?:goes|going|went|become|becomes|became|becoming|turns|turned|gets|got|keeps|kept)\s+(?:to\s+)?(?:be\s+)?nan\b)");
  if (kind.empty() && (contains(lower, "loss") && contains(lower, "nan"))) {
    if (!scan_text::matches_from(lower, loss_goes, {"loss"}, 1).empty() || contains(lower, "loss为nan") ||
        contains(lower, "loss变成nan") || contains(lower, "loss一直是nan")) {
      kind = "loss";
    }
  }
  if (kind.empty() || scan.non_finite.last_line() == n) return;
  scan.non_finite.add(n, line);
  scan_text::add_once(scan.non_finite_kinds, kind);
}

// TensorFlow's BFC allocator dumps its chunks only when an allocation has failed.
// Copying an input to the GPU fails the same way when there is no room for it there.
bool tf_allocator_failed(std::string_view line) {
  if (contains(line, "Dst tensor is not initialized")) return true;
  if (contains(line, "Failed copying input tensor from") && contains(line, "device:GPU")) return true;
  if (contains(line, "Sum Total of in-use chunks") || contains(line, "BFCAllocator dump for")) return true;
  // The dump's rows ("InUse at 00000007F7D4FD00 next 1940 of size 1605632"), once normalisation has taken
  // the "I tensorflow/core/common_runtime/bfc_allocator.cc:905]" prefix off.
  return (text::trim(line).rfind("InUse at ", 0) == 0 || contains(line, "bfc_allocator")) &&
         contains(line, "InUse at ") && contains(line, " of size ");
}

}  // namespace

SignalOoms scan_wordings(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  SignalOoms out;
  const std::string_view header_class = notebook_header_class(line);
  note_host(scan, n, line, lower, header_class);
  note_dataloader(scan, n, line, lower);
  note_prose_non_finite(scan, n, line, lower);

  const bool bitsandbytes = contains(line, "Error out of memory at line") &&
                            (contains(lower, "bitsandbytes") || contains(line, "pythonInterface"));
  // vLLM sizing its KV cache: no room left after the weights, or less free at start than it was told to take.
  // ROCm's PyTorch, Paddle and DirectML out of GPU memory.
  const bool other_gpu = contains(line, "HIP out of memory") || contains(line, "Out of memory error on GPU") ||
                         contains(line, "not enough GPU video memory");
  const bool kv_cache = contains(line, "No available memory for the cache blocks") ||
                        (contains(line, "Free memory on device") && contains(line, "less than desired GPU memory"));
  if (scan.cuda_oom_lines.empty() && (header_class == "OutOfMemoryError" || bitsandbytes || kv_cache || other_gpu)) {
    OomReport r;
    r.wording = "cuda";
    r.at = at(n, line);
    out.cuda = std::move(r);
  }
  // (XLA's BFC allocator under JAX dumps the same rows: JAX's own OOM family reports those.)
  if (tf_allocator_failed(line) && scan.tf_oom_lines.empty() && !scan.jax_seen) {
    OomReport r;
    r.wording = "tensorflow";
    r.at = at(n, line);
    out.tf = std::move(r);
  }

  if (contains(line, "Unable to load cuDNN") || contains(line, "DNN library is not found")) {
    scan.cudnn_version.add(n, line);
  }
  // TensorFlow warns that it could not load cuDNN and runs on the CPU: a failure once it says it skips the GPU.
  if (contains(line, "Could not load dynamic library") &&
      (contains(lower, "libcudnn") || contains(lower, "cudnn64_"))) {
    scan.cudnn_not_loaded.add(n, line);
  }
  if ((contains(line, "Skipping registering GPU devices") || contains(line, "Cannot dlopen some GPU libraries")) &&
      !scan.cudnn_not_loaded.empty()) {
    scan.cudnn_version.add(n, line);
  }
  if (contains(line, "NCCL communicator was aborted")) {
    scan.nccl_error.add(n, line);
    if (!scan.nccl_error_detail) scan.nccl_error_detail = "the communicator was aborted (another rank failed first)";
  }
  // cudaErrorInvalidDeviceFunction: the binary holds no kernel for this GPU (CUDA before "no kernel image").
  if (contains(lower, "invalid device function")) scan.no_kernel.add(n, line);
  return out;
}

}  // namespace gpusage::diagnose
