// The error codes a training log may name (data/doctor/error_codes.toml, compiled in): CUDA's cudaError_t and
// CUresult, NCCL's ncclResult_t, cuDNN 8's and 9's cudnnStatus_t, and the Abseil status codes XLA and
// TensorFlow report. A log line that names a code by number ("CUDA error 700", "(803 vs. 0)",
// "NCCL error 2"), by name ("cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "ncclSystemError",
// "RESOURCE_EXHAUSTED:") or by the library's own message ("an illegal memory access was encountered") is
// classified from the table, whatever framework wrapped it. Pure: text in, codes out.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpusage::diagnose {

// What a code means for the user: which finding it becomes.
enum class ErrorKind {
  none,                    // not a failure (success, end of a tf.data epoch, shutdown noise)
  cuda_oom,                // log-cuda-oom
  driver_too_old,          // log-driver-too-old
  driver_mismatch,         // log-driver-mismatch
  no_kernel_image,         // log-no-kernel-image
  illegal_memory_access,   // log-illegal-memory-access
  device_assert,           // log-device-assert
  cuda_error,              // log-cuda-error (the code's own fix)
  nccl,                    // log-nccl-error
  cudnn,                   // log-cudnn-error
  cudnn_version_mismatch,  // log-cudnn-version-mismatch
  xla_oom,                 // log-jax-oom (or TensorFlow's OOM when the log is TensorFlow's)
  xla_error,               // log-xla-error (the code's own fix)
};

// identify()'s family gates: a code is looked for by name, message or number only on a line with one of
// its gate's words (trigger_words).
enum class ErrorGate { cuda, nccl, cudnn, absl };
struct ErrorGates {
  bool cuda = false;
  bool nccl = false;
  bool cudnn = false;
  bool absl = false;
};

struct ErrorFamily {
  std::string id;  // "cuda", "nccl", "cudnn8", "cudnn9", "absl"
  std::string title;
  std::string url;
};

struct ErrorCode {
  std::string family;
  int number = 0;
  std::string name;                  // "cudaErrorIllegalAddress"
  std::vector<std::string> aliases;  // "CUDA_ERROR_ILLEGAL_ADDRESS"
  std::string message;               // "an illegal memory access was encountered" (may be empty)
  ErrorKind kind = ErrorKind::none;
  std::string fix;            // for cuda_error and xla_error
  std::string label() const;  // "cudaErrorIllegalAddress (700)"
};

class ErrorCodeTable {
 public:
  // Throws InputError naming `origin` and the entry for a malformed table.
  static ErrorCodeTable parse(std::string_view toml_text, const std::string& origin);
  // The table compiled in from data/doctor/error_codes.toml.
  static const ErrorCodeTable& builtin();

  const std::vector<ErrorFamily>& families() const { return families_; }
  const std::vector<ErrorCode>& codes() const { return codes_; }
  const ErrorFamily* family(std::string_view id) const;
  const ErrorCode* by_number(std::string_view family, int number) const;
  // By name or alias; a name in two families (cuDNN 8 and 9) gives the first.
  const ErrorCode* by_name(std::string_view name) const;

  // The codes one log line names, each once, in table order. `lower` is `line` in ASCII lower case.
  std::vector<const ErrorCode*> identify(std::string_view line, std::string_view lower) const;
  // The same with the gates already decided (the log scanner asks only the gates its prefilter saw words of).
  std::vector<const ErrorCode*> identify(std::string_view line, std::string_view lower, const ErrorGates& gates) const;
  // A gate's words (lower case): a line with none of them names no code of the gate's families. The log
  // scanner's prefilter takes them (log_prefilter.hpp).
  std::vector<std::string_view> trigger_words(ErrorGate gate) const;
  // Whether the lower-case line holds one of the gate's words.
  bool gate_open(ErrorGate gate, std::string_view lower) const;

 private:
  std::vector<ErrorFamily> families_;
  std::vector<ErrorCode> codes_;
  std::vector<std::string> lower_messages_;               // beside codes_
  std::unordered_map<std::string, std::size_t> by_name_;  // name or alias -> first index in codes_
};

const char* to_string(ErrorKind kind);  // "illegal-memory-access", as in the data file
// The finding a kind becomes ("log-illegal-memory-access"); empty for none.
const char* finding_id(ErrorKind kind);

}  // namespace gpusage::diagnose
