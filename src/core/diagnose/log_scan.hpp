// Reading a training log: the failure patterns `gpusage doctor --log` recognises, with the figures they
// carry (line numbers, sizes, statuses, versions). Pure: text in, matches out; log_rules.hpp turns them into
// findings.
//
// The scanner streams: feed it lines (or chunks of any size) as they come and read scan() whenever you like,
// so a 2 GB log or a live run's output is read in bounded memory. Every pattern keeps its count and its first
// few lines, never all of them.
//
//   LogScanner scanner;                      // or LogScanner(rules.thresholds())
//   scanner.feed_line("RuntimeError: CUDA out of memory. ...");
//   scanner.feed_text(chunk);                // chunks split anywhere; a partial last line waits for the next
//   scanner.finish();                        // end of input: flushes a partial line and a pending message
//   std::vector<Finding> f = check_log(scanner.scan(), context);   // log_rules.hpp
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnose/error_codes.hpp"
#include "core/diagnose/log_normalize.hpp"
#include "core/diagnose/log_prefilter.hpp"
#include "core/diagnose/rules.hpp"
#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {

struct LogLine {
  std::size_t line = 0;  // 1-based
  std::string text;      // the line, trimmed (and shortened when very long)
};

// The lines of one pattern: how many matched, and the first few of them (kKept) for the evidence.
class Matches {
 public:
  static constexpr std::size_t kKept = 6;
  void add(std::size_t line, std::string_view text);
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const LogLine& front() const { return kept_.front(); }
  const LogLine& operator[](std::size_t i) const { return kept_[i]; }
  const std::vector<LogLine>& kept() const { return kept_; }
  std::size_t first_line() const { return kept_.empty() ? 0 : kept_.front().line; }
  std::size_t last_line() const { return last_line_; }

 private:
  std::size_t count_ = 0;
  std::size_t last_line_ = 0;  // a line adds once, however many of its pieces match
  std::vector<LogLine> kept_;
};

// One out-of-memory report (PyTorch's caching allocator, or TensorFlow's). Sizes in bytes, as the log printed
// them: these are measurements of the failing run.
struct OomReport {
  LogLine at;
  // "pytorch-2" ("Tried to allocate X. GPU 0 has a total capacity of …"), "pytorch-1" ("(GPU 0; X total
  // capacity; …)"), "pytorch-0" (THCudaCheck "error=2 : out of memory"), "pytorch" (a request without
  // figures), "cuda" (a bare "CUDA error: out of memory"), "tensorflow" (ResourceExhaustedError, BFC).
  std::string wording;
  std::optional<int> gpu_index;
  std::optional<double> requested_bytes;
  std::optional<double> capacity_bytes;
  std::optional<double> free_bytes;
  std::optional<double> allocated_bytes;    // allocated by PyTorch (tensors)
  std::optional<double> reserved_bytes;     // 1.x: reserved in total by PyTorch ("cached" in 1.0)
  std::optional<double> unallocated_bytes;  // reserved by PyTorch but unallocated (2.x; 1.x: reserved - allocated)
  std::optional<double> process_bytes;      // 2.x: this process, non-PyTorch memory included
  std::optional<std::vector<long long>> tensor_shape;  // TensorFlow: "OOM when allocating tensor with shape[…]"
};

struct GradNorm {
  std::size_t line = 0;
  double value = 0;
};

// A gradient norm far above the median of the norms before it (found while streaming).
struct GradExplosion {
  GradNorm at;
  double median = 0;
  std::size_t history = 0;  // norms before it that the median was taken over
};

// Dynamic loss scaling (apex, fairseq, DeepSpeed, PyTorch GradScaler logs): every scale the log names.
struct LossScaleTrace {
  std::size_t reports = 0;       // lines that named a scale
  std::size_t reductions = 0;    // of those, lines that say the scaler lowered it (an overflow, "reducing")
  std::optional<double> first;   // the first scale named
  std::optional<double> lowest;  // the lowest scale named
  std::size_t lowest_line = 0;
  LogLine first_at;  // the first line that named a scale
  LogLine lowest_at;
  bool at_minimum = false;  // "Minimum loss scale reached", "already at minimum"
};

// One error code the log named (error_codes.hpp), with the lines that named it.
struct CodeSighting {
  ErrorCode code;
  Matches lines;
};

struct LogScan {
  std::size_t lines = 0;
  std::vector<CodeSighting> codes;  // each code the log names, first-seen order (bounded by the table)
  std::vector<OomReport> cuda_oom;  // the first kKept reports and the last one
  std::size_t cuda_oom_count = 0;
  Matches cuda_oom_lines;
  std::vector<OomReport> tf_oom;  // likewise (TensorFlow on a GPU or an unnamed device)
  std::size_t tf_oom_count = 0;
  Matches tf_oom_lines;
  std::optional<double> tf_capacity_bytes;  // "Created TensorFlow device (… with N MB memory)", BFC "Limit:"
  std::optional<double> tf_in_use_bytes;    // BFC "InUse:" at the failure
  Matches host_oom;                         // host RAM: TensorFlow's cpu allocator, CPU allocator, OOM killer
  std::optional<std::string> host_oom_detail;
  Matches host_oom_likely;  // a notebook kernel that died with no error of its own, a kill told in prose
  Matches init_failures;    // cuBLAS/cuDNN handles that could not be created
  Matches non_finite;
  std::vector<std::string> non_finite_kinds;  // "loss", "gradients", "tensor values" (first-seen order)
  Matches overflow_skips;
  LossScaleTrace loss_scale;
  std::vector<GradNorm> grad_norms;  // the first kKept norms (for tests and evidence)
  std::size_t grad_norm_count = 0;
  std::optional<GradExplosion> grad_explosion;
  Matches no_kernel;
  std::optional<std::string> unsupported_gpu;   // "NVIDIA GeForce RTX 5090" from PyTorch's capability warning
  std::optional<std::string> unsupported_arch;  // "sm_120"
  std::optional<std::string> supported_archs;   // "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
  Matches driver_old;
  std::optional<std::string> driver_cuda;   // the CUDA version the driver supports ("11.4" from found 11040)
  std::optional<std::string> runtime_cuda;  // the CUDA runtime the log names ("12.1" from +cu121, libcudart)
  Matches nccl_timeout;
  std::optional<std::string> nccl_timeout_detail;  // "ALLREDUCE, timeout 600000 ms"
  Matches nccl_error;
  std::optional<std::string> nccl_error_detail;  // "ncclSystemError: unhandled system error"
  Matches dataloader_killed;
  std::optional<std::string> dataloader_detail;  // "Bus error", "shared memory", "exited unexpectedly"
  Matches cudnn;
  Matches cudnn_not_loaded;                 // TensorFlow could not load libcudnn (a warning until it skips the GPU)
  std::vector<std::string> cudnn_statuses;  // "CUDNN_STATUS_NOT_SUPPORTED", first-seen order
  Matches workers_zero;
  std::optional<int> batch_size;  // the first "batch_size=N" the log prints

  // Issue 30's families (log_scan_families.cpp).
  Matches illegal_address;                      // a kernel fault: 700, 716-719
  Matches device_assert;                        // 710, and the kernel's own "Assertion `…` failed"
  std::optional<std::string> assert_condition;  // "t >= 0 && t < n_classes"
  Matches jax_oom;                              // XLA: RESOURCE_EXHAUSTED, BufferAssignment, failed to alloc
  std::optional<double> jax_requested_bytes;
  bool jax_seen = false;                      // the log is JAX's (jax, jaxlib, XlaRuntimeError)
  bool tf_python_seen = false;                // the log is TensorFlow's (ResourceExhaustedError, "OOM when allocating")
  Matches cudnn_version;                      // the cuDNN loaded is not the one the framework was built with
  std::optional<std::string> cudnn_loaded;    // "8.5.0", "7005"
  std::optional<std::string> cudnn_compiled;  // "8.6.0", "7101"
  Matches arch_unsupported;                   // ptxas, Triton, nvcc or XLA without the GPU's architecture
  std::optional<std::string> toolchain_arch;  // "sm_120", "sm_121a"
  Matches driver_mismatch;                    // 803, 804, kernel module vs libcuda
  Matches code_errors;                        // codes with their own fix (cuda-error, xla-error)

  // Issue 54's families (log_scan_signals.cpp).
  Matches gpu_too_old;                             // a kernel library's minimum compute capability is above the GPU's
  std::optional<std::string> gpu_too_old_library;  // "FlashAttention", "Triton (torch.compile)", "xFormers"
  std::optional<std::string> gpu_too_old_detail;   // "it needs compute capability 7.0 or newer; Tesla P40 has 6.1"
  Matches dataloader_spawn;  // multiprocessing's spawn re-running the script: spawn_main, "bootstrapping phase"
  Matches broken_pipe;       // BrokenPipeError / ForkingPickler: a spawn failure when the log shows a DataLoader
  Matches worker_start;      // DataLoader worker-start frames (w.start(), DataLoaderIter(self))
  bool worker_start_trailing = false;  // no exception line came after the last worker-start frame
  bool dataloader_frames = false;      // the log mentions a DataLoader
  bool windows_paths = false;          // "C:\…", "~\Anaconda3" paths

  // The run's last error, whatever it is (issue 54's fallback, when no family explains the log): the exception
  // line that ended the last Python traceback, a C++ terminate, a segmentation fault; and the library that
  // raised it (the package of the traceback's last frame, else the exception's own namespace).
  std::optional<LogLine> final_error;
  std::optional<std::string> final_error_library;
};

// Whether the scanner gates its patterns behind the prefilter (log_prefilter.hpp). Off reads every line with
// every pattern: the same findings, slower (the tests compare the two).
enum class Prefilter { on, off };

class LogScanner {
 public:
  LogScanner() : LogScanner(RuleTable::builtin().thresholds()) {}
  explicit LogScanner(const Thresholds& thresholds, Prefilter prefilter = Prefilter::on);

  LogScanner(const LogScanner&) = delete;  // the normaliser calls back into this scanner
  LogScanner& operator=(const LogScanner&) = delete;

  // One line, without its newline (a trailing '\r' is ignored).
  void feed_line(std::string_view line);
  // Any chunk of the text; lines may be split across chunks. Its whole lines are read a block at a time: the
  // prefilter finds the words of the block, and only then are the lines around them found.
  void feed_text(std::string_view chunk);
  // End of input: scans a last line without a newline and completes a message still being joined.
  void finish();
  // What has been seen so far (complete after finish()).
  const LogScan& scan() const { return scan_; }

 private:
  // Whole lines, each ending in '\n'.
  void feed_block(std::string_view block);
  // The start of a line whose end is in a later chunk.
  void hold_partial(std::string_view piece);
  // One raw line with the prefilter groups of its words (kJoined without the prefilter); `plain`: it is known
  // to hold no '\r' and no backslash.
  void feed_tagged(std::string_view line, std::uint64_t groups, bool plain = false);
  // One normalised line; `groups`: the prefilter groups whose words it holds (log_scan_text.hpp).
  void scan_line(std::size_t n, std::string_view line, std::uint64_t groups);
  // The steps of scan_line, each gated by its words.
  void join_pending_oom(std::string_view line, bool new_cuda_oom);
  void scan_memory(std::size_t n, std::string_view line, std::string_view lower, bool new_cuda_oom);
  void scan_non_finite(std::size_t n, std::string_view line, std::string_view lower);
  void scan_loss_scale(std::size_t n, std::string_view line, std::string_view lower);
  void scan_hints(std::size_t n, std::string_view line, std::string_view lower, std::uint64_t groups);
  // The last error and the library that raised it (log_scan_final_error.cpp).
  void note_final_error(std::size_t n, std::string_view line);
  // GPU architecture and driver, NCCL, DataLoader workers, cuDNN (log_scan_libraries.cpp).
  void scan_libraries(std::size_t n, std::string_view line, std::string_view lower, bool init_words,
                      std::uint64_t groups);
  // The error codes the line names, and the families added in issue 30 (log_scan_families.cpp).
  void scan_codes(std::size_t n, std::string_view line, std::string_view lower, std::uint64_t groups);
  void scan_families(std::size_t n, std::string_view line, std::string_view lower);
  // Issue 54's families by signal (log_scan_signals.cpp), filed with the others' OOM reports.
  void scan_signal_families(std::size_t n, std::string_view line, std::string_view lower);
  // Whether the log is JAX's or TensorFlow's (an XLA out-of-memory reads the same in both), from a raw line.
  void note_framework(std::string_view raw, std::uint64_t groups);
  void complete_pending_oom();
  void add_oom(std::vector<OomReport>& list, std::size_t& count, OomReport report);
  void add_norm(std::size_t line, double value);

  Thresholds thresholds_;
  LogScan scan_;
  LineNormalizer normalizer_;
  std::string partial_;  // feed_text: the unfinished last line
  std::string lower_;    // the current line in lower case
  BytePairs pairs_;      // and its pairs of bytes (substring.hpp)
  std::optional<OomReport> pending_oom_;
  std::string pending_message_;
  int pending_lines_ = 0;
  bool nccl_text_seen_ = false;
  bool loss_table_ = false;                    // a header line naming a loss column was seen
  std::deque<double> norm_window_;             // the last norms, for the explosion median
  const LiteralMatcher* prefilter_ = nullptr;  // null: every line goes through every step
  std::unique_ptr<BlockScratch> prefilter_scratch_;
  std::vector<BlockHit> hits_;                // the words of the block being read
  std::uint64_t active_ = ~std::uint64_t{0};  // groups still worth running (some only until they found once)
  bool in_traceback_ = false;
  // Python's unraisable-exception hook ("Exception ignored in: <function ...__del__>", typically at
  // interpreter exit) prints a traceback that did not end the run: it is not the run's final error.
  bool unraisable_next_ = false;
  bool unraisable_traceback_ = false;
  std::string frame_library_;  // the package of the current traceback's last frame
};

// The whole text at once (tests, small logs).
LogScan scan_log(std::string_view text, Prefilter prefilter = Prefilter::on);

// Streams a file through a LogScanner in fixed-size chunks. Throws InputError naming the path when it
// cannot be read.
LogScan scan_log_file(const std::string& path, const Thresholds& thresholds = RuleTable::builtin().thresholds(),
                      Prefilter prefilter = Prefilter::on);
// Streams `in` likewise (standard input for `doctor --log -`); `name` names it in the error.
LogScan scan_log_stream(std::istream& in, const std::string& name,
                        const Thresholds& thresholds = RuleTable::builtin().thresholds(),
                        Prefilter prefilter = Prefilter::on);

// Every group's trigger words: the scanner's own lists and the error-code table's (ErrorCodeTable::
// trigger_words), and the prefilter built from them once.
std::vector<TriggerWords> scanner_trigger_words();
const LiteralMatcher& scanner_prefilter();

// Warnings that read like failures and are not (each with its reason in log_scan_families.cpp): PyTorch
// 2.3.0's cuDNN "Plan failed" UserWarning, NCCL's optional net plugin not found, TensorFlow's "exceeds 10% of
// free system memory". The scanner skips them.
bool is_benign_warning(std::string_view line);

// "1.50 GiB" -> 1610612736 (PyTorch's format_size: bytes, KiB, MiB, GiB; binary units). TensorFlow's "32.00M"
// and "1.5G" too.
std::optional<double> parse_size_bytes(std::string_view text);

// The figures of one out-of-memory message (either PyTorch wording; one line or joined lines).
OomReport parse_oom(std::string_view message);

}  // namespace gpusage::diagnose
