#include "core/diagnose/log_scan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "core/common/error.hpp"
#include "core/common/text.hpp"

namespace gpusage::diagnose {

namespace {

using Match = std::match_results<std::string::const_iterator>;

// A size as PyTorch's format_size prints it (c10/cuda/CUDACachingAllocator.cpp): "%.2f KiB|MiB|GiB" or
// "N bytes".
const char* const kSize = R"((\d+(?:\.\d+)?\s*(?:bytes|KiB|MiB|GiB|TiB)))";

std::optional<double> size_after(const std::string& message, const std::string& pattern) {
  const std::regex re(pattern);
  Match m;
  if (!std::regex_search(message, m, re)) return std::nullopt;
  return parse_size_bytes(m[1].str());
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

void add_once(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

LogLine at(std::size_t line, std::string_view text) {
  std::string t = text::trim(text);
  if (t.size() > 400) {
    // resize + append, not substr + "...": GCC 12 warns falsely (-Warray-bounds) on that concatenation.
    t.resize(397);
    t.append("...");
  }
  return {line, t};
}

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// "nan" or "inf" as a value in lower-case text: not inside a word ("finance", "INFO"), "infinity" allowed.
bool has_value_token(std::string_view lower, std::string_view token) {
  for (std::size_t pos = lower.find(token); pos != std::string_view::npos; pos = lower.find(token, pos + 1)) {
    const bool before = pos == 0 || !is_alnum(lower[pos - 1]);
    const std::size_t end = pos + token.size();
    const bool after = end == lower.size() || !is_alpha(lower[end]) || lower.substr(end, 5) == "inity";
    if (before && after) return true;
  }
  return false;
}

// The number right after `key` and a separator (": ", "=", " ", quotes), or nothing.
std::optional<double> number_after(std::string_view text, std::size_t key_end) {
  std::size_t i = key_end;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\'' || text[i] == '"' || text[i] == ':' || text[i] == '='))
    ++i;
  if (i == key_end || i >= text.size()) return std::nullopt;
  if (!std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '.') return std::nullopt;
  const std::string number(text.substr(i, std::min<std::size_t>(32, text.size() - i)));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end == number.c_str()) return std::nullopt;
  return value;
}

// A gradient norm logged as grad_norm / grad norm / gradient_norm / total_norm / gnorm (fairseq).
std::optional<double> grad_norm_in(std::string_view lower) {
  for (std::string_view key :
       {"grad_norm", "grad norm", "gradient_norm", "gradient norm", "total_norm", "gnorm"}) {
    for (std::size_t pos = lower.find(key); pos != std::string_view::npos; pos = lower.find(key, pos + 1)) {
      if (pos > 0 && is_alpha(lower[pos - 1]) && key != "gnorm") continue;
      if (key == "gnorm" && pos > 0 && is_alnum(lower[pos - 1])) continue;
      if (auto v = number_after(lower, pos + key.size())) return v;
    }
  }
  return std::nullopt;
}

// "12.1" from "cu121", "11.8" from "cu118", "9.2" from "cu92".
std::optional<std::string> cuda_from_wheel_tag(const std::string& digits) {
  if (digits.size() == 3) return digits.substr(0, 2) + "." + digits.substr(2);
  if (digits.size() == 2) return digits.substr(0, 1) + "." + digits.substr(1);
  return std::nullopt;
}

// TensorFlow's dtype names and their sizes in bytes (tensorflow/core/framework/types.proto).
double dtype_bytes(std::string_view type) {
  if (type == "half" || type == "bfloat16" || type == "int16") return 2;
  if (type == "double" || type == "int64" || type == "complex64") return 8;
  if (type == "int8" || type == "uint8" || type == "bool") return 1;
  return 4;  // float, int32
}

bool oom_message_complete(const std::string& message) {
  return contains(message, "unallocated") || contains(message, "reserved in total") ||
         contains(message, "cached)") || contains(message, "PYTORCH_CUDA_ALLOC_CONF");
}

}  // namespace

void Matches::add(std::size_t line, std::string_view text) {
  ++count_;
  if (kept_.size() < kKept) kept_.push_back(at(line, text));
}

std::optional<double> parse_size_bytes(std::string_view text) {
  static const std::regex re(R"(^\s*(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB|B|K|M|G|T)\s*$)");
  const std::string s(text);
  Match m;
  if (!std::regex_match(s, m, re)) return std::nullopt;
  const double value = std::strtod(m[1].str().c_str(), nullptr);
  const std::string unit = m[2].str();
  double scale = 1;
  if (unit == "KiB" || unit == "K") scale = 1024.0;
  if (unit == "MiB" || unit == "M") scale = 1024.0 * 1024;
  if (unit == "GiB" || unit == "G") scale = 1024.0 * 1024 * 1024;
  if (unit == "TiB" || unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  return value * scale;
}

OomReport parse_oom(std::string_view message_view) {
  const std::string message(message_view);
  OomReport r;
  const std::string size = kSize;
  r.requested_bytes = size_after(message, "Tried to allocate " + size);
  // PyTorch 2.x (since 2.1): "GPU 0 has a total capacity of 31.36 GiB of which 512.00 MiB is free." Some
  // 2.1 builds spell it "capacty".
  static const std::regex v2_gpu(R"(GPU (\d+) has a total capac(?:i)?ty of)");
  static const std::regex v1_gpu(R"(\(GPU (\d+);)");
  Match m;
  if (std::regex_search(message, m, v2_gpu)) {
    r.wording = "pytorch-2";
    r.gpu_index = std::stoi(m[1].str());
    r.capacity_bytes = size_after(message, "total capac(?:i)?ty of " + size);
    r.free_bytes = size_after(message, "of which " + size + " is free");
    r.process_bytes = size_after(message, "this process has " + size + " memory in use");
    r.allocated_bytes = size_after(message, "Of the allocated memory " + size + " is allocated by PyTorch");
    r.unallocated_bytes = size_after(message, "and " + size + " is reserved by PyTorch but unallocated");
  } else if (std::regex_search(message, m, v1_gpu)) {
    // PyTorch 1.x: "(GPU 0; 23.69 GiB total capacity; 20.12 GiB already allocated; 1.05 GiB free;
    // 21.50 GiB reserved in total by PyTorch)"; 1.0 said "4.68 MiB cached" for the reserved figure.
    r.wording = "pytorch-1";
    r.gpu_index = std::stoi(m[1].str());
    r.capacity_bytes = size_after(message, size + " total capacity");
    r.allocated_bytes = size_after(message, size + " already allocated");
    r.free_bytes = size_after(message, size + " free");
    r.reserved_bytes = size_after(message, size + " reserved in total by PyTorch");
    if (!r.reserved_bytes) r.reserved_bytes = size_after(message, size + " cached");
    if (r.reserved_bytes && r.allocated_bytes)
      r.unallocated_bytes = std::max(0.0, *r.reserved_bytes - *r.allocated_bytes);
  } else {
    r.wording = r.requested_bytes ? "pytorch" : "cuda";
  }
  return r;
}

LogScanner::LogScanner(const Thresholds& thresholds) : thresholds_(thresholds) {}

void LogScanner::feed_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++scan_.lines;
  scan_line(line);
}

void LogScanner::feed_text(std::string_view chunk) {
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(chunk);
      // A "line" longer than 1 MiB is not a log line: scan what we have so memory stays bounded.
      if (partial_.size() > (1u << 20)) {
        feed_line(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      feed_line(chunk.substr(0, nl));
    } else {
      partial_.append(chunk.substr(0, nl));
      feed_line(partial_);
      partial_.clear();
    }
    chunk.remove_prefix(nl + 1);
  }
}

void LogScanner::finish() {
  if (!partial_.empty()) {
    feed_line(partial_);
    partial_.clear();
  }
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

void LogScanner::scan_line(std::string_view line) {
  const std::size_t n = scan_.lines;
  LogScan& scan = scan_;
  // ASCII lower case into a reused buffer (no allocation per line once it has grown).
  lower_.resize(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    lower_[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view lower = lower_;
  // Cheap gates: each group of patterns runs only on lines with one of its words (most lines have none).
  const bool memory_words = contains(lower, "memory") || contains(lower, "oom") ||
                            contains(lower, "exhausted") || contains(lower, "bad_alloc") ||
                            contains(lower, "posix_memalign") || contains(lower, "limit:") ||
                            contains(lower, "inuse:");

  // A PyTorch OOM message may be wrapped over the next lines: join until it is complete.
  const bool new_cuda_oom =
      memory_words && (contains(line, "CUDA out of memory") || contains(lower, "cuda out of the memory") ||
                       contains(lower, "cuda error: out of memory"));
  if (pending_oom_) {
    if (new_cuda_oom || pending_lines_ >= 4) {
      complete_pending_oom();
    } else {
      pending_message_ += " " + text::trim(line);
      ++pending_lines_;
      if (oom_message_complete(pending_message_)) complete_pending_oom();
    }
  }

  Match m;
  std::string owned;  // a std::string copy for std::regex, made only when a pattern needs one
  auto str = [&]() -> const std::string& {
    if (owned.empty()) owned.assign(line);
    return owned;
  };

  // --- out of memory ---------------------------------------------------------------------------
  if (memory_words) {
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

    const bool tf_oom_line =
        contains(line, "ResourceExhaustedError") || contains(line, "OOM when allocating tensor") ||
        contains(line, "CUDA_ERROR_OUT_OF_MEMORY") ||
        (contains(lower, "ran out of memory trying to allocate") && contains(lower, "bfc"));
    if (tf_oom_line) {
      const bool on_cpu = contains(line, "device:CPU") || contains(line, "by allocator cpu");
      if (on_cpu) {
        scan.host_oom.add(n, line);
        if (!scan.host_oom_detail) scan.host_oom_detail = "TensorFlow's cpu allocator";
      } else {
        OomReport r;
        r.wording = "tensorflow";
        r.at = at(n, line);
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
        if (!r.requested_bytes && std::regex_search(str(), m, bytes))
          r.requested_bytes = std::stod(m[1].str());
        r.capacity_bytes = scan.tf_capacity_bytes;
        add_oom(scan.tf_oom, scan.tf_oom_count, std::move(r));
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
        (contains(lower, "cpuallocator") && contains(lower, "posix_memalign")) ||
        contains(lower, "std::bad_alloc")) {
      scan.host_oom.add(n, line);
      if (!scan.host_oom_detail) scan.host_oom_detail = "the CPU allocator";
    }
  }

  // cuBLAS/cuDNN handles that could not be created: out of memory in disguise when an OOM is near.
  const bool init_words =
      contains(lower, "status_") || contains(lower, "convolution algorithm") || contains(lower, "handle");
  if (init_words &&
      (contains(line, "CUBLAS_STATUS_NOT_INITIALIZED") || contains(line, "CUBLAS_STATUS_ALLOC_FAILED") ||
       contains(line, "CUDNN_STATUS_NOT_INITIALIZED") || contains(line, "CUDNN_STATUS_ALLOC_FAILED") ||
       contains(line, "Failed to get convolution algorithm") ||
       contains(lower, "could not create cudnn handle") ||
       contains(lower, "failed to create cublas handle"))) {
    scan.init_failures.add(n, line);
  }

  // --- non-finite values, loss scale, gradient norms -------------------------------------------
  const bool nan = has_value_token(lower, "nan");
  const bool inf = has_value_token(lower, "inf");
  if (nan || inf || contains(lower, "non-finite") || contains(lower, "loss became infinite")) {
    static const std::regex loss_nan(
        R"(\b(\w*loss)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(?:tensor\()?\s*(-?nan|-?inf(?:inity)?)\b)",
        std::regex::icase);
    static const std::regex grad_nan(
        R"(\b(grad(?:ient)?[_ ]?norm|total[_ ]norm|gnorm)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(-?nan|-?inf(?:inity)?)\b)",
        std::regex::icase);
    static const std::regex table_row(R"(^\s*\d+\s+\[\s*-?(nan|inf)\s*\])", std::regex::icase);
    std::vector<std::string> kinds;
    if (contains(lower, "loss became infinite or nan") || std::regex_search(str(), m, loss_nan) ||
        (loss_table_ && std::regex_search(str(), m, table_row))) {
      kinds.push_back("loss");
    }
    if (std::regex_search(str(), m, grad_nan) || contains(lower, "is non-finite, so it cannot be clipped") ||
        (contains(line, "Function '") && contains(line, "returned nan values"))) {
      kinds.push_back("gradients");
    }
    if (contains(line, "NaN or Inf found in input tensor")) kinds.push_back("tensor values");
    if (!kinds.empty()) {
      scan.non_finite.add(n, line);
      for (const auto& kind : kinds) add_once(scan.non_finite_kinds, kind);
    }
  }
  // deepxde-style tables: a header naming a loss column, then rows of bracketed values.
  if (contains(lower, "loss") && contains(lower, "step") && !contains(line, "[")) loss_table_ = true;

  if (contains(lower, "overflow") && contains(lower, "skipping step")) scan.overflow_skips.add(n, line);
  if (contains(lower, "scale")) {
    // apex: "reducing loss scale to 0.03125"; fairseq: "setting loss scale to: 0.25", "loss_scale=0.062",
    // "| loss_scale 0.000"; DeepSpeed: "Attempted loss scale: 64, reducing to 32".
    static const std::regex reduced(
        R"((?:reducing loss scale to|setting loss scale to:?|reducing to|loss_scale[ =]|loss scale:)\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?))",
        std::regex::icase);
    std::optional<double> value;
    for (std::sregex_iterator it(str().begin(), str().end(), reduced), end; it != end; ++it) {
      value = std::strtod((*it)[1].str().c_str(), nullptr);  // the last one on the line ("reducing to" wins)
    }
    LossScaleTrace& t = scan.loss_scale;
    if (value) {
      ++t.reports;
      if (!t.first) {
        t.first = value;
        t.first_at = at(n, line);
      }
      if (!t.lowest || *value < *t.lowest) {
        t.lowest = value;
        t.lowest_line = n;
        t.lowest_at = at(n, line);
      }
    }
    if (contains(lower, "minimum loss scale reached") || contains(lower, "loss scale already at minimum")) {
      t.at_minimum = true;
      t.lowest_at = at(n, line);
      t.lowest_line = n;
      if (!t.first_at.line) t.first_at = t.lowest_at;
    }
  }
  if (contains(lower, "norm")) {
    if (auto v = grad_norm_in(lower)) add_norm(n, *v);
  }

  // --- GPU architecture, driver ------------------------------------------------------------------
  if (contains(lower, "kernel image") || contains(lower, "capabilit") || contains(lower, "driver") ||
      contains(lower, "libcudart") || contains(lower, "+cu") || contains(lower, "no longer supports")) {
    if (contains(line, "no kernel image is available") ||
        contains(line, "PyTorch no longer supports this GPU")) {
      scan.no_kernel.add(n, line);
    }
    if (contains(line, "with CUDA capability")) {
      static const std::regex capability(R"(([^:]*?) with CUDA capability (sm_\d+a?) is not compatible)");
      if (std::regex_search(str(), m, capability)) {
        std::string gpu = text::trim(m[1].str());
        const std::size_t vendor = gpu.find("NVIDIA ");
        if (vendor != std::string::npos) gpu = gpu.substr(vendor);
        scan.unsupported_gpu = gpu;
        scan.unsupported_arch = m[2].str();
        scan.no_kernel.add(n, line);
      }
    }
    if (contains(line, "supports CUDA capabilities")) {
      static const std::regex supports(R"(supports CUDA capabilities ((?:sm_\d+a?\s*)+))");
      if (std::regex_search(str(), m, supports)) scan.supported_archs = text::trim(m[1].str());
    }
    if (contains(line, "driver on your system is too old") ||
        contains(lower, "cuda driver version is insufficient for cuda runtime version") ||
        contains(line, "cudaErrorInsufficientDriver")) {
      scan.driver_old.add(n, line);
      // PyTorch prints the driver's CUDA version as cudaDriverGetVersion returns it: 1000 * major + 10 *
      // minor.
      static const std::regex found(R"(found version (\d+))");
      if (!scan.driver_cuda && std::regex_search(str(), m, found)) {
        const long v = std::atol(m[1].str().c_str());
        scan.driver_cuda = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
      }
    }
    if (contains(line, "CUDA Version:") && contains(line, "Driver Version")) {
      static const std::regex smi(R"(CUDA Version:\s*(\d+\.\d+))");  // nvidia-smi's header: the driver's CUDA
      if (!scan.driver_cuda && std::regex_search(str(), m, smi)) scan.driver_cuda = m[1].str();
    }
    if (contains(line, "libcudart.so.") || contains(line, "+cu")) {
      static const std::regex cudart(R"(libcudart\.so\.(\d+(?:\.\d+)?))");
      static const std::regex wheel(R"(\+cu(\d{2,3})\b)");
      if (!scan.runtime_cuda && std::regex_search(str(), m, cudart)) {
        scan.runtime_cuda = m[1].str();
      } else if (!scan.runtime_cuda && std::regex_search(str(), m, wheel)) {
        scan.runtime_cuda = cuda_from_wheel_tag(m[1].str());
      }
    }
  }

  // --- NCCL ----------------------------------------------------------------------------------------
  const bool nccl = contains(lower, "nccl");
  if (nccl) {
    static const std::regex op_type(R"(OpType=(\w+))");
    static const std::regex timeout_ms(R"(Timeout\(ms\)=(\d+))");
    static const std::regex nccl_code(
        R"(\b(nccl(?:InternalError|SystemError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError))\b)");
    // "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run
    // …"
    static const std::regex nccl_text(R"(NCCL error in: \S+:\d+, ([^(,]+?)\s*(?:\(|,|$))", std::regex::icase);
    // "RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    static const std::regex nccl_numbered(R"(NCCL Error \d+: ([^(。]+?)\s*(?:\(|。|$))", std::regex::icase);
    if (contains(line, "Watchdog caught collective operation timeout") ||
        ((contains(lower, "timeout") || contains(lower, "timed out")) && !contains(lower, "timeout(ms)=0") &&
         !contains(line, "NCCL INFO"))) {
      scan.nccl_timeout.add(n, line);
      if (!scan.nccl_timeout_detail) {
        std::string detail;
        if (std::regex_search(str(), m, op_type)) detail = m[1].str();
        if (std::regex_search(str(), m, timeout_ms)) {
          detail += (detail.empty() ? "" : ", ") + ("timeout " + m[1].str() + " ms");
        }
        if (!detail.empty()) scan.nccl_timeout_detail = detail;
      }
    } else if (contains(lower, "nccl error") || contains(line, "NCCL WARN") ||
               (contains(line, "nccl") && (contains(line, "Error") || contains(line, "Invalid")) &&
                std::regex_search(str(), m, nccl_code))) {
      scan.nccl_error.add(n, line);
      // The descriptive text of PyTorch's message wins over a bare ncclResult_t name.
      if (!nccl_text_seen_ &&
          (std::regex_search(str(), m, nccl_text) || std::regex_search(str(), m, nccl_numbered))) {
        scan.nccl_error_detail = text::trim(m[1].str());
        nccl_text_seen_ = true;
      } else if (!scan.nccl_error_detail && std::regex_search(str(), m, nccl_code)) {
        scan.nccl_error_detail = m[1].str();
      }
    }
  }

  // --- DataLoader workers --------------------------------------------------------------------------
  if (contains(lower, "dataloader") || contains(lower, "shared memory")) {
    static const std::regex killed_by(R"(killed by signal:\s*([A-Za-z][A-Za-z ]*[A-Za-z]))");
    const bool by_signal = std::regex_search(str(), m, killed_by);
    if (by_signal && m[1].str() == "Killed") {
      // SIGKILL: almost always the kernel's OOM killer, i.e. the host ran out of RAM.
      scan.host_oom.add(n, line);
      if (!scan.host_oom_detail) scan.host_oom_detail = "a DataLoader worker was killed with SIGKILL";
    } else if ((contains(line, "DataLoader worker") &&
                (by_signal || contains(line, "killed") || contains(line, "exited unexpectedly"))) ||
               contains(lower, "out of shared memory") || contains(lower, "insufficient shared memory")) {
      scan.dataloader_killed.add(n, line);
      // The signal that killed the worker says more than the generic hints.
      if (by_signal) {
        if (!scan.dataloader_detail || *scan.dataloader_detail == "shared memory" ||
            *scan.dataloader_detail == "exited unexpectedly") {
          scan.dataloader_detail = m[1].str();
        }
      } else if (!scan.dataloader_detail && contains(lower, "shared memory")) {
        scan.dataloader_detail = "shared memory";
      } else if (!scan.dataloader_detail && contains(line, "exited unexpectedly")) {
        scan.dataloader_detail = "exited unexpectedly";
      }
    }
  }

  // --- cuDNN -----------------------------------------------------------------------------------------
  if ((init_words || contains(lower, "cudnn")) &&
      (contains(line, "CUDNN_STATUS_") || contains(lower, "cudnn error") ||
       contains(line, "Failed to get convolution algorithm"))) {
    scan.cudnn.add(n, line);
    static const std::regex cudnn_status(R"(\b(CUDNN_STATUS_[A-Z_]+)\b)");
    bool named = false;
    for (std::sregex_iterator it(str().begin(), str().end(), cudnn_status), end; it != end; ++it) {
      add_once(scan.cudnn_statuses, (*it)[1].str());
      named = true;
    }
    // TensorFlow: "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize".
    if (!named && contains(line, "Failed to get convolution algorithm")) {
      add_once(scan.cudnn_statuses, "cuDNN failed to initialize");
    }
  }

  // --- hints -------------------------------------------------------------------------------------------
  if (contains(line, "num_workers")) {
    static const std::regex workers_zero(R"(\bnum_workers\b['"]?\s*[:=]\s*0\b)");
    if (std::regex_search(str(), m, workers_zero)) scan.workers_zero.add(n, line);
  }
  if (!scan.batch_size && contains(lower, "batch") && contains(lower, "size")) {
    static const std::regex batch(R"(\b(?:per_device_train_|train_)?batch[_ ]size\b['"]?\s*[:=]\s*(\d+))",
                                  std::regex::icase);
    if (std::regex_search(str(), m, batch)) scan.batch_size = std::stoi(m[1].str());
  }
}

LogScan scan_log(std::string_view text) {
  LogScanner scanner;
  scanner.feed_text(text);
  scanner.finish();
  return scanner.scan();
}

LogScan scan_log_file(const std::string& path, const Thresholds& thresholds) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read log file '{}'", path));
  LogScanner scanner(thresholds);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    scanner.feed_text(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
  }
  if (in.bad()) throw InputError(fmt::format("cannot read log file '{}'", path));
  scanner.finish();
  return scanner.scan();
}

}  // namespace gpusage::diagnose
