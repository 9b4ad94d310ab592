// What a plan assumed because the setup did not say: each default that changes the numbers, with why it is the
// default (what the card supports, what the frameworks people train with do). plan prints them as "assumed: ..."
// lines and lists them in its JSON, so that no default is silent.
#include "core/setup/assumptions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::setup {

namespace {

// "A, B, C, D and 3 more": a few card names, not a wall of them.
std::string some_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 4;
  if (names.size() <= kShown) return text::join(names, ", ");
  const std::vector<std::string> shown(names.begin(), names.begin() + kShown);
  return i18n::trf("{} and {} more", text::join(shown, ", "), names.size() - kShown);
}

// One line per precision chosen: why each card got it.
std::vector<std::string> precision_assumptions(const estimate::Sweep& sweep) {
  std::vector<std::pair<catalog::Precision, std::vector<const catalog::Gpu*>>> by_precision;  // first seen first
  std::vector<std::string> seen;  // by id: a card planned at two GPU counts has two records
  for (const auto& p : sweep.predictions) {
    if (std::find(seen.begin(), seen.end(), p.gpu->id) != seen.end()) continue;
    seen.push_back(p.gpu->id);
    auto it = std::find_if(by_precision.begin(), by_precision.end(),
                           [&](const auto& entry) { return entry.first == p.config.precision; });
    if (it == by_precision.end()) it = by_precision.insert(by_precision.end(), {p.config.precision, {}});
    it->second.push_back(p.gpu);
  }
  std::vector<std::string> out;
  for (const auto& [precision, gpus] : by_precision) {
    const bool bf16 = precision == catalog::Precision::bf16;
    if (gpus.size() == 1) {
      const catalog::Gpu& gpu = *gpus.front();
      out.push_back(bf16 ? i18n::trf("bf16 autocast because the {} supports it (compute capability {}); "
                                     "without --precision: bf16 where the card has it, else fp16",
                                     gpu.name, gpu.compute_capability)
                         : i18n::trf("fp16 autocast with a loss scaler because the {} has no bfloat16 (compute "
                                     "capability {}, below 8.0); without --precision: bf16 where the card has it",
                                     gpu.name, gpu.compute_capability));
      continue;
    }
    std::vector<std::string> names;
    for (const catalog::Gpu* gpu : gpus) names.push_back(gpu->name);
    out.push_back(bf16 ? i18n::trf("bf16 autocast on the {} cards that support it (compute capability 8.0 or "
                                   "later): {}",
                                   gpus.size(), some_names(names))
                       : i18n::trf("fp16 autocast with a loss scaler on the {} cards without bfloat16 (compute "
                                   "capability below 8.0): {}",
                                   gpus.size(), some_names(names)));
  }
  return out;
}

std::string shape_assumption(const TrainingSetup& setup, const workload::Workload& w) {
  if (!setup.workload_file.empty()) return "";
  if (w.domain == workload::Domain::vision) {
    if (setup.resolution) return "";
    return i18n::trf("{} px images because no --resolution was given (the model's usual input)", w.resolution);
  }
  if (setup.seq_len) return "";
  if (w.seq_len == kDefaultLanguageSeqLen) {
    return i18n::trf(
        "{} tokens per sample because no --seq-len was given (LLaMA-Factory's default cutoff_len, the "
        "max_seq_length of Unsloth's notebooks; TRL's SFTConfig cuts at 1024), not the model's full context",
        w.seq_len);
  }
  return i18n::trf("{} tokens per sample (the model's context) because no --seq-len was given", w.seq_len);
}

std::vector<std::string> recipe_assumptions(const TrainingSetup& setup, const workload::Workload& w) {
  const TrainingSetup defaults;
  const bool language = w.domain == workload::Domain::language;
  std::vector<std::string> out;
  if (setup.checkpointing.empty()) {
    out.push_back(language ? i18n::tr("no activation checkpointing because --checkpointing was not given (the "
                                      "Hugging Face Trainer's default, gradient_checkpointing=False)")
                           : i18n::tr("no activation checkpointing because --checkpointing was not given (as "
                                      "torchvision's reference classification recipe trains)"));
  }
  if (setup.optimizer.empty()) {
    out.push_back(language ? i18n::tr("AdamW with fp32 states because no --optimizer was given (the Hugging Face "
                                      "Trainer's default optim, adamw_torch)")
                           : i18n::tr("SGD with momentum because no --optimizer was given (torchvision's "
                                      "reference classification recipe)"));
  }
  if (setup.optimizer_impl == defaults.optimizer_impl) {
    out.push_back(
        i18n::tr("the foreach optimizer step (torch.optim's default on CUDA); --optimizer-impl fused "
                 "for fused=True"));
  }
  if (language && setup.kernels == defaults.kernels && setup.loss == defaults.loss) {
    out.push_back(
        i18n::tr("Hugging Face's eager elementwise kernels and fp32 loss (--kernels eager --loss plain): "
                 "no Liger, Unsloth or torch.compile"));
  }
  if (language && !setup.no_flash_attention) {
    out.push_back(
        i18n::tr("memory-efficient attention (FlashAttention or PyTorch's SDPA): no s x s "
                 "probabilities kept; --no-flash-attention for eager attention"));
  }
  return out;
}

}  // namespace

std::vector<std::string> assumptions(const TrainingSetup& setup, const estimate::Sweep& sweep) {
  std::vector<std::string> out;
  if (setup.precision == "auto") out = precision_assumptions(sweep);
  if (std::string shape = shape_assumption(setup, sweep.workload); !shape.empty()) out.push_back(std::move(shape));
  for (std::string& line : recipe_assumptions(setup, sweep.workload)) out.push_back(std::move(line));
  return out;
}

}  // namespace gpusage::setup
