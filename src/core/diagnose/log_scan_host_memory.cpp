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
  if (contains(lower, "ray-oom-prevention")) {
    return "Ray's memory monitor killed a worker: the node's RAM passed its threshold";
  }
  if (contains(lower, "low memory! at or below") || contains(lower, "low swap: killing")) {
    return "a memory monitor (earlyoom, macOS' memorystatus) killed a process: RAM was nearly exhausted";
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
  const bool allocator =
      contains(lower, "mkl_malloc: failed to allocate") || contains(lower, "[malloc_or_wait] unable to allocate") ||
      contains(lower, "[malloc] unable to allocate") || contains(lower, "cannot allocate vector of size") ||
      contains(lower, "requires more system memory") || contains(lower, "instance type with more memory") ||
      contains(lower, "0xc0000017") || contains(line, "-1073741801") || contains(line, "3221225495") ||
      // Windows' commit limit (error 1455) as Rust's std reports it ("(os error 1455)"), whatever the language of
      // the text before it, and in Chinese Windows' own words ("页面文件太小").
      contains(lower, "os error 1455") || contains(line, "页面文件太小") ||
      (contains(lower, "allocator (mklcpu) ran out of memory")) ||
      (contains(lower, "fatal python error") && contains(lower, "memoryerror")) ||
      // Go's syscall errors in lower case ("fork/exec …: cannot allocate memory"; not the dynamic loader's "cannot
      // allocate memory in static TLS block", nor a DataLoader batch's shared memory), llama.cpp's CPU buffers,
      // Node's heap
      (contains(lower, "cannot allocate memory") && !contains(lower, "static tls") && !contains(line, "</torch_")) ||
      contains(lower, "insufficient memory (attempted to allocate") ||
      contains(lower, "javascript heap out of memory") ||
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

// A process reported killed in the user's words, with no signal or status ("the process gets killed", "training
// was killed", "with message `killed`", "进程被kill了"), or the host's memory said to be short ("ran out of RAM",
// "out of (cpu)memory", an OOM said to be the RAM's or the CPU's, swap used up, a MemoryError named in a sentence,
// "内存不足", Chinese for too little RAM,
// where GPU memory is "显存"). DataLoader's "is killed by signal: …" names its signal and is read elsewhere.
bool prose_killed_or_short_of_ram(std::string_view lower) {
  if (contains(lower, "被kill") || contains(lower, "被杀") || contains(lower, "内存不足") ||
      contains(lower, "内存溢出")) {
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
      (has_word(lower, "ram") || has_word(lower, "cpu")) && !contains(lower, "gpu") && !contains(lower, "cuda") &&
      !contains(lower, "vram") && !contains(lower, "显存")) {
    return true;
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
  if (contains(lower, "killed by signal")) return false;
  for (std::size_t pos = lower.find("killed"); pos != std::string_view::npos; pos = lower.find("killed", pos + 1)) {
    const std::size_t end = pos + 6;
    if (end < lower.size() && std::isalpha(static_cast<unsigned char>(lower[end])) != 0) continue;  // "killedx"
    std::size_t word_end = pos;
    while (word_end > 0 && (lower[word_end - 1] == ' ' || lower[word_end - 1] == '`')) --word_end;
    std::size_t word_start = word_end;
    while (word_start > 0 && std::isalpha(static_cast<unsigned char>(lower[word_start - 1])) != 0) --word_start;
    const std::string_view before = lower.substr(word_start, word_end - word_start);
    for (std::string_view verb :
         {"was", "were", "got", "gets", "get", "getting", "be", "been", "being", "is", "and", "process", "message"}) {
      if (before == verb) return true;
    }
  }
  return false;
}

// A notebook's kernel or a hosted session that died without an error of its own (Jupyter's "The kernel appears to
// have died. It will restart automatically.", its server's "KernelRestarter: restarting kernel", VS Code's "The
// Kernel crashed while executing code", Colab's "Your session crashed"), or a kill or a shortage of RAM told in
// prose: most often the OOM killer, so a log with nothing else to explain it gets the host OOM finding
// (log_rules.cpp), worded as likely.
bool host_oom_likely(std::string_view lower) {
  if (ray_guess(lower)) return false;
  return contains(lower, "appears to have died") || contains(lower, "kernelrestarter: restarting kernel") ||
         contains(lower, "kernel crashed while executing code") || contains(lower, "your session crashed") ||
         prose_killed_or_short_of_ram(lower);
}

}  // namespace gpusage::diagnose
