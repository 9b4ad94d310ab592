// Issue 30's part of the log scanner: the error codes a line names (error_codes.hpp), routed to the pattern
// they belong to, and the failure families that have no code: the kernel's OOM killer, DataLoader workers
// that crash or run out of file descriptors, JAX/XLA out of memory, a cuDNN other than the one the framework
// was built with, a compiler without the GPU's architecture, a kernel module that does not match libcuda,
// and the asserts CUDA kernels print. Also the warnings that look like failures and are not.
#include <cctype>
#include <regex>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_signals.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::add_once;
using scan_text::at;
using scan_text::contains;

bool is_benign_warning(std::string_view line) {
  // PyTorch 2.3.0 warns each time cuDNN's v8 API rejects one execution plan ("UserWarning: Plan failed with a
  // cudnnException: … CUDNN_STATUS_NOT_SUPPORTED"); the next plan runs and training goes on. PyTorch 2.3.1
  // removed the warning.
  if (contains(line, "Plan failed with a cudnnException")) return true;
  // NCCL looks for an optional network plugin (libnccl-net.so) at start-up and, without one, uses its
  // internal transports: "NET/Plugin: Could not find: libnccl-net.so", "NET/Plugin : No plugin found".
  if (contains(line, "NET/Plugin") &&
      (contains(line, "Could not find") || contains(line, "No plugin found") || contains(line, "Plugin load"))) {
    return true;
  }
  // TensorFlow's CPU allocator notes any single allocation above 10% of free RAM; it is not an OOM.
  if (contains(line, "exceeds 10% of free system memory")) return true;
  // TensorFlow's BFC allocator when a caller that can do without the memory is refused (retry_on_failure off):
  // "Allocator (GPU_0_bfc) ran out of memory trying to allocate … The caller indicates that this is not a
  // failure, but may mean that there could be performance gains if more memory were available."
  if (contains(line, "The caller indicates that this is not a failure")) return true;
  // NCCL probes for InfiniBand and uses sockets when the machine has none.
  if (contains(line, "NCCL WARN Failed to open libibverbs")) return true;
  return false;
}

namespace {

// A code the log names: counted once per line, in first-seen order (the table bounds the list).
void record_sighting(std::vector<CodeSighting>& codes, const ErrorCode& code, std::size_t n, std::string_view line) {
  for (auto& s : codes) {
    if (s.code.family == code.family && s.code.number == code.number) {
      s.lines.add(n, line);
      return;
    }
  }
  codes.push_back({code, {}});
  codes.back().lines.add(n, line);
}

// "Killed" as bash prints it for a job the kernel killed, in the locales seen in pasted logs.
bool is_bare_killed(std::string_view line) {
  if (line.size() > 48) return false;
  std::string t = text::trim(line);
  // Markdown around it, as pasted in an issue: "**Killed**", "`Killed`".
  while (!t.empty() && (t.front() == '*' || t.front() == '`' || t.front() == '_')) t.erase(0, 1);
  while (!t.empty() && (t.back() == '*' || t.back() == '`' || t.back() == '_')) t.pop_back();
  // (glibc's strsignal(SIGKILL) in its translations: de, fr, es, it, pt, ru, zh_CN, ja, es, ko, uk, tr, pl.)
  for (std::string_view word :
       {"Killed", "killed", "Getötet", "Processus arrêté", "Matado", "Ucciso", "Morto", "Убито", "已杀死", "強制終了",
        "Terminado (killed)", "죽었음", "Вбито", "Öldürüldü", "Unicestwiony"}) {
    if (t == word) return true;
  }
  return false;
}

// bash's job report: "line 5: 4242 Killed   python main.py".
bool is_job_killed(std::string_view line) {
  for (std::size_t pos = line.find(" Killed"); pos != std::string_view::npos; pos = line.find(" Killed", pos + 1)) {
    std::size_t i = pos;
    while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9') --i;
    if (i < pos && (i == 0 || line[i - 1] == ' ')) return true;
  }
  return false;
}

// "Killed" that the shell printed right after a progress bar with no newline of its own: tqdm's
// "… 13.82it/s]Killed", Keras' "ETA: 365s - loss: 2.1371Killed". The line ends on the word glued to a digit or
// a bracket, which prose never does.
bool killed_after_progress(std::string_view line) {
  std::string t = text::trim(line);
  while (!t.empty() && (t.back() == '*' || t.back() == '`')) t.pop_back();
  constexpr std::string_view word = "Killed";
  if (t.size() <= word.size() || t.compare(t.size() - word.size(), word.size(), word) != 0) return false;
  const char before = t[t.size() - word.size() - 1];
  return (before >= '0' && before <= '9') || before == ']' || before == ')' || before == '|' || before == '%';
}

// An exit status that stands for SIGKILL, whoever reports it: -9 (a child killed by signal 9, as Python's
// subprocess, torchrun, DeepSpeed's launcher and DIGITS give it) or 137 (128 + 9, as shells, Docker, Kubernetes
// and IDEs give it), after a word that names a code: "exitcode: -9", "return code = -9", "error code -9",
// "returncode=-9", "Exit Code: 137", "exited with code 137", "Exit Status: 137", "rc=137". Read on the lower-case
// line.
bool sigkill_exit_code(std::string_view lower) {
  for (std::string_view number : {std::string_view("-9"), std::string_view("137")}) {
    for (std::size_t pos = lower.find(number); pos != std::string_view::npos; pos = lower.find(number, pos + 1)) {
      const std::size_t end = pos + number.size();
      if (end < lower.size() && (std::isdigit(static_cast<unsigned char>(lower[end])) != 0 || lower[end] == '.')) {
        continue;  // -90, 1375, 137.5
      }
      std::size_t i = pos;
      // (Markdown's emphasis may sit between the name and its value: "**Exit Code**: 137".)
      while (i > 0 && (lower[i - 1] == ' ' || lower[i - 1] == ':' || lower[i - 1] == '=' || lower[i - 1] == '\t' ||
                       lower[i - 1] == '*' || lower[i - 1] == '`')) {
        --i;
      }
      if (i == pos) continue;  // glued to what precedes it: part of another number or name
      std::size_t start = i;
      while (start > 0 &&
             (std::isalpha(static_cast<unsigned char>(lower[start - 1])) != 0 || lower[start - 1] == '_')) {
        --start;
      }
      const std::string_view name = lower.substr(start, i - start);
      for (std::string_view code :
           {"code", "exitcode", "exit_code", "returncode", "return_code", "errorcode", "status", "rc"}) {
        if (name == code) return true;
      }
    }
  }
  return false;
}

// How the kernel's OOM killer (or a SIGKILL like it) shows in the line, if it does.
std::optional<std::string> oom_killer_detail(std::string_view line, std::string_view lower) {
  // Cheap gate: a short line (bare "Killed" in any locale) or one of these words.
  const bool status_word = contains(lower, "code") || contains(lower, "status") || contains(lower, "rc=");
  if (line.size() > 48 && !contains(lower, "kill") && !status_word) return std::nullopt;
  if (is_bare_killed(line) || is_job_killed(line) || killed_after_progress(line))
    return "the process was killed (SIGKILL), as the kernel's OOM killer does";
  if (status_word && sigkill_exit_code(lower)) return "the process was killed by signal 9 (SIGKILL)";
  if (contains(line, "Signal 9 (SIGKILL) received")) return "torchrun reports a worker killed by signal 9 (SIGKILL)";
  if (contains(lower, "oom-kill") || contains(lower, "oom_kill") || contains(line, "Out of memory: Killed process") ||
      contains(line, "Memory cgroup out of memory: Killed")) {
    return "the kernel's OOM killer (dmesg / the job scheduler)";
  }
  return std::nullopt;
}

}  // namespace

const std::vector<TriggerWords>& family_triggers() {
  static const std::vector<TriggerWords> lists = {
      // scan_families runs only on lines with one of these words: every pattern in it must hold one (a new
      // pattern adds its word here; PrefilterTest fails on a fixture line the prefilter would hide).
      {gate::families,
       {// JAX/XLA out of memory
        "alloc", "buffer", "xla label:",
        // cuDNN other than the framework's
        "cudnn",
        // a compiler without the GPU's architecture
        "sm_", "compute_", "ptx codegen error", "ptxas does not support cc",
        // kernel module vs libcuda
        "does not match dso version", "driver/library version mismatch",
        // a kernel's assert
        "assertion `",
        // the OOM killer: its words, and the bare "Killed" of every locale is_bare_killed knows
        "kill", "code", "getötet", "processus arrêté", "matado", "ucciso", "morto", "убито", "已杀死", "強制終了",
        "죽었음", "вбито", "öldürüldü", "unicestwiony", "status", "rc=",
        // DataLoader workers
        "received 0 items of ancdata", "too many open files", "unexpected segmentation fault encountered in worker",
        "unexpected bus error encountered in worker", "[errno 24]"}},
      // note_framework, on raw lines.
      {gate::framework_jax, {"jax", "xlaruntimeerror", "external/org_tensorflow", "external/xla/"}},
      {gate::framework_tf,
       {"resourceexhaustederror", "oom when allocating tensor", "tensorflow.python", "keras", "tensorflow/",
        "tensorflow\\"}},
  };
  return lists;
}

void LogScanner::scan_codes(std::size_t n, std::string_view line, std::string_view lower, std::uint64_t groups) {
  LogScan& scan = scan_;
  auto has = [groups](gate::Group g) { return (groups & gate::bit(g)) != 0; };
  const ErrorCodeTable& table = ErrorCodeTable::builtin();
  // The table's family gates, asked only for the families whose words the prefilter saw.
  const ErrorGates gates{has(gate::codes_cuda) && table.gate_open(ErrorGate::cuda, lower),
                         has(gate::codes_nccl) && table.gate_open(ErrorGate::nccl, lower),
                         has(gate::codes_cudnn) && table.gate_open(ErrorGate::cudnn, lower),
                         has(gate::codes_absl) && table.gate_open(ErrorGate::absl, lower)};
  const std::vector<const ErrorCode*> codes = table.identify(line, lower, gates);
  if (codes.empty()) return;
  // A wrapper status ("XlaRuntimeError: INTERNAL: … CUDA_ERROR_ILLEGAL_ADDRESS") says less than the code it
  // wraps: codes with only a generic fix count when the line names nothing more specific.
  const bool specific = std::any_of(codes.begin(), codes.end(), [](const ErrorCode* c) {
    return c->kind != ErrorKind::none && c->kind != ErrorKind::cuda_error && c->kind != ErrorKind::xla_error;
  });
  for (const ErrorCode* c : codes) {
    record_sighting(scan.codes, *c, n, line);
    switch (c->kind) {
      case ErrorKind::none: break;
      case ErrorKind::cuda_oom:
        // The OOM patterns have usually taken the line already, with its figures.
        if (scan.cuda_oom_lines.last_line() != n && scan.tf_oom_lines.last_line() != n &&
            scan.host_oom.last_line() != n && scan.jax_oom.last_line() != n) {
          OomReport r;
          r.wording = "cuda";
          r.at = at(n, line);
          add_oom(scan.cuda_oom, scan.cuda_oom_count, std::move(r));
          scan.cuda_oom_lines.add(n, line);
        }
        break;
      case ErrorKind::driver_too_old: scan.driver_old.add(n, line); break;
      case ErrorKind::driver_mismatch: scan.driver_mismatch.add(n, line); break;
      case ErrorKind::no_kernel_image: scan.no_kernel.add(n, line); break;
      case ErrorKind::illegal_memory_access: scan.illegal_address.add(n, line); break;
      case ErrorKind::device_assert: scan.device_assert.add(n, line); break;
      case ErrorKind::cuda_error:
      case ErrorKind::xla_error:
        if (!specific) scan.code_errors.add(n, line);
        break;
      case ErrorKind::nccl:
        if (scan.nccl_timeout.last_line() == n) break;  // a timeout names its collective, not a failure code
        scan.nccl_error.add(n, line);
        if (!scan.nccl_error_detail)
          scan.nccl_error_detail = c->label() + (c->message.empty() ? "" : ": " + c->message);
        break;
      case ErrorKind::cudnn:
        scan.cudnn.add(n, line);
        add_once(scan.cudnn_statuses, c->name);
        break;
      case ErrorKind::cudnn_version_mismatch: scan.cudnn_version.add(n, line); break;
      case ErrorKind::xla_oom: scan.jax_oom.add(n, line); break;
    }
  }
}

void LogScanner::note_framework(std::string_view raw, std::uint64_t groups) {
  LogScan& scan = scan_;
  // Read on the raw line: the prefixes normalisation strips (TensorFlow's "I tensorflow/core/…cc:42]") say
  // whose log it is. jaxlib before 0.4 built XLA from a vendored TensorFlow: its paths read
  // "external/org_tensorflow/…", TensorFlow's own "tensorflow/core/…".
  // jaxlib builds XLA as external/xla (TensorFlow 2.14+ as external/local_xla).
  if ((groups & gate::bit(gate::framework_jax)) && !scan.jax_seen &&
      (contains(raw, "jax") || contains(raw, "JAX") || contains(raw, "Jax") || contains(raw, "XlaRuntimeError") ||
       contains(raw, "external/org_tensorflow") || contains(raw, "external/xla/"))) {
    scan.jax_seen = true;
    active_ &= ~gate::bit(gate::framework_jax);  // known: no need to look again
  }
  if ((groups & gate::bit(gate::framework_tf)) && !scan.tf_python_seen &&
      (contains(raw, "ResourceExhaustedError") || contains(raw, "OOM when allocating tensor") ||
       contains(raw, "tensorflow.python") || contains(raw, "keras") ||
       ((contains(raw, "tensorflow/") || contains(raw, "tensorflow\\")) && !contains(raw, "external/")))) {
    scan.tf_python_seen = true;
    active_ &= ~gate::bit(gate::framework_tf);
  }
}

void LogScanner::scan_families(std::size_t n, std::string_view line, std::string_view lower) {
  LogScan& scan = scan_;
  std::match_results<std::string::const_iterator> m;
  scan_text::RegexLine str(line);

  // --- JAX/XLA out of memory ------------------------------------------------------------------------
  // (Cheap gates first: each phrase below has one of these words.)
  const bool alloc_words = contains(lower, "alloc") || contains(lower, "buffer") || contains(line, "XLA Label:");
  if (alloc_words &&
      (contains(lower, "out of memory while trying to allocate") || contains(lower, "out of memory allocating") ||
       contains(line, "BufferAssignment OOM") || contains(line, "Peak buffers:") || contains(line, "XLA Label:") ||
       (contains(lower, "failed to alloc") && contains(lower, "memory")) ||
       (contains(lower, "ran out of memory trying to allocate") && contains(lower, "bfc")))) {
    scan.jax_oom.add(n, line);
    static const std::regex requested(R"(allocat\w*\s+(\d+) bytes)");
    if (!scan.jax_requested_bytes && std::regex_search(str(), m, requested)) {
      scan.jax_requested_bytes = std::stod(m[1].str());
    }
  }

  // --- a cuDNN other than the framework's ------------------------------------------------------------
  if (contains(lower, "cudnn")) {
    // TensorFlow/XLA: "Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0" (or 7005 …
    // 7101); PyTorch: "cuDNN version incompatibility: PyTorch was compiled against (8, 9, 2) but found
    // runtime version (8, 5, 0)".
    static const std::regex tf(
        R"(Loaded runtime CuDNN library:\s*(\d+(?:\.\d+)*).*?compiled with:?\s*(\d+(?:\.\d+)*))");
    static const std::regex torch(R"(compiled against \(([\d, ]+)\) but found runtime version \(([\d, ]+)\))");
    static const std::regex torch_old(R"(compiled against (\d+) but linked against (\d+))");
    const bool loaded = contains(line, "Loaded runtime CuDNN library");
    const bool torch_mismatch =
        contains(line, "cuDNN version incompatibility") || contains(line, "cuDNN version mismatch");
    const bool library_missing =
        (contains(line, "Could not load library libcudnn") || contains(line, "Unable to load any of {libcudnn") ||
         contains(line, "Could not locate cudnn") || contains(line, "Could not load library cudnn") ||
         contains(line, "Cannot load symbol cudnn") ||
         (contains(line, "libcudnn") && contains(line, "cannot open shared object file"))) &&
        !contains(line, "Could not load dynamic library");  // TensorFlow's warning when it falls back to CPU
    if (loaded || torch_mismatch || library_missing || contains(line, "No execution plans support the graph")) {
      scan.cudnn_version.add(n, line);
      if (!scan.cudnn_loaded && loaded && std::regex_search(str(), m, tf)) {
        scan.cudnn_loaded = m[1].str();
        scan.cudnn_compiled = m[2].str();
      } else if (!scan.cudnn_loaded && torch_mismatch &&
                 (std::regex_search(str(), m, torch) || std::regex_search(str(), m, torch_old))) {
        scan.cudnn_compiled = m[1].str();
        scan.cudnn_loaded = m[2].str();
      }
    }
  }

  // --- a compiler without the GPU's architecture (ptxas, Triton, nvcc, XLA) ---------------------------
  if (contains(lower, "sm_") || contains(lower, "compute_") || contains(line, "PTX codegen error") ||
      contains(line, "ptxas does not support CC")) {
    // ptxas: "Value 'sm_120' is not defined for option 'gpu-name'" (nvcc: 'gpu-architecture'); LLVM: "'sm_120' is
    // not a recognized processor for this target"; XLA: "ptxas does not support CC 8.9".
    const bool rejected =
        contains(line, "is not defined for option 'gpu-") ||
        contains(line, "is not a recognized processor for this target") ||
        contains(line, "ptxas does not support CC") || contains(line, "does not support target 'sm_") ||
        contains(line, "does not support .target sm_") || contains(line, "Unsupported gpu architecture 'compute_") ||
        contains(line, "Internal Triton PTX codegen error") ||
        (contains(line, "--gpu-name=sm_") && contains(line, "CalledProcessError"));
    if (rejected) {
      scan.arch_unsupported.add(n, line);
      static const std::regex arch(R"(\b(?:sm|compute)_(\d{2,3}[a-z]?)\b)");
      static const std::regex capability(R"(does not support CC (\d+)\.(\d))");
      if (!scan.toolchain_arch && std::regex_search(str(), m, arch)) scan.toolchain_arch = "sm_" + m[1].str();
      if (!scan.toolchain_arch && std::regex_search(str(), m, capability)) {
        scan.toolchain_arch = "sm_" + m[1].str() + m[2].str();
      }
    }
  }

  // --- the kernel module and libcuda disagree --------------------------------------------------------
  if (contains(line, "does not match DSO version") || contains(line, "Driver/library version mismatch")) {
    scan.driver_mismatch.add(n, line);
  }

  // --- a CUDA kernel's assert: "Loss.cu:240: …: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t <
  // n_classes` failed." --------------------------------------------------------------------------------
  // ("failed." may be wrapped onto the next line.) A paste that keeps only the assert closes the condition with
  // a backtick, as the device's assert does (glibc's host assert closes it with a quote: "Assertion `x' failed").
  if (contains(line, "Assertion `") &&
      (contains(line, "block: [") || contains(line, ".cu:") || contains(line, "` failed"))) {
    scan.device_assert.add(n, line);
    static const std::regex condition(R"(Assertion `([^`]+)`)");
    if (!scan.assert_condition && std::regex_search(str(), m, condition)) scan.assert_condition = m[1].str();
  }

  // --- the kernel's OOM killer ---------------------------------------------------------------------------
  const std::optional<std::string> killed = oom_killer_detail(line, lower);
  if (killed) {
    scan.host_oom.add(n, line);
    if (!scan.host_oom_detail) scan.host_oom_detail = *killed;
  }

  // --- DataLoader workers: a crash inside a worker, file descriptors run out ------------------------------
  // errno 24 (EMFILE) is the workers' file descriptors, whichever wrapper names it ("OSError: [Errno 24]",
  // Python 2's IOError, PyTorch's own "Too many open files. Communication with the workers …").
  std::optional<std::string> worker;
  if (contains(line, "received 0 items of ancdata") || contains(line, "Too many open files") ||
      contains(line, "[Errno 24]")) {
    worker = "file descriptors: received 0 items of ancdata / too many open files";
  } else if (contains(line, "Unexpected segmentation fault encountered in worker")) {
    worker = "Segmentation fault";
  } else if (contains(line, "Unexpected bus error encountered in worker")) {
    worker = "Bus error";
  }
  if (worker) {
    scan.dataloader_killed.add(n, line);
    if (!scan.dataloader_detail || *scan.dataloader_detail == "exited unexpectedly") scan.dataloader_detail = *worker;
  }
}

void LogScanner::scan_signal_families(std::size_t n, std::string_view line, std::string_view lower) {
  LogScan& scan = scan_;
  SignalOoms ooms = scan_signals(scan, n, line, lower);
  if (ooms.cuda) {
    add_oom(scan.cuda_oom, scan.cuda_oom_count, std::move(*ooms.cuda));
    scan.cuda_oom_lines.add(n, line);
  }
  if (ooms.tf) {
    add_oom(scan.tf_oom, scan.tf_oom_count, std::move(*ooms.tf));
    scan.tf_oom_lines.add(n, line);
    scan.tf_python_seen = true;
  }
}

}  // namespace gpusage::diagnose
