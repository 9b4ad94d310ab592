// The log scanner's library patterns: GPU architecture and driver, NCCL, DataLoader workers, cuDNN (split
// from log_scan.cpp, which streams the lines and reads the memory and training figures).
#include <fmt/format.h>

#include <regex>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::add_once;
using scan_text::at;
using scan_text::contains;

namespace {

// "12.1" from "cu121", "11.8" from "cu118", "9.2" from "cu92".
std::optional<std::string> cuda_from_wheel_tag(const std::string& digits) {
  if (digits.size() == 3) return digits.substr(0, 2) + "." + digits.substr(2);
  if (digits.size() == 2) return digits.substr(0, 1) + "." + digits.substr(1);
  return std::nullopt;
}

}  // namespace

const std::vector<TriggerWords>& library_triggers() {
  // The gates below: architecture and driver, NCCL, DataLoader workers, cuDNN (with scan_line's init words).
  static const std::vector<TriggerWords> lists = {
      {gate::lib_arch, {"kernel image", "capabilit", "driver", "libcudart", "+cu", "no longer supports"}},
      {gate::lib_nccl, {"nccl"}},
      {gate::lib_dataloader, {"dataloader", "shared memory"}},
      {gate::lib_cudnn, {"cudnn", "status_", "convolution algorithm", "handle"}},
  };
  return lists;
}

void LogScanner::scan_libraries(std::size_t n, std::string_view line, std::string_view lower, bool init_words,
                                std::uint64_t groups) {
  auto has = [groups](gate::Group g) { return (groups & gate::bit(g)) != 0; };
  LogScan& scan = scan_;
  std::match_results<std::string::const_iterator> m;
  scan_text::RegexLine str(line);

  // --- GPU architecture, driver ------------------------------------------------------------------
  if (has(gate::lib_arch) &&
      (contains(lower, "kernel image") || contains(lower, "capabilit") || contains(lower, "driver") ||
       contains(lower, "libcudart") || contains(lower, "+cu") || contains(lower, "no longer supports"))) {
    if (contains(line, "no kernel image is available") || contains(line, "PyTorch no longer supports this GPU")) {
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
  const bool nccl = has(gate::lib_nccl) && contains(lower, "nccl");
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
      if (!nccl_text_seen_ && (std::regex_search(str(), m, nccl_text) || std::regex_search(str(), m, nccl_numbered))) {
        scan.nccl_error_detail = text::trim(m[1].str());
        nccl_text_seen_ = true;
      } else if (!scan.nccl_error_detail && std::regex_search(str(), m, nccl_code)) {
        scan.nccl_error_detail = m[1].str();
      }
    }
  }

  // --- DataLoader workers --------------------------------------------------------------------------
  if (has(gate::lib_dataloader) && (contains(lower, "dataloader") || contains(lower, "shared memory"))) {
    static const std::regex killed_by(R"(killed by signal:\s*([A-Za-z][A-Za-z ]*[A-Za-z]))");
    // The regex's literal first: most DataLoader lines are not a worker killed.
    const bool by_signal = contains(line, "killed by signal:") && std::regex_search(str(), m, killed_by);
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
  if (has(gate::lib_cudnn) && (init_words || contains(lower, "cudnn")) &&
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
}

}  // namespace gpusage::diagnose
