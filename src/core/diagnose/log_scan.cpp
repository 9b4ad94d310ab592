#include "core/diagnose/log_scan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/diagnose/log_scan_signals.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::add_once;
using scan_text::at;
using scan_text::contains;
using scan_text::grad_norm_in;

namespace {

using Match = std::match_results<std::string::const_iterator>;

double dtype_bytes(std::string_view type) {
  if (type == "half" || type == "bfloat16" || type == "int16") return 2;
  if (type == "double" || type == "int64" || type == "complex64") return 8;
  if (type == "int8" || type == "uint8" || type == "bool") return 1;
  return 4;  // float, int32
}

// TensorFlow's "OOM when allocating tensor with shape[8,64,112,112] and type float on
// /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc": the tensor, its bytes, the GPU.
OomReport tf_oom_report(std::size_t n, std::string_view line, std::optional<double> capacity_bytes) {
  OomReport r;
  r.wording = "tensorflow";
  r.at = at(n, line);
  Match m;
  scan_text::RegexLine str(line);
  static const std::regex shape(R"(shape\[([0-9,\s]*)\](?: and type (\w+))?)");
  static const std::regex device(R"(device:GPU:(\d+))");
  static const std::regex bytes(R"(\((\d+) bytes\))");
  if (std::regex_search(str(), m, shape)) {
    std::vector<long long> dims;
    double elements = 1;
    for (const auto& part : text::split(m[1].str(), ',')) {
      const std::string t = text::trim(part);
      if (t.empty()) continue;
      dims.push_back(std::atoll(t.c_str()));
      elements *= static_cast<double>(dims.back());
    }
    if (!dims.empty()) {
      r.tensor_shape = dims;
      r.requested_bytes = elements * dtype_bytes(m[2].matched ? m[2].str() : "float");
    }
  }
  if (std::regex_search(str(), m, device)) r.gpu_index = std::stoi(m[1].str());
  if (!r.requested_bytes && std::regex_search(str(), m, bytes)) r.requested_bytes = std::stod(m[1].str());
  r.capacity_bytes = capacity_bytes;
  return r;
}

bool oom_message_complete(const std::string& message) {
  return contains(message, "unallocated") || contains(message, "reserved in total") || contains(message, "cached)") ||
         contains(message, "PYTORCH_CUDA_ALLOC_CONF");
}

}  // namespace

void Matches::add(std::size_t line, std::string_view text) {
  if (count_ > 0 && line == last_line_) return;
  last_line_ = line;
  ++count_;
  if (kept_.size() < kKept) kept_.push_back(at(line, text));
}

LogScanner::LogScanner(const Thresholds& thresholds, Prefilter prefilter)
    : thresholds_(thresholds),
      normalizer_([this](std::size_t n, std::string_view text, std::uint64_t groups) { scan_line(n, text, groups); }),
      prefilter_(prefilter == Prefilter::on ? &scanner_prefilter() : nullptr),
      prefilter_scratch_(prefilter_ ? prefilter_->make_scratch() : nullptr) {}

void LogScanner::feed_text(std::string_view chunk) {
  // The end of a line begun in an earlier chunk.
  if (!partial_.empty()) {
    const std::size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      hold_partial(chunk);
      return;
    }
    partial_.append(chunk.substr(0, nl));
    feed_line(partial_);
    partial_.clear();
    chunk.remove_prefix(nl + 1);
  }
  // Whole lines, a block of about 64 KiB at a time (the hits of one block stay few), then the unfinished rest.
  constexpr std::size_t kBlock = 64u << 10;
  while (!chunk.empty()) {
    std::size_t end = chunk.substr(0, kBlock).rfind('\n');
    if (end == std::string_view::npos) end = chunk.find('\n', kBlock);  // one line longer than a block
    if (end == std::string_view::npos) {
      hold_partial(chunk);
      return;
    }
    feed_block(chunk.substr(0, end + 1));
    chunk.remove_prefix(end + 1);
  }
}

void LogScanner::hold_partial(std::string_view piece) {
  partial_.append(piece);
  // A "line" longer than 1 MiB is not a log line: scan what we have so memory stays bounded.
  if (partial_.size() > (1u << 20)) {
    feed_line(partial_);
    partial_.clear();
  }
}

void LogScanner::feed_block(std::string_view block) {
  hits_.clear();
  if (prefilter_) prefilter_->find_in_block(block, prefilter_scratch_.get(), hits_);
  std::size_t hit = 0;
  constexpr std::uint64_t kNonFinite = gate::bit(gate::non_finite);
  const bool words_placed = prefilter_ && prefilter_scratch_;  // the engine's hits end where their words do
  const char* const begin = block.data();
  const char* const end = begin + block.size();
  for (const char* line = begin; line < end;) {
    bool may_split = false;
    const char* const newline = diagnose::line_end(line, end, may_split);
    const std::size_t line_end = static_cast<std::size_t>(newline - begin);
    std::uint64_t groups = prefilter_ ? 0 : LineNormalizer::kJoined;
    for (; hit < hits_.size() && hits_[hit].end <= line_end; ++hit) {
      std::uint64_t found = hits_[hit].groups;
      // "inf" in "INFO" wakes nothing (log_scan_confirm.cpp); hits at line ends come from the automaton, below.
      if ((found & kNonFinite) && words_placed && !scan_text::non_finite_word_ends_at(block, hits_[hit].end))
        found &= ~kNonFinite;
      groups |= found;
    }
    if (prefilter_ && !words_placed && (groups & kNonFinite) &&
        !scan_text::may_name_non_finite(std::string_view(line, static_cast<std::size_t>(newline - line))))
      groups &= ~kNonFinite;
    feed_tagged(std::string_view(line, static_cast<std::size_t>(newline - line)), groups, !may_split);
    line = newline + 1;
  }
}

void LogScanner::finish() {
  if (!partial_.empty()) {
    feed_line(partial_);
    partial_.clear();
  }
  normalizer_.flush();
  complete_pending_oom();
}

void LogScanner::add_oom(std::vector<OomReport>& list, std::size_t& count, OomReport report) {
  ++count;
  // The first few and the latest: the latest report with figures describes the failure best.
  if (list.size() < Matches::kKept) {
    list.push_back(std::move(report));
  } else {
    list.back() = std::move(report);
  }
}

void LogScanner::complete_pending_oom() {
  if (!pending_oom_) return;
  OomReport r = parse_oom(pending_message_);
  r.at = std::move(pending_oom_->at);
  if (pending_oom_->wording == "pytorch-0") r.wording = "pytorch-0";
  pending_oom_.reset();
  pending_message_.clear();
  pending_lines_ = 0;
  add_oom(scan_.cuda_oom, scan_.cuda_oom_count, std::move(r));
}

void LogScanner::add_norm(std::size_t line, double value) {
  if (scan_.grad_norms.size() < Matches::kKept + 2) scan_.grad_norms.push_back({line, value});
  ++scan_.grad_norm_count;
  if (scan_.grad_explosion) return;
  // The median of the last norms (a window, so memory stays bounded on long logs).
  constexpr std::size_t kWindow = 256;
  if (static_cast<int>(norm_window_.size()) >= thresholds_.grad_norm_min_history) {
    std::vector<double> sorted(norm_window_.begin(), norm_window_.end());
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
    const double median = sorted[sorted.size() / 2];
    if (median > 0 && value > thresholds_.grad_norm_explosion_factor * median) {
      scan_.grad_explosion = GradExplosion{{line, value}, median, norm_window_.size()};
      return;
    }
  }
  norm_window_.push_back(value);
  if (norm_window_.size() > kWindow) norm_window_.pop_front();
}

std::vector<TriggerWords> scanner_trigger_words() {
  std::vector<TriggerWords> all;
  for (const auto* lists : {&scan_line_triggers(), &library_triggers(), &family_triggers(), &final_error_triggers(),
                            &signal_triggers(), &confirm_triggers()})
    all.insert(all.end(), lists->begin(), lists->end());
  const ErrorCodeTable& codes = ErrorCodeTable::builtin();
  for (auto [group, family] : {std::pair{gate::codes_cuda, ErrorGate::cuda},
                               {gate::codes_nccl, ErrorGate::nccl},
                               {gate::codes_cudnn, ErrorGate::cudnn},
                               {gate::codes_absl, ErrorGate::absl}}) {
    all.push_back({group, codes.trigger_words(family)});
  }
  return all;
}

const LiteralMatcher& scanner_prefilter() {
  static const LiteralMatcher matcher(scanner_trigger_words());
  return matcher;
}

// The words each step below needs (log_prefilter.hpp): a step's patterns all hold one of its words, so a line
// without them cannot match and the step is skipped. Keep each list beside the gate it mirrors.
const std::vector<TriggerWords>& scan_line_triggers() {
  static const std::vector<TriggerWords> lists = {
      {gate::benign,
       {"plan failed with a cudnnexception", "net/plugin", "exceeds 10% of free system memory",
        "nccl warn failed to open libibverbs", "the caller indicates that this is not a failure"}},
      {gate::memory, {"memory", "oom", "exhausted", "bad_alloc", "posix_memalign", "limit:", "inuse:"}},
      {gate::init, {"status_", "convolution algorithm", "handle"}},
      // "nan" and "inf" as values: feed_block drops the group where they are part of a word ("INFO").
      {gate::non_finite, {"nan", "inf", "non-finite", "loss became infinite"}},
      {gate::loss_table, {"loss"}},
      {gate::loss_scale, {"scale", "overflow"}},
      // grad_norm_in's keys (it reads nothing else).
      {gate::grad_norm, {"grad_norm", "grad norm", "gradient_norm", "gradient norm", "total_norm", "gnorm"}},
      {gate::workers, {"num_workers"}},
      {gate::batch_size, {"batch_size", "batch size"}},
  };
  return lists;
}

void LogScanner::feed_line(std::string_view line) {
  std::uint64_t groups = prefilter_ ? prefilter_->groups_in(line, prefilter_scratch_.get()) : LineNormalizer::kJoined;
  if (prefilter_ && (groups & gate::bit(gate::non_finite)) && !scan_text::may_name_non_finite(line))
    groups &= ~gate::bit(gate::non_finite);
  feed_tagged(line, groups);
}

void LogScanner::feed_tagged(std::string_view line, std::uint64_t groups, bool plain) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // no trigger word holds a '\r'
  ++scan_.lines;
  // Groups retired since (active_ only loses bits) and the framework words, read here on the raw line and by
  // no step of scan_line: a progress line's "loss" wakes nothing once the loss table is known.
  constexpr std::uint64_t kFramework = gate::bit(gate::framework_jax) | gate::bit(gate::framework_tf);
  groups &= active_;
  if (groups & kFramework) note_framework(line, groups);
  groups &= ~kFramework;
  groups = scan_text::confirm_groups(groups);
  // Most lines of a healthy log: no word, no message being joined, and nothing to join with.
  if (groups == 0 && !pending_oom_ && (plain ? normalizer_.pass_over(line, false) : normalizer_.pass_over(line)) &&
      !pending_oom_)
    return;
  normalizer_.push(scan_.lines, line, groups);
}

void LogScanner::scan_line(std::size_t n, std::string_view line, std::uint64_t groups) {
  groups &= active_;
  // Most lines of a healthy log stop here: no step has a word in them, and no message is being joined.
  if (groups == 0 && !pending_oom_) return;
  auto has = [groups](gate::Group g) { return (groups & gate::bit(g)) != 0; };
  // ASCII lower case into a reused buffer (no allocation per line once it has grown).
  lower_.resize(line.size());
  lower_ascii(line, lower_.data());
  const std::string_view lower = lower_;
  const ReadingScope reading(line, lower, pairs_);
  if (has(gate::benign) && is_benign_warning(line)) return;
  // Cheap gates: each group of patterns runs only on lines with one of its words (most lines have none).
  const bool memory_words =
      has(gate::memory) && (contains(lower, "memory") || contains(lower, "oom") || contains(lower, "exhausted") ||
                            contains(lower, "bad_alloc") || contains(lower, "posix_memalign") ||
                            contains(lower, "limit:") || contains(lower, "inuse:"));
  // A PyTorch OOM message may be wrapped over the next lines: join until it is complete.
  const bool new_cuda_oom =
      memory_words && (contains(line, "CUDA out of memory") || contains(lower, "cuda out of the memory") ||
                       contains(lower, "cuda error: out of memory"));
  join_pending_oom(line, new_cuda_oom);
  if (memory_words) scan_memory(n, line, lower, new_cuda_oom);

  // cuBLAS/cuDNN handles that could not be created: out of memory in disguise when an OOM is near.
  const bool init_words = has(gate::init) && (contains(lower, "status_") || contains(lower, "convolution algorithm") ||
                                              contains(lower, "handle"));
  if (init_words &&
      (contains(line, "CUBLAS_STATUS_NOT_INITIALIZED") || contains(line, "CUBLAS_STATUS_ALLOC_FAILED") ||
       contains(line, "CUDNN_STATUS_NOT_INITIALIZED") || contains(line, "CUDNN_STATUS_ALLOC_FAILED") ||
       contains(line, "Failed to get convolution algorithm") || contains(lower, "could not create cudnn handle") ||
       contains(lower, "failed to create cublas handle"))) {
    scan_.init_failures.add(n, line);
  }

  if (has(gate::non_finite)) scan_non_finite(n, line, lower);
  // deepxde-style tables: a header naming a loss column, then rows of bracketed values.
  if (has(gate::loss_table) && contains(lower, "loss") && contains(lower, "step") && !contains(line, "[")) {
    loss_table_ = true;
    active_ &= ~gate::bit(gate::loss_table);  // seen once is enough
  }
  if (has(gate::loss_scale)) scan_loss_scale(n, line, lower);
  if (has(gate::grad_norm)) {
    if (auto v = grad_norm_in(lower)) add_norm(n, *v);
  }

  constexpr std::uint64_t kLibraries = gate::bit(gate::lib_arch) | gate::bit(gate::lib_nccl) |
                                       gate::bit(gate::lib_dataloader) | gate::bit(gate::lib_cudnn);
  constexpr std::uint64_t kCodes = gate::bit(gate::codes_cuda) | gate::bit(gate::codes_nccl) |
                                   gate::bit(gate::codes_cudnn) | gate::bit(gate::codes_absl);
  if (groups & kLibraries) scan_libraries(n, line, lower, init_words, groups);
  if (groups & kCodes) scan_codes(n, line, lower, groups);
  if (has(gate::families)) scan_families(n, line, lower);
  if (has(gate::signals)) {
    scan_signal_families(n, line, lower);
  } else if (has(gate::signal_too_old) || has(gate::signal_paths)) {
    scan_narrow_signals(scan_, n, line, has(gate::signal_too_old), has(gate::signal_paths));
  }
  if (has(gate::final_error)) note_final_error(n, line);
  scan_hints(n, line, lower, groups);
}

void LogScanner::join_pending_oom(std::string_view line, bool new_cuda_oom) {
  if (!pending_oom_) return;
  if (new_cuda_oom || pending_lines_ >= 4) {
    complete_pending_oom();
  } else {
    pending_message_ += " " + text::trim(line);
    ++pending_lines_;
    if (oom_message_complete(pending_message_)) complete_pending_oom();
  }
}

void LogScanner::scan_memory(std::size_t n, std::string_view line, std::string_view lower, bool new_cuda_oom) {
  LogScan& scan = scan_;
  Match m;
  scan_text::RegexLine str(line);
  if (new_cuda_oom) {
    pending_oom_ = OomReport{};
    pending_oom_->at = at(n, line);
    pending_message_ = std::string(line);
    pending_lines_ = 0;
    scan.cuda_oom_lines.add(n, line);
    if (oom_message_complete(pending_message_)) complete_pending_oom();
  } else if ((contains(line, "THCudaCheck FAIL") && contains(line, "error=2")) ||
             contains(lower, "cuda runtime error (2) : out of memory")) {
    // PyTorch 0.x: "THCudaCheck FAIL file=… line=82 error=2 : out of memory" and
    // "RuntimeError: cuda runtime error (2) : out of memory at …".
    OomReport r;
    r.wording = "pytorch-0";
    r.at = at(n, line);
    add_oom(scan.cuda_oom, scan.cuda_oom_count, std::move(r));
    scan.cuda_oom_lines.add(n, line);
  }

  const bool tf_oom_line = contains(line, "ResourceExhaustedError") || contains(line, "OOM when allocating tensor") ||
                           contains(line, "CUDA_ERROR_OUT_OF_MEMORY") ||
                           (contains(lower, "ran out of memory trying to allocate") && contains(lower, "bfc"));
  if (tf_oom_line) {
    const bool on_cpu = contains(line, "device:CPU") || contains(line, "by allocator cpu");
    if (on_cpu) {
      scan.host_oom.add(n, line);
      if (!scan.host_oom_detail) scan.host_oom_detail = "TensorFlow's cpu allocator";
    } else {
      add_oom(scan.tf_oom, scan.tf_oom_count, tf_oom_report(n, line, scan.tf_capacity_bytes));
      scan.tf_oom_lines.add(n, line);
    }
  }
  // TensorFlow names the memory it manages: "Created TensorFlow device (/device:GPU:0 with 30404 MB
  // memory)" (MB there are 2^20 bytes: memory_limit >> 20) and the BFC allocator's "Limit:"/"InUse:" at an
  // OOM.
  if (contains(line, "MB memory") && contains(line, "device")) {
    static const std::regex created(R"(with (\d+) MB memory)");
    if (std::regex_search(str(), m, created)) scan.tf_capacity_bytes = std::stod(m[1].str()) * 1024 * 1024;
  }
  if (contains(line, "Limit:") || contains(line, "InUse:")) {
    static const std::regex limit(R"(\bLimit:\s+(\d+))");
    static const std::regex in_use(R"(\bInUse:\s+(\d+))");
    if (std::regex_search(str(), m, limit)) scan.tf_capacity_bytes = std::stod(m[1].str());
    if (std::regex_search(str(), m, in_use)) scan.tf_in_use_bytes = std::stod(m[1].str());
  }
  if (contains(lower, "defaultcpuallocator: can't allocate memory") ||
      contains(lower, "defaultcpuallocator: not enough memory") ||
      (contains(lower, "cpuallocator") && contains(lower, "posix_memalign")) || contains(lower, "std::bad_alloc")) {
    scan.host_oom.add(n, line);
    if (!scan.host_oom_detail) scan.host_oom_detail = "the CPU allocator";
  }
}

void LogScanner::scan_hints(std::size_t n, std::string_view line, std::string_view lower, std::uint64_t groups) {
  if ((groups & gate::bit(gate::workers)) && contains(line, "num_workers")) {
    static const std::regex workers_zero(R"(\bnum_workers\b['"]?\s*[:=]\s*0\b)");
    if (!scan_text::matches_from(line, workers_zero, {"num_workers"}, 1).empty()) scan_.workers_zero.add(n, line);
  }
  if ((groups & gate::bit(gate::batch_size)) && !scan_.batch_size &&
      (contains(lower, "batch_size") || contains(lower, "batch size"))) {
    // On the lower-case line, from where a match can start (as in scan_loss_scale).
    static const std::regex batch(R"(\b(?:per_device_train_|train_)?batch[_ ]size\b['"]?\s*[:=]\s*(\d+))");
    const auto found = scan_text::matches_from(lower, batch, {"per_device_train_", "train_", "batch"}, 1);
    if (!found.empty()) {
      scan_.batch_size = std::stoi(std::string(found.front()[1].first, found.front()[1].second));
      active_ &= ~gate::bit(gate::batch_size);  // the first one is the one kept
    }
  }
}

LogScan scan_log(std::string_view text, Prefilter prefilter) {
  LogScanner scanner(RuleTable::builtin().thresholds(), prefilter);
  scanner.feed_text(text);
  scanner.finish();
  return scanner.scan();
}

LogScan scan_log_stream(std::istream& in, const std::string& name, const Thresholds& thresholds, Prefilter prefilter) {
  LogScanner scanner(thresholds, prefilter);
  std::vector<char> buffer(256u << 10);  // a quarter of a MiB: reading larger blocks saves no CPU
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    scanner.feed_text(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
  }
  if (in.bad()) throw InputError(fmt::format("cannot read log file '{}'", name));
  scanner.finish();
  return scanner.scan();
}

LogScan scan_log_file(const std::string& path, const Thresholds& thresholds, Prefilter prefilter) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read log file '{}'", path));
  return scan_log_stream(in, path, thresholds, prefilter);
}

}  // namespace gpusage::diagnose
