// Issue 54's host OOM family in the words of the tools that watch a machine's memory and of further allocators
// (called by note_host in log_scan_wordings.cpp, gated by signal_triggers' words). Each wording is the tool's own
// message (its source or documentation) or a train log's of the real corpus.
#include <cctype>
#include <string>
#include <string_view>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan_signals.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::contains;

namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_alnum_or_underscore(char c) { return is_alnum(c) || c == '_'; }

// `word` in `text` with no byte that `glued` accepts on either side (by default a letter or digit: "ram" in "RAM
// OOMs" and "(cpu)", not in "program").
bool has_word(std::string_view text, std::string_view word, bool (*glued)(char) = is_alnum) {
  for (std::size_t pos = text.find(word); pos != std::string_view::npos; pos = text.find(word, pos + 1)) {
    const std::size_t end = pos + word.size();
    if ((pos == 0 || !glued(text[pos - 1])) && (end == text.size() || !glued(text[end]))) return true;
  }
  return false;
}

// "OUT_OF_MEMORY" as a word of its own: Slurm's job state (sacct, seff "State: OUT_OF_MEMORY (exit code 0)",
// squeue), not the tail of a status name such as CUDA_ERROR_OUT_OF_MEMORY.
bool slurm_out_of_memory_state(std::string_view line) {
  return has_word(line, "OUT_OF_MEMORY", is_alnum_or_underscore);
}

// Ray lists the OOM killer first among the "potential root causes" of any worker that exits unexpectedly: a
// guess, not a report (Ray's own OOM report is its memory monitor's, matched elsewhere).
bool ray_guess(std::string_view lower) {
  return contains(lower, "potential root cause") || contains(lower, "(1) the process is killed");
}

// "killed by … OOM killer" within a few words: systemd ("A process of this unit has been killed by the OOM
// killer."), a user's own report of dmesg ("killed by OOM killer").
bool killed_by_oom_killer(std::string_view lower) {
  for (std::string_view name : {std::string_view("oom killer"), std::string_view("oom-killer")}) {
    const std::size_t pos = lower.find(name);
    if (pos == std::string_view::npos) continue;
    const std::size_t from = pos > 32 ? pos - 32 : 0;
    if (lower.substr(from, pos - from).find("killed by") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

// The host's memory in the words of the daemons that watch it and of further allocators (each from the tool's own
// message): the kernel's reaper ("oom_reaper: reaped process 1234 (python)"), systemd-oomd ("Killed /user.slice/…
// due to memory pressure", "systemd-oomd killed 12 process(es) in this unit"), earlyoom ("low memory! at or below
// SIGTERM limits"), macOS' memorystatus ("low swap: killing largest compressed process with pid …"), GCC's driver
// when the kernel killed a compiler building an extension ("Killed signal terminated program cc1plus"), Intel
// MKL ("mkl_malloc: failed to allocate memory"), MLX's allocator ("[malloc_or_wait] Unable to allocate …
// bytes"), MSVC's std::bad_alloc ("bad allocation"), R ("cannot allocate vector of size"), Ollama ("model requires
// more system memory"), SageMaker ("Please use an instance type with more memory"), OpenCV ("(-4:Insufficient
// memory) Failed to allocate"), Windows' STATUS_NO_MEMORY
// (0xC0000017), TensorFlow's oneDNN CPU allocator ("Allocator (mklcpu) ran out of memory") and Python giving up
// ("Fatal Python error: Cannot recover from MemoryError").
std::string host_memory_watchers(std::string_view line, std::string_view lower) {
  if (ray_guess(lower)) return {};
  if (killed_by_oom_killer(lower) || contains(lower, "oom_reaper: reaped process") ||
      (contains(lower, "systemd-oomd") && contains(lower, "killed"))) {
    return "the kernel's or systemd's OOM killer killed a process";
  }
  // Ray's memory monitor's advice, printed only with its kills ("Refer to the documentation on how to address the
  // out of memory issue: …ray-oom-prevention.html").
  // Its report of the kill itself ("Memory on the node (IP: …, ID: …) where the task (…) was running was 29.61GB /
  // 31.00GB (0.955), which exceeds the memory usage threshold of 0.95. Ray killed this worker …").
  if (contains(lower, "ray-oom-prevention") || contains(lower, "memory on the node (ip:") ||
      contains(lower, "exceeds the memory usage threshold")) {
    return "Ray's memory monitor killed a worker: the node's RAM passed its threshold";
  }
  // macOS' jetsam in the system log ("Process 1234 (python3.11) killed by jetsam reason per-process-limit").
  if (contains(lower, "low memory! at or below") || contains(lower, "low swap: killing") ||
      contains(lower, "killed by jetsam")) {
    return "a memory monitor (earlyoom, macOS' memorystatus) killed a process: RAM was nearly exhausted";
  }
  // bash's job report in French, Spanish and Italian (glibc's strsignal for SIGKILL: "Processus arrêté",
  // "Terminado (killed)", "Ucciso"), beside the languages log_scan_wordings.cpp reads.
  if (contains(line, "Processus arrêté") || contains(line, "Terminado (killed)") || has_word(line, "Ucciso")) {
    return "the process was killed (SIGKILL), as the kernel's OOM killer does";
  }
  // GCC's driver ("Killed signal terminated program cc1plus", "internal compiler error: Killed (program
  // cc1plus)") and MSVC (C1060 "compiler is out of heap space", C1076 "internal heap limit reached", LNK1102
  // "out of memory") when a build of an extension runs out.
  if (contains(line, "Killed signal terminated program") || contains(line, "internal compiler error: Killed") ||
      contains(lower, "compiler is out of heap space") || contains(lower, "internal heap limit reached") ||
      contains(line, "LNK1102")) {
    return "the compiler ran out of memory while building: too many parallel jobs for the RAM (lower MAX_JOBS)";
  }
  // A SIGKILL or a kill reported with the memory it was for ("Killed (out of memory)", "SIGKILL (likely OOM)"),
  // the GPU's own OOMs aside.
  const bool memory_named = contains(lower, "out of memory") || contains(lower, "out-of-memory") ||
                            contains(lower, " oom") || contains(lower, "(oom");
  if ((contains(lower, "sigkill") || contains(lower, "killed")) && memory_named && !contains(lower, "cuda") &&
      !contains(lower, "gpu") && !contains(lower, "device")) {
    return "the process was killed for the memory it used (SIGKILL, as the OOM killer sends)";
  }
  // The memory limits of hosted and batch platforms: Hugging Face Spaces ("Memory limit exceeded (16G)"),
  // HTCondor ("Job has gone over memory limit of 2048 megabytes"), Grid Engine ("exceeds job hard limit
  // \"h_vmem\"").
  if (contains(lower, "memory limit exceeded") || contains(lower, "gone over memory limit") ||
      (contains(lower, "exceeds job hard limit") && contains(lower, "mem"))) {
    return "the job passed the platform's memory limit and was stopped";
  }
  if (slurm_out_of_memory_state(line)) return "the job's state is OUT_OF_MEMORY (Slurm): it passed its memory limit";
  // AWS Batch's status reason ("OutOfMemoryError: Container killed due to memory usage").
  if (contains(lower, "container killed due to memory usage")) {
    return "the job passed the platform's memory limit and was stopped";
  }
  // Hugging Face datasets' map() when a worker process vanished ("One of the subprocesses has abruptly died during
  // map operation"), and a child's status as subprocess prints it when the signal has no name ("returned
  // non-zero exit status -9"): killed from outside, as the OOM killer does.
  if (contains(lower, "subprocesses has abruptly died") || contains(lower, "exit status -9")) {
    return "a worker process was killed from outside (SIGKILL), as the kernel's OOM killer does";
  }
  const bool allocator =
      contains(lower, "mkl_malloc: failed to allocate") || contains(lower, "[malloc_or_wait] unable to allocate") ||
      contains(lower, "[malloc] unable to allocate") || contains(lower, "cannot allocate vector of size") ||
      contains(lower, "requires more system memory") || contains(lower, "instance type with more memory") ||
      contains(lower, "0xc0000017") || contains(line, "-1073741801") || contains(line, "3221225495") ||
      // Windows' commit limit (error 1455) as Rust's std reports it ("(os error 1455)"), whatever the language of
      // the text before it, and in Chinese Windows' own words ("页面文件太小").
      contains(lower, "os error 1455") || contains(line, "页面文件太小") ||
      (contains(lower, "allocator (mklcpu) ran out of memory")) ||
      // XLA's and TensorFlow's page-locked host buffers ("could not allocate pinned host of size: 4294967296",
      // "could not allocate pinned host memory of size: 2147483648"): host RAM the driver could not lock
      contains(lower, "could not allocate pinned host") ||
      (contains(lower, "fatal python error") && contains(lower, "memoryerror")) ||
      // Go's syscall errors in lower case ("fork/exec …: cannot allocate memory"; not the dynamic loader's "cannot
      // allocate memory in static TLS block", nor a DataLoader batch's shared memory), llama.cpp's CPU buffers,
      // Node's heap
      (contains(lower, "cannot allocate memory") && !contains(lower, "static tls") && !contains(line, "</torch_")) ||
      contains(lower, "insufficient memory (attempted to allocate") ||
      contains(lower, "javascript heap out of memory") ||
      // ENOMEM in the words of Windows' C runtime ("[Errno 12] Not enough space"), of Windows itself (error 8,
      // "Not enough memory resources are available to process this command") and of Node/libuv ("spawn ENOMEM")
      (contains(lower, "[errno 12]") && contains(lower, "not enough space")) ||
      contains(lower, "not enough memory resources are available") || has_word(line, "ENOMEM") ||
      // OpenCV's cv::OutOfMemoryError (status -4, StsNoMem): "(-4:Insufficient memory) Failed to allocate N bytes"
      contains(lower, "(-4:insufficient memory)");
  if (allocator) return "the host refused an allocation (RAM, or the job's memory limit)";
  // MSVC's std::bad_alloc says "bad allocation" (libstdc++'s says std::bad_alloc, matched elsewhere): an
  // exception's message, terminate's what(), or a line that ends on it (LightGBM's "[Fatal] bad allocation").
  const std::string trimmed = text::trim(line);
  const bool ends_bad_allocation =
      trimmed.size() >= 14 && std::string_view(trimmed).substr(trimmed.size() - 14) == "bad allocation";
  if (contains(line, "bad allocation") &&
      (!scan_text::exception_at_start(line).empty() || contains(line, "what()") || ends_bad_allocation)) {
    return "std::bad_alloc (\"bad allocation\"): the host refused an allocation";
  }
  return {};
}

namespace {

// The word before `pos` in `lower` (letters only), skipping spaces and backquotes.
std::string_view word_before(std::string_view lower, std::size_t pos) {
  std::size_t word_end = pos;
  while (word_end > 0 && (lower[word_end - 1] == ' ' || lower[word_end - 1] == '`')) --word_end;
  std::size_t word_start = word_end;
  while (word_start > 0 && std::isalpha(static_cast<unsigned char>(lower[word_start - 1])) != 0) --word_start;
  return lower.substr(word_start, word_end - word_start);
}

// "killed" told in a sentence: after a verb ("was killed", "gets killed", "says killed"), after what was killed
// ("the training killed", "process killed", "the terminal shows killed"), with an adverb between ("is suddenly
// killed", "just killed"). Not "killed by signal" (DataLoader's, read elsewhere) nor "not killed".
bool killed_told_in_prose(std::string_view lower) {
  if (contains(lower, "killed by signal")) return false;
  for (std::size_t pos = lower.find("killed"); pos != std::string_view::npos; pos = lower.find("killed", pos + 1)) {
    const std::size_t end = pos + 6;
    if (end < lower.size() && std::isalpha(static_cast<unsigned char>(lower[end])) != 0) continue;  // "killedx"
    if (pos > 0 && std::isalpha(static_cast<unsigned char>(lower[pos - 1])) != 0) continue;         // "xkilled"
    std::string_view before = word_before(lower, pos);
    const bool adverb = (before.size() > 3 && before.substr(before.size() - 2) == "ly") || before == "just" ||
                        before == "then" || before == "also" || before == "still" || before == "always";
    if (adverb) before = word_before(lower, static_cast<std::size_t>(before.data() - lower.data()));
    for (std::string_view word :
         {"was", "were",    "got",  "gets",    "get",     "getting", "be",      "been",   "being",
          "is",  "are",     "and",  "process", "message", "says",    "said",    "shows",  "training",
          "job", "program", "task", "run",     "script",  "worker",  "workers", "python", "it"}) {
      if (before == word) return true;
    }
  }
  return false;
}

// The GPU named on the line ("GPU", "CUDA", "VRAM"): a shortage told beside it is the GPU's, not the host's.
bool names_the_gpu(std::string_view lower) {
  return contains(lower, "gpu") || contains(lower, "cuda") || contains(lower, "vram");
}

// The host's memory named ("RAM", "host memory", "system memory", "CPU memory") and said to be short ("RAM
// exhausted", "ran out", "not enough system memory", "insufficient host memory", "maxed out"), not the GPU's, nor
// TensorFlow's routine warning ("Allocation of … exceeds 10% of free system memory", older: "… of system memory").
bool host_memory_short(std::string_view lower) {
  const bool host_named = has_word(lower, "ram") || contains(lower, "host memory") ||
                          contains(lower, "system memory") || contains(lower, "cpu memory");
  if (!host_named || names_the_gpu(lower) || contains(lower, "% of free system memory") ||
      contains(lower, "% of system memory")) {
    return false;
  }
  for (std::string_view shortage : {"exhaust", "exceed", "ran out", "runs out", "run out", "running out", "not enough",
                                    "insufficient", "maxed", "max out"}) {
    if (contains(lower, shortage)) return true;
  }
  return false;
}

}  // namespace

// A process reported killed in the user's words, with no signal or status ("the process gets killed", "training
// was killed", "with message `killed`", "进程被kill了"), or the host's memory said to be short ("ran out of RAM",
// "out of (cpu)memory", an OOM said to be the RAM's or the CPU's, swap used up, a MemoryError named in a sentence,
// "内存不足", Chinese for too little RAM,
// where GPU memory is "显存"). DataLoader's "is killed by signal: …" names its signal and is read elsewhere.
bool prose_killed_or_short_of_ram(std::string_view lower) {
  // Chinese: killed ("被kill", "kill掉", "被杀"), RAM ("内存", where GPU memory is "显存") short, overflowing,
  // blown, used up, full.
  for (std::string_view phrase :
       {"被kill", "kill掉", "被杀", "内存不足", "内存溢出", "内存爆", "内存不够", "内存耗尽", "内存满"}) {
    if (contains(lower, phrase)) return true;
  }
  // The system said to have run out of memory ("the system ran out of memory"), not the GPU.
  if ((contains(lower, "system ran out of memory") || contains(lower, "system runs out of memory") ||
       contains(lower, "system is out of memory")) &&
      !names_the_gpu(lower)) {
    return true;
  }
  for (std::string_view phrase :
       {"out of ram", "ram is full", "not enough ram", "insufficient ram", "out of cpu memory", "out of (cpu)memory",
        "out of (cpu) memory", "out of system memory"}) {
    if (contains(lower, phrase)) return true;
  }
  // An OOM said to be the RAM's or the CPU's ("causing RAM OOMs", "CPU OOM when training"), not the GPU's.
  if ((contains(lower, "ram oom") || contains(lower, "cpu oom") || contains(lower, "out of memory") ||
       contains(lower, "out-of-memory")) &&
      (has_word(lower, "ram") || has_word(lower, "cpu")) && !names_the_gpu(lower) && !contains(lower, "显存")) {
    return true;
  }
  // Memory short in Japanese and Korean ("メモリ不足", "메모리 부족"), where the GPU's is named as such.
  if ((contains(lower, "メモリ不足") || contains(lower, "메모리 부족")) && !contains(lower, "gpu") &&
      !contains(lower, "vram")) {
    return true;
  }
  if (host_memory_short(lower)) return true;
  // Out of memory told of a step that runs on the host, the data's loading or preprocessing or a checkpoint's
  // saving ("LoadData keeps failing due to out of memory error", "an out-of-memory (OOM) error when saving a
  // checkpoint"), the GPU not named.
  if ((contains(lower, "out of memory") || contains(lower, "out-of-memory")) && !names_the_gpu(lower) &&
      !contains(lower, "显存")) {
    for (std::string_view step : {"loaddata", "load data", "loading data", "loading the data", "data set", "dataset",
                                  "preprocess", "saving a checkpoint", "saving the checkpoint", "saving checkpoint"}) {
      if (contains(lower, step)) return true;
    }
  }
  // RAM used until it runs out ("the cpu ram is consumed until it depletes").
  if (has_word(lower, "ram") && contains(lower, "deplet") && !contains(lower, "gpu") && !contains(lower, "vram")) {
    return true;
  }
  // RAM said to have frozen or crashed the machine or the run ("the computer freezes and the RAM is at 100%", "RAM
  // usage keeps increasing until the training crashes").
  if (has_word(lower, "ram") && (contains(lower, "froze") || contains(lower, "freez") || contains(lower, "crash")) &&
      !names_the_gpu(lower)) {
    return true;
  }
  // A SIGKILL or signal 9 told in words ("crashed with SIGKILL", "got signal 9"), not DeepSpeed's handler's name
  // (sigkill_handler) nor a launcher closing its other workers ("Sending process 12 closing signal SIGKILL"), and
  // an exit status of 137 (128 + 9) told likewise ("the container exits with 137").
  if ((has_word(lower, "sigkill", is_alnum_or_underscore) || has_word(lower, "signal 9")) &&
      !contains(lower, "closing signal")) {
    return true;
  }
  if (contains(lower, "exit 137") || contains(lower, "exits with 137") || contains(lower, "exited with 137")) {
    return true;
  }
  // The OOM killer said to have killed or ended a run ("随机出现 OOM killer 失败退出", random OOM-killer failed exits),
  // or first among the causes Ray lists for a worker that died without an error of its own ("(1) The process is
  // killed by SIGKILL by OOM killer …"): likely, not certain, so it is read here and not among the watchers; advice
  // about it ("so that the OOM killer does not stop the build") is not a kill.
  if (contains(lower, "oom killer") || contains(lower, "oom-killer")) {
    for (std::string_view ended : {"killed", "kills", "退出", "失败", "exit", "terminat"}) {
      if (contains(lower, ended)) return true;
    }
  }
  // Swap used up ("the usage of swap reaches 100%", "all swap region was used (and killed)").
  if (contains(lower, "swap") && (contains(lower, "100%") || contains(lower, "killed") || contains(lower, " full"))) {
    return true;
  }
  // Python's MemoryError named in a sentence ("Data results in MemoryError"), not the tail of another class
  // (PyTorch's OutOfMemoryError is the GPU's).
  for (std::size_t pos = lower.find("memoryerror"); pos != std::string_view::npos;
       pos = lower.find("memoryerror", pos + 1)) {
    if (pos == 0 || std::isalnum(static_cast<unsigned char>(lower[pos - 1])) == 0) return true;
  }
  return killed_told_in_prose(lower);
}

// A notebook's kernel or a hosted session that died without an error of its own (Jupyter's "The kernel appears to
// have died. It will restart automatically.", "Dead kernel" and "The kernel has died", its server's
// "KernelRestarter: restarting kernel", VS Code's "The Kernel crashed while executing code", Colab's "Your session
// crashed", a user's "Kernel died"), Ollama's model runner gone with no status, Dask's workers dead, or a kill or a
// shortage of RAM told in
// prose: most often the OOM killer, so a log with nothing else to explain it gets the host OOM finding
// (log_rules.cpp), worded as likely.
bool host_oom_likely(std::string_view lower) {
  // Ollama's runner gone with no exit status of its own ("Error: llama runner process has terminated"), as when
  // the system ran out of memory loading a model; a status ("exit status 0xc0000409") is a crash.
  const bool ollama_runner_gone =
      contains(lower, "llama runner process has terminated") && !contains(lower, "exit status");
  return contains(lower, "appears to have died") || contains(lower, "kernelrestarter: restarting kernel") ||
         contains(lower, "kernel crashed while executing code") || contains(lower, "your session crashed") ||
         contains(lower, "kernel died") || contains(lower, "kernel has died") || contains(lower, "dead kernel") ||
         contains(lower, "kernel restarting") ||
         // VS Code's Jupyter extension when the kernel died under a running cell
         contains(lower, "canceled future for execute_request message") ||
         // Dask's KilledWorker: the workers that ran a task all died, most often of their memory
         has_word(lower, "killedworker") || ollama_runner_gone || prose_killed_or_short_of_ram(lower);
}

}  // namespace gpusage::diagnose
