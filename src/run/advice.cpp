#include "run/advice.hpp"

#include <regex>
#include <string>

#include "core/common/i18n.hpp"

namespace gpusage::run {

namespace {

bool mixed_precision(const RunPractice& p) {
  return p.precision && (*p.precision == catalog::Precision::bf16 || *p.precision == catalog::Precision::fp16);
}
bool bf16(const RunPractice& p) { return p.precision == catalog::Precision::bf16; }

// A clause of a rule's fix (data/doctor/rules.toml, or the OOM plan of core/diagnose/log_rules.cpp) and what it
// becomes when the run already follows it. tests/unit/run/advice_test.cpp runs the real rules, so a rule whose
// wording changes fails there instead of slipping through.
struct Rewrite {
  bool (*applies)(const RunPractice&);
  const char* clause;
  const char* replacement;
};

// log_rules.cpp's sentence (the same msgid, so the same translation).
constexpr const char* kCheckpointingSentence =
    "Activation checkpointing (torch.utils.checkpoint) would allow batch {}.";

// The clauses are marked (i18n::N_) and matched in the reader's language, as the fix was written in it.
const Rewrite kRewrites[] = {
    // log-non-finite
    {bf16, i18n::N_(", prefer bf16 to fp16 where the GPU supports it,"), i18n::N_(",")},
    // log-overflow-skips
    {bf16, i18n::N_("Use bf16 autocast if the GPU supports it, lower the learning rate, or clip gradients."),
     i18n::N_("Lower the learning rate, or clip gradients.")},
    // log-loss-scale-collapse
    {bf16, i18n::N_("Train in bf16 autocast where the GPU supports it (no loss scaling needed); otherwise lower"),
     i18n::N_("Lower")},
    // log-cuda-oom without a model: the generic fix
    {[](const RunPractice& p) { return mixed_precision(p) && p.checkpointing; },
     i18n::N_("; use mixed precision (torch.autocast) or activation checkpointing."), i18n::N_(".")},
    {mixed_precision, i18n::N_("; use mixed precision (torch.autocast) or activation checkpointing."),
     i18n::N_("; use activation checkpointing.")},
    {[](const RunPractice& p) { return p.checkpointing; },
     i18n::N_("; use mixed precision (torch.autocast) or activation checkpointing."),
     i18n::N_("; use mixed precision (torch.autocast).")},
};

// A regular expression for a message with one {} field that stands for a whole number.
std::string sentence_pattern(const std::string& message) {
  static const std::regex special(R"([.^$|()\[\]*+?\\{}])");
  std::string escaped = std::regex_replace(message, special, R"(\$&)");
  const std::string field = R"(\{\})";
  if (auto at = escaped.find(field); at != std::string::npos) escaped.replace(at, field.size(), R"(\d+)");
  return escaped;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

RunPractice practice_of(const RunRequest& request) {
  RunPractice p;
  p.precision = request.context.precision;
  if (request.expectation) {
    const std::string& policy = request.expectation->setup.checkpointing;  // empty or "none": no checkpointing
    p.checkpointing = !policy.empty() && policy != "none";
  }
  return p;
}

void drop_followed_advice(diagnose::Finding& f, const RunPractice& practice) {
  for (const Rewrite& r : kRewrites)
    if (r.applies(practice)) replace_all(f.fix, i18n::tr(r.clause), i18n::tr(r.replacement));
  // log-cuda-oom with a model: the OOM plan offers checkpointing whatever the run does (it knows only the
  // precision).
  // The sentence is matched in the reader's language: the fix was written in it.
  if (practice.checkpointing) {
    const std::regex checkpointing(" ?" + sentence_pattern(i18n::tr(kCheckpointingSentence)));
    f.fix = std::regex_replace(f.fix, checkpointing, "");
  }
}

void drop_followed_advice(std::vector<diagnose::Finding>& findings, const RunPractice& practice) {
  for (auto& f : findings) drop_followed_advice(f, practice);
}

}  // namespace gpusage::run
