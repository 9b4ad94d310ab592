// Issue 54's part of the log scanner: failure families recognised by what stays the same across frameworks
// rather than by one framework's sentence.
//
// - The exception class a traceback ends with ("ValueError: …", "numpy…_ArrayMemoryError: …"): a Python
//   MemoryError is the host refusing an allocation, whichever library asked; an exception whose message names
//   a NaN or Inf is a training run stopping on non-finite values, whether the check was Megatron's, the
//   user's, JAX's or scikit-learn's.
// - Error numbers of the C library: errno 12 (ENOMEM, "Cannot allocate memory") is the host out of memory,
//   errno 24 (EMFILE, "Too many open files") is DataLoader workers out of file descriptors.
// - Python's multiprocessing spawn start method (Windows' only one): a child re-running the training script
// shows
//   spawn_main / _fixup_main_from_path frames, "bootstrapping phase", the worker pickled for the child
//   (popen_spawn_win32) or unpickled by it (pickle.load(from_parent)), or a BrokenPipeError while DataLoader
//   starts its workers; a paste that ends on the worker-start frame of a Windows traceback is the same
//   failure cut short.
// - A kernel library's minimum compute capability above the GPU's: FlashAttention (Ampere or newer), Triton
//   (torch.compile), xFormers' operators and bf16 kernels each say so in their own words, with the
//   capabilities.
// - cuDNN's engine selection ("GET was unable to find an engine"), cuDNN sub-libraries of two versions
// (undefined
//   symbol), TensorFlow's EigenAllocator running out, and PyTorch's OOM named by its exception class or by
//   the cudaMallocAsync backend's message, or pasted without its first words.
#include "core/diagnose/log_scan_signals.hpp"

#include <cctype>
#include <regex>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::add_once;
using scan_text::at;
using scan_text::contains;

namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "nan", "inf" or "infinity" as a word of lower-case text ("NaN!", "(nan)", "nan,"), not inside one
// ("finance").
bool names_non_finite(std::string_view lower) {
  for (std::string_view word : {"nan", "inf"}) {
    for (std::size_t pos = lower.find(word); pos != std::string_view::npos; pos = lower.find(word, pos + 1)) {
      const std::size_t end = pos + word.size();
      const bool alone_before = pos == 0 || !is_word(lower[pos - 1]);
      const bool alone_after = end == lower.size() || !is_word(lower[end]) || lower.substr(end, 5) == "inity";
      if (alone_before && alone_after) return true;
    }
  }
  return contains(lower, "non-finite");
}

// A drive-letter or home path as Windows prints it ("C:\Users\…", "~\Anaconda3\…").
bool has_windows_path(std::string_view line) {
  for (std::size_t pos = line.find(":\\"); pos != std::string_view::npos; pos = line.find(":\\", pos + 1)) {
    if (pos > 0 && std::isalpha(static_cast<unsigned char>(line[pos - 1])) != 0) return true;
  }
  return contains(line, "~\\");
}

// The library whose minimum compute capability the GPU is below, and what the line says of both.
struct TooOld {
  std::string library;
  std::string detail;
};

std::optional<TooOld> gpu_too_old(std::string_view line, scan_text::RegexLine& str) {
  std::match_results<std::string::const_iterator> m;
  if (contains(line, "FlashAttention only supports Ampere GPUs or newer")) {
    return TooOld{"FlashAttention", "it needs Ampere (compute capability 8.0) or newer"};
  }
  if (contains(line, "FlashAttention backward for head dim") && contains(line, "requires A100 or H100")) {
    // FlashAttention 1.x: the backward pass of large heads needs the shared memory of an A100/H100
    // (sm_80/sm_90).
    return TooOld{"FlashAttention", "its backward pass for this head size needs an A100 or H100 (their shared memory)"};
  }
  if (contains(line, "too old to be supported by the triton GPU compiler") ||
      contains(line, "Triton only supports devices of CUDA Capability")) {
    // PyTorch Inductor: "Found Tesla P40 which is too old … Triton only supports devices of CUDA Capability
    // >= 7.0, but your device is of CUDA capability 6.1".
    static const std::regex caps(R"(Capability >= (\d+\.\d+), but your device is of CUDA capability (\d+\.\d+))");
    static const std::regex gpu(R"(Found (.+?) which is too old)");
    std::string detail = "it needs a newer GPU";
    if (std::regex_search(str(), m, caps)) detail = "it needs compute capability " + m[1].str() + " or newer";
    std::string has;
    if (std::regex_search(str(), m, caps)) has = m[2].str();
    if (std::regex_search(str(), m, gpu)) detail += "; " + m[1].str() + (has.empty() ? "" : " has " + has);
    return TooOld{"Triton (torch.compile)", detail};
  }
  if (contains(line, "but your GPU has capability") && contains(line, "(too old)")) {
    // xFormers' dispatcher: "requires device with capability > (8, 0) but your GPU has capability (7, 5) (too
    // old)".
    static const std::regex caps(R"(capability > \((\d+), (\d+)\) but your GPU has capability \((\d+), (\d+)\))");
    if (std::regex_search(str(), m, caps)) {
      return TooOld{"xFormers", "its operators need compute capability above " + m[1].str() + "." + m[2].str() +
                                    "; this GPU has " + m[3].str() + "." + m[4].str()};
    }
    return TooOld{"xFormers", "its operators need a newer GPU"};
  }
  if (contains(line, "bf16 is only supported on A100+ GPUs")) {
    return TooOld{"xFormers (bf16)", "its bf16 kernels need an A100 (compute capability 8.0) or newer"};
  }
  if (contains(line, "only supported on GPUs with compute capability of at least")) {
    // vLLM: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU
    // has compute capability 7.5."
    static const std::regex caps(R"(at least (\d+\.\d+)\.\s*Your (.+?) GPU has compute capability (\d+\.\d+))");
    if (std::regex_search(str(), m, caps)) {
      return TooOld{"bf16 kernels",
                    "they need compute capability " + m[1].str() + "; " + m[2].str() + " has " + m[3].str()};
    }
    return TooOld{"bf16 kernels", "they need a newer GPU"};
  }
  if (contains(line, "GPUs with compute capability below") && contains(line, "are not supported")) {
    // vLLM's own minimum: "RuntimeError: GPUs with compute capability below 7.0 are not supported."
    static const std::regex below(R"(compute capability below (\d+\.\d+))");
    const std::string needed = std::regex_search(str(), m, below) ? m[1].str() : std::string("a higher one");
    return TooOld{"vLLM", "it needs compute capability " + needed + " or newer"};
  }
  if (contains(line, "does not support bfloat16")) {
    return TooOld{"bf16 kernels", "the GPU has no bf16 support (compute capability below 8.0)"};
  }
  return std::nullopt;
}

void note_non_finite(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  std::string kind;
  const std::string_view exception = scan_text::exception_at_start(line);
  if (!exception.empty() && names_non_finite(lower)) {
    // A traceback ending on an exception that names NaN/Inf: a framework's or the user's own check.
    kind = contains(lower, "grad") ? "gradients" : (contains(lower, "loss") ? "loss" : "tensor values");
  } else if (contains(lower, "invalid loss, terminating training")) {
    kind = "loss";  // Keras' TerminateOnNaN callback
  } else if (contains(lower, "in local grad norm") && names_non_finite(lower)) {
    kind = "gradients";  // Megatron-Core's check_for_nan_in_grad
  } else if (contains(lower, "invalid value (nan) encountered") || contains(lower, "invalid value (inf) encountered") ||
             (contains(lower, "debug_nans") && contains(lower, "isnan("))) {
    kind = "tensor values";  // jax_debug_nans: the message, or JAX's own check in the traceback's last frame
  }
  if (kind.empty() || scan.non_finite.last_line() == n) return;
  scan.non_finite.add(n, line);
  add_once(scan.non_finite_kinds, kind);
}

void note_host_memory(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  const std::string_view exception = scan_text::exception_at_start(line);
  std::string detail;
  if (exception == "MemoryError" || exception == "_ArrayMemoryError" ||
      (contains(lower, "unable to allocate") && contains(lower, "array with"))) {
    static const std::regex size(R"(Unable to allocate ([\d.]+\s*[KMGT]i?B))", std::regex::icase);
    scan_text::RegexLine str(line);
    std::match_results<std::string::const_iterator> m;
    detail = std::regex_search(str(), m, size) ? "an array library (numpy) could not allocate " + m[1].str()
                                               : "Python's MemoryError: the host refused an allocation";
  } else if (contains(lower, "[errno 12] cannot allocate memory")) {
    detail = "errno 12 (ENOMEM): the host refused memory";
  }
  note_host_oom(scan, n, line, detail);
}

void note_spawn(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  const bool windows = has_windows_path(line);
  scan.windows_paths = scan.windows_paths || windows;
  if (contains(lower, "dataloader")) scan.dataloader_frames = true;
  // Windows' spawn pickles the worker for the child (popen_spawn_win32), and the child unpickles it
  // (pickle.load(from_parent)): a frame of either in a traceback is a worker that did not start.
  if (contains(lower, "bootstrapping phase") || contains(line, "_fixup_main_from_path") ||
      contains(line, "popen_spawn_win32") || contains(line, "pickle.load(from_parent)") ||
      (windows && contains(line, "spawn.py") && contains(line, "spawn_main"))) {
    scan.dataloader_spawn.add(n, line);
  }
  if (contains(line, "BrokenPipeError") || contains(line, "ForkingPickle")) scan.broken_pipe.add(n, line);
  // A worker-start frame that no exception line follows: the paste ends where the spawned worker failed.
  if (contains(line, "w.start()") || contains(line, "DataLoaderIter(self)")) {
    scan.worker_start.add(n, line);
    scan.worker_start_trailing = true;
  } else if (!scan_text::exception_at_start(line).empty()) {
    scan.worker_start_trailing = false;
  }
}

void note_too_old(LogScan& scan, std::size_t n, std::string_view line) {
  scan_text::RegexLine str(line);
  if (auto old = gpu_too_old(line, str)) {
    scan.gpu_too_old.add(n, line);
    if (!scan.gpu_too_old_library) {
      scan.gpu_too_old_library = old->library;
      scan.gpu_too_old_detail = old->detail;
    }
  }
}

}  // namespace

void scan_narrow_signals(LogScan& scan, std::size_t n, std::string_view line, bool too_old_words, bool path_words) {
  if (too_old_words) note_too_old(scan, n, line);
  if (path_words) scan.windows_paths = scan.windows_paths || has_windows_path(line);
}

const std::vector<TriggerWords>& signal_triggers() {
  static const std::vector<TriggerWords> lists = {
      // scan_signals runs only on lines with one of these words: every pattern in it must hold one (a new
      // pattern adds its word here; PrefilterTest fails on a fixture line the prefilter would hide).
      {gate::signals,
       {// an exception line ("ValueError: ...", "...MemoryError: ..."): non-finite checks, host memory, and the
        // end of a worker-start traceback
        "error:", "exception:",
        // non-finite values in a framework's words (an exception naming NaN/Inf is an exception line above;
        // "nan"/"inf" alone would wake this step on every INFO line)
        "invalid loss, terminating training", "in local grad norm", "invalid value (", "debug_nans",
        // host memory outside PyTorch
        "memoryerror", "unable to allocate", "[errno 12]",
        // the spawn start method, DataLoader frames (Windows paths alone: signal_paths below)
        "dataloader", "bootstrapping phase", "_fixup_main_from_path", "popen_spawn_win32", "pickle.load(from_parent)",
        "spawn_main", "brokenpipeerror", "forkingpickle", "w.start()",
        // cuDNN's engine selection and mixed cuDNN libraries
        "unable to find an engine", "libcudnn",
        // TensorFlow's Eigen allocator, PyTorch's OOM by class or by the cudaMallocAsync backend
        "eigenallocator", "outofmemoryerror", "allocation on device", "tried to allocate",
        // log_scan_wordings.cpp: a notebook's traceback header, the host's memory in Windows', subprocess' and
        // Slurm's words, bitsandbytes' and vLLM's GPU memory, DataLoader shared memory, timeouts and pickling,
        // TensorFlow's allocator dump, cuDNN that cannot load, NCCL aborts, kernels missing for the GPU
        "traceback (most recent call last)", "winerror 1455", "paging file", "signals.sigkill", "out-of-memory handler",
        "killed", "was sent sigkill", "running low on memory", "memory pressure (oom)", "error out of memory at line",
        "no available memory for the cache blocks", "free memory on device", "unable to write to file",
        "timed out after", "segmentation fault encountered in", "can't pickle", "dst tensor is not initialized",
        "failed copying input tensor", "inuse at ", "sum total of in-use chunks", "unable to load cudnn",
        "dnn library is not found", "could not load dynamic library", "communicator was aborted",
        "invalid device function", "all available ram", "non-finite loss", "nan loss", "inf loss", "nan detected",
        "nans detected", "inf detected", "detected nan", "→ nan", "-> nan", "→ inf", "loss goes", "loss going",
        "loss went", "loss become", "loss became", "loss turn", "loss is going", "loss is becoming", "loss was going",
        "loss gets", "loss got", "loss keep", "loss为", "loss变", "loss一直", "unable to mmap", "pin memory thread",
        "terminated with signal sigkill", "cannot pickle '", "hip out of memory", "out of memory error on gpu",
        "not enough gpu video memory", "bfcallocator dump for", "torch: not enough memory", "cannot allocate ",
        "[winerror 8]", "error code: <1455>", "kill process", "exit status 137", "exited (137)",
        "skipping registering gpu devices", "cannot dlopen some gpu libraries", "已杀死", "已殺死", "強制終了",
        "getötet", "бито",
        // the host's memory in the words of Rust's and Go's runtimes and the JVM (log_scan_wordings.cpp), and
        // Kubernetes' eviction
        "memory allocation of", "runtime: out of memory", "java.lang.outofmemoryerror", "low on resource: memory",
        // a process pool's worker killed; joblib's message alone; LSF's, PBS Pro's and Torque's memory limits
        "brokenprocesspool", "sigkill(-9)", "excessive memory usage", "term_memlimit", "exceeded memory allocation",
        "job killed: mem",
        // signal 9 by number or name; YARN, Vertex AI, Kaggle and Dask; Windows' error 14
        "signal 9", "by signal sigkill", "killed by yarn", "ran out-of-memory", "more memory than is available",
        "memory budget", "[winerror 14]",
        // the kernel's OOM killer and reaper, systemd-oomd, earlyoom, macOS' memorystatus, a compiler killed while
        // building, Slurm's OUT_OF_MEMORY state, MKL's, MLX's, MSVC's, R's, Ollama's, SageMaker's, Windows' and
        // oneDNN's allocators, Python giving up on a MemoryError (memoryerror above); a notebook's kernel died
        "oom killer", "oom-killer", "oom_reaper", "systemd-oomd", "low memory! at or below", "low swap: killing",
        "killed signal terminated program", "out_of_memory", "mkl_malloc", "bad allocation",
        "cannot allocate vector of size", "requires more system memory", "instance type with more memory", "0xc0000017",
        "-1073741801", "3221225495", "os error 1455", "页面文件太小", "allocator (mklcpu)", "appears to have died",
        "kernelrestarter: restarting kernel", "kernel crashed while executing code", "your session crashed",
        // signal 9 in Rust's and systemd's words; a kill named with the memory; compilers out of memory (GCC,
        // MSVC); hosted and batch platforms' memory limits (Hugging Face Spaces, HTCondor, Grid Engine); llama.cpp's
        // and Node's allocators ("cannot allocate" above)
        "signal: 9", "status=9/kill", "oom killed", "oomkill", "sigkill", "internal compiler error: killed",
        "compiler is out of heap space", "internal heap limit reached", "lnk1102", "memory limit exceeded",
        "gone over memory limit", "exceeds job hard limit", "insufficient memory (attempted to allocate",
        "javascript heap out of memory", "(-4:insufficient memory)", "ray-oom-prevention",
        // Ray's memory monitor's report, XLA's and TensorFlow's pinned host buffers, a notebook's kernel dead,
        // Ollama's runner gone, RAM depleted (log_scan_host_memory.cpp)
        "memory on the node (ip:", "exceeds the memory usage threshold", "could not allocate pinned host",
        "kernel died", "kernel has died", "llama runner process has terminated", "deplet",
        // macOS' jetsam, Hugging Face datasets' dead worker, a SIGKILL as subprocess reports it without its name,
        // ENOMEM in Windows' and Node's words, a notebook's dead kernel in Jupyter's and VS Code's, RAM short in
        // Chinese (Dask's KilledWorker and AWS Batch's kill: "killed" above)
        "jetsam", "abruptly died", "exit status -9", "not enough space", "not enough memory resources", "enomem",
        "dead kernel", "canceled future for execute_request", "kill掉", "内存爆", "内存不够", "内存耗尽", "内存满",
        // RAM that froze or crashed the run, an exit status of 137 told in words
        "froze", "freez", "crash", "exit 137", "exits with 137", "exited with 137",
        // the host's memory said to be short (with "ram", "host memory", "system memory" or "cpu memory"), memory
        // short in Japanese and Korean, Jupyter's restart dialog, bash's SIGKILL in French, Spanish and Italian
        "exhaust", "exceed", "ran out", "runs out", "run out", "running out", "not enough", "insufficient", "maxed",
        "max out", "メモリ不足", "메모리 부족", "kernel restarting", "processus arrêté", "terminado (killed)", "ucciso",
        // a kill or a shortage of RAM told in prose (a likely host OOM when nothing else explains the log)
        "被kill", "被杀", "内存不足", "内存溢出", "out of ram", "ram is full", "not enough ram", "insufficient ram",
        "out of cpu memory", "out of (cpu)", "out of system memory", "swap", "ram oom", "cpu oom", "out of memory",
        "out-of-memory"}},
      // Words only one step of scan_signals needs, so common in healthy logs ("CUDA capability 8.6", a
      // Windows path in every frame) that they wake that step alone (scan_narrow_signals): a GPU too old for a
      // kernel library, and the Windows paths note_spawn records.
      {gate::signal_too_old, {"flashattention", "too old", "capability", "a100", "bfloat16"}},
      {gate::signal_paths, {":\\", "~\\"}},
  };
  return lists;
}

void note_host_oom(LogScan& scan, std::size_t n, std::string_view line, const std::string& detail) {
  if (detail.empty() || scan.host_oom.last_line() == n) return;
  scan.host_oom.add(n, line);
  if (!scan.host_oom_detail) scan.host_oom_detail = detail;
}

namespace scan_text {

std::string_view exception_at_start(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '`' || line[i] == '*' || line[i] == '"' ||
                             line[i] == '\'' || line[i] == '>')) {
    ++i;
  }
  const std::size_t start = i;
  while (i < line.size() && (is_word(line[i]) || line[i] == '.')) ++i;
  if (i == start || i >= line.size() || line[i] != ':') return {};
  std::string_view name = line.substr(start, i - start);
  if (const std::size_t dot = name.rfind('.'); dot != std::string_view::npos) name = name.substr(dot + 1);
  if (ends_with(name, "Error") || ends_with(name, "Exception")) return name;
  return {};
}

}  // namespace scan_text

SignalOoms scan_signals(LogScan& scan, std::size_t n, std::string_view line, std::string_view lower) {
  SignalOoms out = scan_wordings(scan, n, line, lower);
  note_non_finite(scan, n, line, lower);
  note_host_memory(scan, n, line, lower);
  note_spawn(scan, n, line, lower);

  note_too_old(scan, n, line);

  // cuDNN's engine selection: no engine (execution plan) for this convolution's shape, dtype and layout.
  if (contains(lower, "unable to find an engine")) {
    scan.cudnn.add(n, line);
    add_once(scan.cudnn_statuses, "no cuDNN engine");
  }
  // One cuDNN sub-library calling another of a different version: the dynamic loader's "undefined symbol", or
  // its "relocation error: … symbol …, version libcudnn_ops_infer.so.8 not defined in file …".
  if (contains(lower, "libcudnn") && (contains(lower, "undefined symbol") || contains(lower, "relocation error") ||
                                      contains(lower, "not defined in file"))) {
    scan.cudnn_version.add(n, line);
  }

  // TensorFlow 1.x's Eigen allocator: "EigenAllocator for GPU ran out of memory when allocating 0".
  if (contains(line, "EigenAllocator for GPU ran out of memory") && !out.tf) {
    OomReport r;
    r.wording = "tensorflow";
    r.at = at(n, line);
    out.tf = std::move(r);
  }
  // PyTorch's OOM by its exception class alone (ComfyUI's error report names the class and the message
  // apart), or by the message of the cudaMallocAsync allocator backend ("Allocation on device"); and its
  // usual message pasted from "Tried to allocate" on, with its figures.
  const bool oom_class = contains(line, "torch.OutOfMemoryError") || contains(line, "torch.cuda.OutOfMemoryError") ||
                         contains(line, "Allocation on device");
  if (scan.cuda_oom_lines.empty() && !out.cuda &&
      (oom_class || (contains(line, "Tried to allocate") &&
                     (contains(line, "total capacity") || contains(line, "total capacty"))))) {
    OomReport r = parse_oom(line);
    r.at = at(n, line);
    out.cuda = std::move(r);
  }
  return out;
}

}  // namespace gpusage::diagnose
