#include "core/estimate/gpu_rates.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/i18n.hpp"

namespace gpusage::estimate {

namespace {

struct RateField {
  const char* name;
  std::optional<double> catalog::Gpu::*member;
};

constexpr RateField kRates[] = {
    {"tf32_tflops", &catalog::Gpu::tf32_tflops},
    {"fp16_tflops", &catalog::Gpu::fp16_tflops},
    {"bf16_tflops", &catalog::Gpu::bf16_tflops},
    {"fp8_tflops", &catalog::Gpu::fp8_tflops},
};

// Same SM design: same architecture and the same product line (GeForce vs data-center parts differ,
// e.g. GeForce Ada halves FP16 with FP32 accumulate, L40S does not).
bool same_sm(const catalog::Gpu& a, const catalog::Gpu& b) {
  auto geforce = [](const catalog::Gpu& g) {
    using F = catalog::Family;
    return g.family == F::rtx50 || g.family == F::rtx40 || g.family == F::rtx30;
  };
  return a.architecture == b.architecture && geforce(a) == geforce(b) && a.compute_capability == b.compute_capability &&
         !b.market && b.boost_clock_mhz;
}

}  // namespace

CompletedGpu complete_tensor_rates(const catalog::Gpu& gpu, const catalog::Catalog& catalog) {
  CompletedGpu out{gpu, {}};
  std::vector<std::string> derived;
  const catalog::Derivation* first = nullptr;
  for (const RateField& rate : kRates) {
    if (const catalog::Derivation* d = gpu.derivation(rate.name)) {
      if (!first) first = d;
      derived.push_back(
          fmt::format("{} {:.1f} = {} x {}", rate.name, d->value(), d->basis, catalog::ratio_text(d->ratio)));
    }
  }
  if (first) {
    // The rule reads NVIDIA's AI TOPS (ai_tops_rule) or the card's FP32 rate (tensor_rule, Turing).
    const std::string basis = first->basis_field == "ai_tops"
                                  ? i18n::trf("NVIDIA's {:g} AI TOPS", first->basis)
                                  : i18n::trf("its {:g} {}", first->basis, first->basis_field);
    out.notes.push_back(i18n::trf("{}: derived from {} by the catalog rule '{}' (no sibling model): {}", gpu.id, basis,
                                  first->rule, fmt::format("{}", fmt::join(derived, ", "))));
  }
  // Regional variants have cut AI rates, and a card without a boost clock cannot be scaled: what stays
  // unpublished runs at the FP32 rate, a lower bound, and the note says so.
  if (gpu.market || !gpu.boost_clock_mhz) {
    std::vector<std::string> missing;
    for (const RateField& rate : kRates) {
      if (!(gpu.*rate.member) && !gpu.is_unsupported(rate.name)) missing.emplace_back(rate.name);
    }
    if (!missing.empty()) {
      out.notes.push_back(
          i18n::trf("{}: NVIDIA publishes no {} and {}, so no sibling model: such math is planned "
                    "at the FP32 rate of {:.1f} TFLOPS (a lower bound)",
                    gpu.id, fmt::format("{}", fmt::join(missing, ", ")),
                    gpu.market ? i18n::trf("its AI rates are cut for its market ({})", *gpu.market)
                               : i18n::tr("no boost clock to scale by"),
                    gpu.fp32_tflops));
    }
    return out;
  }
  std::vector<std::string> modelled;
  const catalog::Gpu* used = nullptr;
  for (const RateField& rate : kRates) {
    if (out.gpu.*rate.member || gpu.is_unsupported(rate.name)) continue;
    for (const catalog::Gpu& sibling : catalog.gpus()) {
      if (sibling.id == gpu.id || !same_sm(sibling, gpu) || !(sibling.*rate.member)) continue;
      const double per_sm_mhz = *(sibling.*rate.member) / (sibling.sm_count * *sibling.boost_clock_mhz);
      out.gpu.*rate.member = per_sm_mhz * gpu.sm_count * *gpu.boost_clock_mhz;
      modelled.push_back(fmt::format("{} {:.1f}", rate.name, *(out.gpu.*rate.member)));
      used = &sibling;
      break;
    }
  }
  if (used) {
    std::string list;
    for (const auto& m : modelled) list += (list.empty() ? "" : ", ") + m;
    out.notes.push_back(
        i18n::trf("{}: no published tensor rate; modelled from {} per SM per MHz ({} SMs x {:.0f} "
                  "MHz): {}",
                  gpu.id, used->id, gpu.sm_count, *gpu.boost_clock_mhz, list));
  }
  return out;
}

}  // namespace gpusage::estimate
