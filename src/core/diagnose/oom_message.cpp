// The figures of an out-of-memory message (PyTorch's caching allocator wordings): split from log_scan.cpp,
// which finds the messages; this file reads their sizes.
#include <algorithm>
#include <cstdlib>
#include <regex>

#include "core/diagnose/log_scan.hpp"

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

}  // namespace

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

}  // namespace gpusage::diagnose
