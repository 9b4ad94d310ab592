// The doctor's rule table, loaded from data/doctor/rules.toml (compiled in): minimum drivers per CUDA
// version, compute capabilities per architecture, thresholds, and the text of every rule with its source.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnose/finding.hpp"

namespace gpusage::diagnose {

// A dotted version ("12.8", "570.124.06", "2.7.1+cu128" -> 2.7.1). Compares part by part, missing parts
// count as 0 (12.8 == 12.8.0).
struct Version {
  std::vector<int> parts;
  static std::optional<Version> parse(std::string_view text);
  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() < 2 ? 0 : parts[1]; }
  std::string to_string() const;
  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }
};

struct SourceRef {
  std::string title;
  std::string url;
};

struct CudaDriverFact {
  Version cuda;
  std::string linux_driver;  // minimum Linux x86_64 driver, "570.26"
  std::string source;
};

struct MinorCompatFact {
  int cuda_major = 0;
  std::string linux_driver;
  std::string source;
};

struct ArchitectureFact {
  int major = 0;
  int minor = 0;
  std::string name;  // "Blackwell (GeForce RTX 50, RTX PRO 6000)"
  Version first_cuda;
  std::optional<Version> dropped_in_cuda;
  std::optional<std::string> pytorch_min;    // first PyTorch release with wheels for it, where stated
  std::optional<std::string> pytorch_wheel;  // wheel index tag, "cu128"
  std::vector<std::string> sources;
  std::string sm() const { return std::to_string(major) + std::to_string(minor); }  // "120"
};

struct RuleText {
  std::string id;
  Severity severity = Severity::info;
  std::string title;
  std::string evidence;
  std::string fix;
  std::string source;
};

struct Thresholds {
  double grad_norm_explosion_factor = 10;
  int grad_norm_min_history = 5;
  double fragmentation_fraction = 0.1;
  int overflow_skips = 20;
  double loss_scale_floor = 8;
  double python_timeout_s = 2;
};

// Named values for a rule's {placeholders}.
using Args = std::vector<std::pair<std::string, std::string>>;

class RuleTable {
 public:
  // Throws InputError naming `origin` and the entry for a malformed table.
  static RuleTable parse(std::string_view toml_text, const std::string& origin);
  // The table compiled in from data/doctor/rules.toml.
  static const RuleTable& builtin();

  const std::vector<CudaDriverFact>& cuda_drivers() const { return cuda_drivers_; }
  const std::vector<ArchitectureFact>& architectures() const { return architectures_; }
  const std::vector<RuleText>& rules() const { return rules_; }
  const Thresholds& thresholds() const { return thresholds_; }

  // Throws std::logic_error for an id or key the table lacks (a bug, not a user mistake).
  const RuleText& rule(std::string_view id) const;
  const SourceRef& source(std::string_view key) const;
  bool has_source(std::string_view key) const;

  // The architecture of compute capability major.minor, when the table knows it.
  const ArchitectureFact* architecture(int major, int minor) const;
  // The minimum driver for a CUDA version: the entry for its major.minor, else the newest entry below it.
  const CudaDriverFact* min_driver_for(const Version& cuda) const;
  const MinorCompatFact* minor_compat(int cuda_major) const;
  // Advice for a cuDNN status name ("CUDNN_STATUS_NOT_SUPPORTED"), or the default.
  std::string cudnn_advice(std::string_view status) const;

  // A finding from rule `id`: its title, evidence and fix with the placeholders filled from `args`.
  // `evidence` and `fix` replace the rule's templates when not empty. `source_key` overrides its source.
  Finding make(std::string_view id, Category category, const Args& args, std::string evidence = {},
               std::string fix = {}, std::string_view source_key = {}) const;

 private:
  std::vector<CudaDriverFact> cuda_drivers_;  // newest first, as in the file
  std::vector<MinorCompatFact> minor_compat_;
  std::vector<ArchitectureFact> architectures_;
  std::vector<RuleText> rules_;
  std::vector<std::pair<std::string, SourceRef>> sources_;
  std::vector<std::pair<std::string, std::string>> cudnn_advice_;
  std::string cudnn_default_advice_;
  Thresholds thresholds_;
};

// Fills {name} placeholders of an fmt template. Throws std::logic_error naming the template when a
// placeholder has no value.
std::string fill(std::string_view pattern, const Args& args);

}  // namespace gpusage::diagnose
