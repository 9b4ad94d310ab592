// Reading a training log: the failure patterns `gpusage doctor --log` recognises, with the figures they
// carry (line numbers, sizes, statuses). Pure: text in, matches out; log_rules.hpp turns them into findings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::diagnose {

struct LogLine {
  std::size_t line = 0;  // 1-based
  std::string text;      // the line, trimmed (and shortened when very long)
};

// One CUDA out-of-memory error. Sizes in bytes, as PyTorch's caching allocator printed them.
struct OomReport {
  LogLine at;
  // "pytorch-2" ("Tried to allocate X. GPU 0 has a total capacity of …"), "pytorch-1" ("(GPU 0; X total
  // capacity; …)"), "cuda" (a bare "CUDA error: out of memory" from outside the caching allocator).
  std::string wording;
  std::optional<int> gpu_index;
  std::optional<double> requested_bytes;
  std::optional<double> capacity_bytes;
  std::optional<double> free_bytes;
  std::optional<double> allocated_bytes;    // allocated by PyTorch (tensors)
  std::optional<double> reserved_bytes;     // 1.x: reserved in total by PyTorch
  std::optional<double> unallocated_bytes;  // reserved by PyTorch but unallocated (2.x; 1.x: reserved - allocated)
  std::optional<double> process_bytes;      // 2.x: this process, non-PyTorch memory included
};

struct GradNorm {
  std::size_t line = 0;
  double value = 0;
};

struct LogScan {
  std::size_t lines = 0;
  std::vector<OomReport> cuda_oom;
  std::vector<LogLine> tf_oom;
  std::vector<LogLine> non_finite;
  std::vector<std::string> non_finite_kinds;  // "loss", "gradients", "tensor values" (first-seen order)
  std::vector<LogLine> overflow_skips;
  std::vector<GradNorm> grad_norms;
  std::vector<LogLine> no_kernel;
  std::optional<std::string> unsupported_gpu;   // "NVIDIA GeForce RTX 5090" from PyTorch's capability warning
  std::optional<std::string> unsupported_arch;  // "sm_120"
  std::optional<std::string> supported_archs;   // "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
  std::vector<LogLine> nccl_timeout;
  std::optional<std::string> nccl_timeout_detail;  // "ALLREDUCE, timeout 600000 ms"
  std::vector<LogLine> nccl_error;
  std::optional<std::string> nccl_error_detail;  // "ncclSystemError: unhandled system error"
  std::vector<LogLine> dataloader_killed;
  std::optional<std::string> dataloader_detail;  // "Bus error", "shared memory"
  std::vector<LogLine> cudnn;
  std::vector<std::string> cudnn_statuses;  // "CUDNN_STATUS_NOT_SUPPORTED", first-seen order
  std::vector<LogLine> workers_zero;
  std::optional<int> batch_size;  // the first "batch_size=N" the log prints
};

LogScan scan_log(std::string_view text);

// "1.50 GiB" -> 1610612736 (PyTorch's format_size: bytes, KiB, MiB, GiB; binary units).
std::optional<double> parse_size_bytes(std::string_view text);

// The figures of one out-of-memory message (either PyTorch wording; one line or joined lines).
OomReport parse_oom(std::string_view message);

}  // namespace gpusage::diagnose
