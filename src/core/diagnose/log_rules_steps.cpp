// The steps of check_log that read the GPU software (kernel images, the driver) and the libraries (NCCL,
// cuDNN), and the fallback for a failed run no family explains (issue 54).
#include "core/diagnose/log_rules_steps.hpp"

#include <fmt/format.h>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/diagnose/environment_rules.hpp"

namespace gpusage::diagnose {

namespace {

bool is_init_status(const std::string& status) {
  return status == "CUDNN_STATUS_NOT_INITIALIZED" || status == "CUDNN_STATUS_ALLOC_FAILED" ||
         status == "CUDNN_STATUS_INTERNAL_ERROR" || status == "cuDNN failed to initialize";
}

}  // namespace

// No kernel image for the GPU, with the framework build that has one.
void check_no_kernel_image(FindingList& list, const LogScan& scan) {
  if (scan.no_kernel.empty()) return;
  std::string detail;
  std::string requirement =
      "Install a framework build whose compiled architectures include this GPU (run gpusage doctor on the "
      "machine to see which it needs).";
  if (scan.unsupported_arch) {
    detail = fmt::format(" on {} ({})", scan.unsupported_gpu.value_or("the GPU"), *scan.unsupported_arch);
    if (scan.supported_archs) detail += fmt::format("; the build supports {}", *scan.supported_archs);
    const int value = std::stoi(scan.unsupported_arch->substr(3));
    requirement = "Install " + torch_requirement(value / 10, value % 10, list.rules) + ".";
  }
  list.add("log-no-kernel-image", scan.no_kernel, {{"detail", detail}, {"requirement", requirement}});
}

// A driver too old for the CUDA runtime: the fix from the driver <-> CUDA table, the minimum driver for the
// CUDA the framework needs. The CUDA runtime the log names is the failing run's; the installed framework's is
// this machine's.
void check_driver_too_old(FindingList& list, const LogScan& scan, const RunContext& ctx) {
  if (scan.driver_old.empty()) return;
  const RuleTable& rules = list.rules;
  const bool from_log = scan.runtime_cuda.has_value();
  const std::optional<std::string> wanted = from_log ? scan.runtime_cuda : ctx.framework_cuda;
  std::string fix;
  const std::string older =
      scan.driver_cuda ? fmt::format(", or install a framework build for CUDA {} or older", *scan.driver_cuda) : "";
  const CudaDriverFact* fact = wanted ? rules.min_driver_for(*Version::parse(*wanted)) : nullptr;
  if (fact) {
    fix = fmt::format("Install NVIDIA driver {} or newer (the minimum for CUDA {}, which {}){}.", fact->linux_driver,
                      fact->cuda.to_string(), from_log ? "the log names" : "the installed framework was built with",
                      older);
  } else {
    std::vector<std::string> per_major;
    const int driver_major = scan.driver_cuda ? Version::parse(*scan.driver_cuda)->major() : 0;
    for (int major = driver_major + 1; major <= 13; ++major) {
      if (const MinorCompatFact* c = rules.minor_compat(major)) {
        per_major.push_back(fmt::format("CUDA {}.x builds need driver {} or newer", major, c->linux_driver));
      }
    }
    fix = fmt::format(
        "Install the driver for the CUDA your framework was built with (python -c \"import torch; "
        "print(torch.version.cuda)\", or run gpusage doctor on that machine){}{}{}.",
        per_major.empty() ? "" : ": ", text::join(per_major, "; "), older);
  }
  Args args{{"count", std::to_string(scan.driver_old.size())},
            {"detail", wrapped(scan.driver_cuda, " (the driver supports CUDA up to ", ")")}};
  list.push(rules.make("log-driver-too-old", Category::log, args, evidence_of(scan.driver_old), fix),
            scan.driver_old.first_line());
}

// NCCL: when another error came first, the NCCL errors are the other ranks noticing that one died.
void check_nccl(FindingList& list, const LogScan& scan) {
  std::size_t nccl_first = 0;
  for (const Matches* m : {&scan.nccl_timeout, &scan.nccl_error}) {
    if (!m->empty()) nccl_first = nccl_first ? std::min(nccl_first, m->first_line()) : m->first_line();
  }
  std::optional<std::size_t> cause;
  for (std::size_t i = 0; i < list.out.size(); ++i) {
    if (list.out[i].severity != Severity::error) continue;
    if (list.first_line[i] < nccl_first && (!cause || list.first_line[i] < list.first_line[*cause])) cause = i;
  }
  if (nccl_first && cause) {
    std::size_t count = scan.nccl_timeout.size() + scan.nccl_error.size();
    const Matches& first = (!scan.nccl_timeout.empty() && scan.nccl_timeout.first_line() == nccl_first)
                               ? scan.nccl_timeout
                               : scan.nccl_error;
    list.out[*cause].evidence += fmt::format(
        "; then {} NCCL error/timeout line(s) as the other ranks waited for this one "
        "(a consequence, not a second problem), {}",
        count, evidence_of(first));
  } else {
    list.add("log-nccl-timeout", scan.nccl_timeout, {{"detail", wrapped(scan.nccl_timeout_detail, " (", ")")}});
    list.add("log-nccl-error", scan.nccl_error, {{"detail", wrapped(scan.nccl_error_detail, ": ", "")}});
  }
}

// cuDNN errors, unless they only say a handle could not start beside an OOM, or follow the wrong cuDNN.
void check_cudnn(FindingList& list, const LogScan& scan, bool any_oom) {
  bool cudnn_is_cascade = any_oom;
  for (const auto& s : scan.cudnn_statuses) cudnn_is_cascade = cudnn_is_cascade && is_init_status(s);
  cudnn_is_cascade = cudnn_is_cascade || !scan.cudnn_version.empty();
  if (cudnn_is_cascade) return;
  const std::string first_status = scan.cudnn_statuses.empty() ? std::string() : scan.cudnn_statuses.front();
  list.add("log-cudnn-error", scan.cudnn,
           {{"status", scan.cudnn_statuses.empty() ? "(no status)" : text::join(scan.cudnn_statuses)},
            {"advice", list.rules.cudnn_advice(first_status)}});
}

// A run that failed with an error no family explains (issue 54): said so, with the error quoted, rather than
// "no known failure". Not when any finding already names a problem.
void check_unrecognised(FindingList& list, const LogScan& scan) {
  if (!scan.final_error || list.has(Severity::error) || list.has(Severity::warning)) return;
  const LogLine& at = *scan.final_error;
  list.push(list.rules.make("log-unrecognised-error", Category::log,
                            {{"library", scan.final_error_library.value_or("an unknown library")},
                             {"line", std::to_string(at.line)}},
                            i18n::trf("line {}: {}", at.line, at.text)),
            at.line);
}

}  // namespace gpusage::diagnose
