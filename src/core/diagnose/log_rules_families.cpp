#include "core/diagnose/log_rules_families.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/diagnose/environment_rules.hpp"
#include "core/diagnose/error_codes.hpp"
#include "core/diagnose/log_rules.hpp"

namespace gpusage::diagnose {

namespace {

// The first code of `kind` the log named, as " (cudaErrorIllegalAddress (700): an illegal memory access …)".
std::string code_text(const LogScan& scan, ErrorKind kind) {
  for (const auto& s : scan.codes) {
    if (s.code.kind != kind) continue;
    return fmt::format(" ({}{})", s.code.label(), s.code.message.empty() ? "" : ": " + s.code.message);
  }
  return {};
}

// What the assert's condition says about the data, when it is one of PyTorch's well-known kernels.
std::string assert_hint(const std::optional<std::string>& condition) {
  if (!condition) return {};
  const std::string& c = *condition;
  if (c.find("n_classes") != std::string::npos) {
    return "The loss got a class label outside [0, num_classes): compare num_classes with the labels' range. ";
  }
  if (c.find("srcIndex < srcSelectDimSize") != std::string::npos) {
    return "An embedding or index_select got an index >= its table size (a token id >= the vocabulary size). ";
  }
  if (c.find("index out of bounds") != std::string::npos) return "A tensor was indexed out of bounds. ";
  if (c.find("input_val >= zero && input_val <= one") != std::string::npos) {
    return "BCELoss got an input outside [0, 1]: apply sigmoid first, or use BCEWithLogitsLoss. ";
  }
  return {};
}

// What to install for a compiler that rejected `arch` ("sm_120", "sm_121a").
std::string toolchain_requirement(const std::string& arch, const RuleTable& rules) {
  const int value = std::atoi(arch.c_str() + 3);
  const int major = value / 10;
  const int minor = value % 10;
  const ArchitectureFact* fact = rules.architecture(major, minor);
  if (!fact) {
    return fmt::format(
        "Use a CUDA toolkit whose ptxas supports {} (the CUDA release notes list each "
        "architecture's first toolkit).",
        arch);
  }
  return fmt::format("{} ({}) needs CUDA {} or newer; for PyTorch, {}.", arch, fact->name, fact->first_cuda.to_string(),
                     torch_requirement(major, minor, rules));
}

// The lines that show DataLoader workers failing to start under the spawn start method: the spawn frames or the
// bootstrapping message; else a broken pipe while a DataLoader starts its workers; else a Windows traceback whose
// last frame starts a worker (the paste ends there). Empty when the log shows none of these.
const Matches& spawn_failure(const LogScan& scan) {
  static const Matches none;
  if (!scan.dataloader_spawn.empty()) return scan.dataloader_spawn;
  if (!scan.broken_pipe.empty() && scan.dataloader_frames) return scan.broken_pipe;
  if (scan.worker_start_trailing && scan.windows_paths) return scan.worker_start;
  return none;
}

}  // namespace

std::string evidence_of(const Matches& matches) {
  if (matches.empty()) return {};
  std::string s = i18n::trf("line {}: {}", matches.front().line, matches.front().text);
  if (matches.size() > 1) {
    std::vector<std::string> more;
    for (std::size_t i = 1; i < matches.kept().size(); ++i) more.push_back(std::to_string(matches[i].line));
    s += i18n::trn("; {} more at line {}{}", "; {} more at lines {}{}", matches.size() - 1, matches.size() - 1,
                   text::join(more), matches.size() > matches.kept().size() ? ", …" : "");
  }
  return s;
}

bool xla_oom_is_jax(const LogScan& scan) {
  if (scan.jax_oom.empty()) return false;
  // A TensorFlow log says so (ResourceExhaustedError, "OOM when allocating tensor"); JAX's says jax.
  return scan.jax_seen || !scan.tf_python_seen || scan.tf_oom_count == 0;
}

std::vector<PlacedFinding> check_error_families(const LogScan& scan, const RuleTable& rules) {
  std::vector<PlacedFinding> out;
  auto add = [&](const char* id, const Matches& matches, Args args) {
    if (matches.empty()) return;
    args.emplace_back("count", std::to_string(matches.size()));
    out.push_back({rules.make(id, Category::log, args, evidence_of(matches)), matches.first_line()});
  };
  add("log-driver-mismatch", scan.driver_mismatch, {});
  add("log-illegal-memory-access", scan.illegal_address, {{"code", code_text(scan, ErrorKind::illegal_memory_access)}});
  add("log-device-assert", scan.device_assert,
      {{"detail", scan.assert_condition ? fmt::format(": Assertion `{}` failed", *scan.assert_condition) : ""},
       {"hint", assert_hint(scan.assert_condition)}});
  if (xla_oom_is_jax(scan)) {
    const std::string summary = scan.jax_requested_bytes
                                    ? fmt::format(": {} could not be allocated", format_size(*scan.jax_requested_bytes))
                                    : std::string();
    add("log-jax-oom", scan.jax_oom, {{"summary", summary}});
  }
  std::string versions;
  if (scan.cudnn_loaded && scan.cudnn_compiled) {
    versions = fmt::format(": loaded {}, built with {}", *scan.cudnn_loaded, *scan.cudnn_compiled);
  }
  add("log-cudnn-version-mismatch", scan.cudnn_version, {{"detail", versions}});
  const std::string requirement = scan.toolchain_arch
                                      ? toolchain_requirement(*scan.toolchain_arch, rules)
                                      : std::string("Use a CUDA toolkit whose ptxas supports this GPU's architecture.");
  add("log-arch-unsupported", scan.arch_unsupported,
      {{"detail", scan.toolchain_arch ? " (" + *scan.toolchain_arch + ")" : ""}, {"requirement", requirement}});
  add("log-gpu-too-old", scan.gpu_too_old,
      {{"library", scan.gpu_too_old_library.value_or("A kernel library")},
       {"detail", scan.gpu_too_old_detail ? ": " + *scan.gpu_too_old_detail : ""}});
  add("log-dataloader-spawn", spawn_failure(scan), {});
  return out;
}

std::vector<PlacedFinding> check_generic_codes(const LogScan& scan, const RuleTable& rules) {
  std::vector<PlacedFinding> out;
  if (scan.code_errors.empty()) return out;
  for (const auto& s : scan.codes) {
    const ErrorCode& c = s.code;
    if (c.kind != ErrorKind::cuda_error && c.kind != ErrorKind::xla_error) continue;
    if (out.size() == 3) break;  // a log naming more is a cascade; the first ones tell the story
    const bool cuda = c.kind == ErrorKind::cuda_error;
    const Args args{{"count", std::to_string(s.lines.size())},
                    {"code", c.label()},
                    {"meaning", c.message.empty() ? c.name : c.message},
                    {"advice", i18n::tr(c.fix.c_str())}};  // extracted from error_codes.toml
    out.push_back({rules.make(cuda ? "log-cuda-error" : "log-xla-error", Category::log, args, evidence_of(s.lines)),
                   s.lines.first_line()});
  }
  return out;
}

}  // namespace gpusage::diagnose
