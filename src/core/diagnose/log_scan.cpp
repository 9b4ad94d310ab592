#include "core/diagnose/log_scan.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>

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

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

void add_once(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

LogLine at(std::size_t index, const std::string& line) {
  std::string t = text::trim(line);
  if (t.size() > 400) t = t.substr(0, 397) + "...";
  return {index + 1, t};
}

}  // namespace

std::optional<double> parse_size_bytes(std::string_view text) {
  static const std::regex re(R"(^\s*(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB)\s*$)");
  const std::string s(text);
  Match m;
  if (!std::regex_match(s, m, re)) return std::nullopt;
  const double value = std::strtod(m[1].str().c_str(), nullptr);
  const std::string unit = m[2].str();
  double scale = 1;
  if (unit == "KiB") scale = 1024.0;
  if (unit == "MiB") scale = 1024.0 * 1024;
  if (unit == "GiB") scale = 1024.0 * 1024 * 1024;
  if (unit == "TiB") scale = 1024.0 * 1024 * 1024 * 1024;
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
    // 21.50 GiB reserved in total by PyTorch)".
    r.wording = "pytorch-1";
    r.gpu_index = std::stoi(m[1].str());
    r.capacity_bytes = size_after(message, size + " total capacity");
    r.allocated_bytes = size_after(message, size + " already allocated");
    r.free_bytes = size_after(message, size + " free");
    r.reserved_bytes = size_after(message, size + " reserved in total by PyTorch");
    if (r.reserved_bytes && r.allocated_bytes) r.unallocated_bytes = std::max(0.0, *r.reserved_bytes - *r.allocated_bytes);
  } else {
    r.wording = r.requested_bytes ? "pytorch" : "cuda";
  }
  return r;
}

LogScan scan_log(std::string_view text_view) {
  const std::vector<std::string> lines = text::split(text_view, '\n');
  LogScan scan;
  scan.lines = lines.size();
  if (!lines.empty() && text::trim(lines.back()).empty()) --scan.lines;

  static const std::regex loss_nan(R"(\b(\w*loss)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(-?nan|-?inf(?:inity)?)\b)",
                                   std::regex::icase);
  static const std::regex grad_nan(
      R"(\b(grad(?:ient)?[_ ]?norm|total[_ ]norm)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(-?nan|-?inf(?:inity)?)\b)",
      std::regex::icase);
  static const std::regex grad_norm(
      R"(\b(?:grad(?:ient)?[_ ]?norm|total[_ ]norm)\b['"]?\s*[:=]\s*['"]?\s*([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))",
      std::regex::icase);
  static const std::regex capability(R"(([^:]*?) with CUDA capability (sm_\d+a?) is not compatible)");
  static const std::regex supports(R"(supports CUDA capabilities ((?:sm_\d+a?\s*)+))");
  static const std::regex op_type(R"(OpType=(\w+))");
  static const std::regex timeout_ms(R"(Timeout\(ms\)=(\d+))");
  static const std::regex nccl_code(R"(\b(nccl(?:InternalError|SystemError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError))\b)");
  // "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run …"
  static const std::regex nccl_text(R"(NCCL error in: \S+:\d+, ([^(]+?)\s*(?:\(|,|$))");
  static const std::regex killed_by(R"(killed by signal:\s*([A-Za-z][A-Za-z ]*[A-Za-z]))");
  static const std::regex cudnn_status(R"(\b(CUDNN_STATUS_[A-Z_]+)\b)");
  static const std::regex workers_zero(R"(\bnum_workers\b['"]?\s*[:=]\s*0\b)");
  static const std::regex batch(R"(\b(?:per_device_train_|train_)?batch[_ ]size\b['"]?\s*[:=]\s*(\d+))",
                                std::regex::icase);

  bool nccl_text_seen = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string lower = text::to_lower(line);
    Match m;

    if (contains(line, "CUDA out of memory") || contains(lower, "cuda error: out of memory")) {
      // The message may be wrapped over the next lines; join until it is complete.
      std::string message = line;
      for (std::size_t j = i + 1; j < lines.size() && j <= i + 4; ++j) {
        if (contains(message, "unallocated") || contains(message, "reserved in total")) break;
        if (contains(lines[j], "out of memory")) break;
        message += " " + text::trim(lines[j]);
      }
      OomReport r = parse_oom(message);
      r.at = at(i, line);
      scan.cuda_oom.push_back(std::move(r));
    } else if (contains(line, "ResourceExhaustedError") || contains(line, "OOM when allocating tensor")) {
      scan.tf_oom.push_back(at(i, line));
    }

    if (contains(lower, "nan") || contains(lower, "inf") || contains(lower, "non-finite")) {
      std::vector<std::string> kinds;
      if (std::regex_search(line, m, loss_nan)) kinds.push_back("loss");
      if (std::regex_search(line, m, grad_nan) || contains(lower, "is non-finite, so it cannot be clipped") ||
          (contains(line, "Function '") && contains(line, "returned nan values"))) {
        kinds.push_back("gradients");
      }
      if (contains(line, "NaN or Inf found in input tensor")) kinds.push_back("tensor values");
      if (!kinds.empty()) {
        scan.non_finite.push_back(at(i, line));
        for (const auto& kind : kinds) add_once(scan.non_finite_kinds, kind);
      }
    }
    if (contains(lower, "overflow") && contains(lower, "skipping step")) scan.overflow_skips.push_back(at(i, line));
    if (contains(lower, "norm") && std::regex_search(line, m, grad_norm)) {
      scan.grad_norms.push_back({i + 1, std::strtod(m[1].str().c_str(), nullptr)});
    }

    if (contains(line, "no kernel image is available for execution on the device")) scan.no_kernel.push_back(at(i, line));
    if (contains(line, "with CUDA capability") && std::regex_search(line, m, capability)) {
      scan.unsupported_gpu = text::trim(m[1].str());
      scan.unsupported_arch = m[2].str();
      scan.no_kernel.push_back(at(i, line));
    }
    if (contains(line, "supports CUDA capabilities") && std::regex_search(line, m, supports)) {
      scan.supported_archs = text::trim(m[1].str());
    }

    const bool nccl = contains(line, "NCCL") || contains(line, "nccl");
    if (contains(line, "Watchdog caught collective operation timeout") ||
        (nccl && (contains(lower, "timeout") || contains(lower, "timed out")) && !contains(lower, "timeout(ms)=0"))) {
      scan.nccl_timeout.push_back(at(i, line));
      if (!scan.nccl_timeout_detail) {
        std::string detail;
        if (std::regex_search(line, m, op_type)) detail = m[1].str();
        if (std::regex_search(line, m, timeout_ms)) detail += (detail.empty() ? "" : ", ") + ("timeout " + m[1].str() + " ms");
        if (!detail.empty()) scan.nccl_timeout_detail = detail;
      }
    } else if (nccl && (std::regex_search(line, m, nccl_code) || contains(line, "NCCL error") ||
                        contains(line, "NCCL WARN"))) {
      scan.nccl_error.push_back(at(i, line));
      // The descriptive text of PyTorch's "NCCL error in:" wins over a bare ncclResult_t name.
      if (std::regex_search(line, m, nccl_text) && !nccl_text_seen) {
        scan.nccl_error_detail = text::trim(m[1].str());
        nccl_text_seen = true;
      } else if (!scan.nccl_error_detail && std::regex_search(line, m, nccl_code)) {
        scan.nccl_error_detail = m[1].str();
      }
    }

    if ((contains(line, "DataLoader worker") && contains(line, "killed")) || contains(lower, "out of shared memory") ||
        contains(lower, "insufficient shared memory")) {
      scan.dataloader_killed.push_back(at(i, line));
      // The signal that killed the worker says more than the generic shared-memory hint.
      if (std::regex_search(line, m, killed_by)) {
        if (!scan.dataloader_detail || *scan.dataloader_detail == "shared memory") scan.dataloader_detail = m[1].str();
      } else if (!scan.dataloader_detail && contains(lower, "shared memory")) {
        scan.dataloader_detail = "shared memory";
      }
    }

    if (contains(line, "CUDNN_STATUS_") || contains(lower, "cudnn error")) {
      scan.cudnn.push_back(at(i, line));
      for (std::sregex_iterator it(line.begin(), line.end(), cudnn_status), end; it != end; ++it) {
        add_once(scan.cudnn_statuses, (*it)[1].str());
      }
    }

    if (contains(line, "num_workers") && std::regex_search(line, m, workers_zero)) scan.workers_zero.push_back(at(i, line));
    if (!scan.batch_size && contains(lower, "batch") && std::regex_search(line, m, batch)) {
      scan.batch_size = std::stoi(m[1].str());
    }
  }
  return scan;
}

}  // namespace gpusage::diagnose
