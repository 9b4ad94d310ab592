// Derived figures (AI TOPS x the architecture's ratio), unsupported vs unpublished, and the filled holes,
// on the built-in catalog (data/gpus.toml) and on small catalogs written here.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/estimate/gpu_rates.hpp"

namespace gpusage::catalog {
namespace {

const Catalog& builtin() { return Catalog::builtin(); }

FigureStatus status(const Gpu& gpu, const char* field) { return figure_status(gpu, *find_field(field)); }

TEST(CatalogDerivation, TheRuleReproducesEveryPublishedFigureOfACardWithAiTops) {
  // Every card that has both a direct (sourced) tensor figure and NVIDIA's AI TOPS: the rule's ratio times
  // the AI TOPS gives the direct figure, to the rounding of NVIDIA's whole-number AI TOPS (RTX PRO 6000:
  // "4,000" for 4,030).
  std::set<std::string> cards, rules_checked;
  int comparisons = 0;
  for (const Gpu& gpu : builtin().gpus()) {
    if (!gpu.ai_tops) continue;
    const DerivationRule* rule = builtin().rule(*gpu.ai_tops_rule);
    ASSERT_NE(rule, nullptr) << gpu.id;
    for (const auto& [field, ratio] : rule->ratios) {
      if (status(gpu, field.c_str()) != FigureStatus::sourced) continue;
      const double direct = *find_field(field)->number(gpu);
      EXPECT_NEAR(*gpu.ai_tops * ratio, direct, direct * 0.01) << gpu.id << " " << field;
      cards.insert(gpu.id);
      rules_checked.insert(rule->id);
      ++comparisons;
    }
  }
  // RTX 5090, 5080, 5070 Ti, 5070, 5060 Ti x2, 5060 (FP4), 4090, 4080, 3090, 3080, 3070, RTX PRO 6000,
  // RTX 6000 Ada.
  EXPECT_EQ(cards, (std::set<std::string>{"rtx5090", "rtx5080", "rtx5070ti", "rtx5070", "rtx5060ti-16gb",
                                          "rtx5060ti-8gb", "rtx5060", "rtx4090", "rtx4080", "rtx3090",
                                          "rtx3080-10gb", "rtx3070", "rtxpro6000", "rtx6000ada"}));
  EXPECT_EQ(rules_checked, (std::set<std::string>{"blackwell-geforce", "ada-geforce", "ampere-geforce",
                                                  "blackwell-rtx-pro", "ada-rtx-pro"}));
  EXPECT_EQ(comparisons, 4 * 8 + 3 + 2 * 7 + 3 * 5 + 6 + 5);
}

TEST(CatalogDerivation, EveryDerivedFigureIsTheAiTopsTimesItsRatio) {
  int derived = 0;
  for (const Gpu& gpu : builtin().gpus()) {
    for (const Derivation& d : gpu.derivations) {
      const DerivationRule* rule = builtin().rule(d.rule);
      ASSERT_NE(rule, nullptr);
      double ratio = 0;
      for (const auto& [field, r] : rule->ratios) {
        if (field == d.field) ratio = r;
      }
      // The basis is NVIDIA's AI TOPS (ai_tops_rule) or the card's FP32 rate (tensor_rule).
      const double basis = rule->basis_field == "ai_tops" ? *gpu.ai_tops : gpu.fp32_tflops;
      EXPECT_EQ(d.basis_field, rule->basis_field) << gpu.id;
      EXPECT_EQ(d.basis, basis) << gpu.id;
      EXPECT_EQ(d.ratio, ratio) << gpu.id << " " << d.field;
      EXPECT_EQ(*find_field(d.field)->number(gpu), basis * ratio) << gpu.id << " " << d.field;
      ++derived;
    }
  }
  EXPECT_GT(derived, 100);
}

// The FP32-based rules against the cards whose whitepaper tables give both figures: the Turing rule against the
// RTX 2080 Ti, 2080 and 2070 (Turing whitepaper, Appendix A), the Ampere and Ada ones against the RTX 3090 and 4090
// (GA102 and Ada whitepapers), to the whitepapers' rounding.
TEST(CatalogDerivation, TheFp32RulesReproduceTheWhitepaperTables) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> rules{
      {"turing-geforce", {"rtx2080ti", "rtx2080", "rtx2070"}},
      {"ampere-geforce-fp32", {"rtx3090"}},
      {"ada-geforce-fp32", {"rtx4090"}},
  };
  int comparisons = 0;
  for (const auto& [rule_id, cards] : rules) {
    const DerivationRule* rule = builtin().rule(rule_id);
    ASSERT_NE(rule, nullptr) << rule_id;
    EXPECT_EQ(rule->basis_field, "fp32_tflops");
    for (const std::string& id : cards) {
      const Gpu& gpu = builtin().resolve(id);
      for (const auto& [field, ratio] : rule->ratios) {
        EXPECT_EQ(status(gpu, field.c_str()), FigureStatus::sourced) << id << " " << field;
        const double published = *find_field(field)->number(gpu);
        EXPECT_NEAR(gpu.fp32_tflops * ratio, published, published * 0.01) << id << " " << field;
        ++comparisons;
      }
    }
  }
  EXPECT_EQ(comparisons, 9 + 5 + 7);
  // The derived cards: the RTX 2060's FP16 tensor rate with FP32 accumulate is 4x its 6.45 FP32 TFLOPS.
  const Gpu& rtx2060 = builtin().resolve("rtx2060");
  EXPECT_EQ(status(rtx2060, "fp16_tflops"), FigureStatus::derived);
  EXPECT_DOUBLE_EQ(*rtx2060.fp16_tflops, rtx2060.fp32_tflops * 4);
}

// Pascal and the GTX 16 cards have no tensor cores: every tensor rate is unsupported, not unpublished.
TEST(CatalogDerivation, CardsWithoutTensorCoresSupportNoTensorRate) {
  for (const char* id : {"gtx1080ti", "gtx1660super", "p40", "p100-pcie-16gb"}) {
    const Gpu& gpu = builtin().resolve(id);
    for (const char* field : {"tf32_tflops", "fp16_tflops", "bf16_tflops", "int8_tops"}) {
      EXPECT_EQ(status(gpu, field), FigureStatus::unsupported) << id << " " << field;
    }
    EXPECT_FALSE(gpu.supports(Precision::fp16)) << id;
  }
  EXPECT_EQ(status(builtin().resolve("rtx2060"), "bf16_tflops"), FigureStatus::unsupported);  // cc 7.5
}

TEST(CatalogDerivation, EveryRtx50And40CardAndAllBut3080_12GbOf30HaveAnFp16Figure) {
  for (Family family : {Family::rtx50, Family::rtx40, Family::rtx30}) {
    for (const Gpu* gpu : builtin().family(family)) {
      if (gpu->id == "rtx3080-12gb") continue;  // no AI TOPS of its own on NVIDIA's pages: the planner models it
      EXPECT_TRUE(gpu->fp16_tflops.has_value()) << gpu->id;
      const FigureStatus s = status(*gpu, "fp16_tflops");
      EXPECT_TRUE(s == FigureStatus::sourced || s == FigureStatus::derived) << gpu->id;
    }
  }
}

TEST(CatalogDerivation, BudgetCardsGetTheirRatesFromAiTops) {
  const Gpu& rtx5060ti = builtin().resolve("rtx5060ti-16gb");  // 759 AI TOPS
  EXPECT_EQ(status(rtx5060ti, "fp16_tflops"), FigureStatus::derived);
  EXPECT_DOUBLE_EQ(*rtx5060ti.fp16_tflops, 759.0 / 16);
  EXPECT_DOUBLE_EQ(*rtx5060ti.fp8_tflops, 759.0 / 8);
  EXPECT_EQ(status(rtx5060ti, "fp4_tflops"), FigureStatus::sourced);  // NVIDIA's own 379.5 stays
  const Gpu& rtx5050 = builtin().resolve("rtx5050");  // 421 AI TOPS
  EXPECT_DOUBLE_EQ(*rtx5050.fp4_tflops, 210.5);
  EXPECT_EQ(status(rtx5050, "fp4_tflops"), FigureStatus::derived);
  const Gpu& rtx4060 = builtin().resolve("rtx4060");  // 242 AI TOPS, sparse FP8
  EXPECT_DOUBLE_EQ(*rtx4060.fp16_tflops, 242.0 / 8);
  EXPECT_EQ(status(rtx4060, "fp4_tflops"), FigureStatus::unsupported);
}

TEST(CatalogDerivation, ExportVariantsDeriveFromTheirOwnCutAiTops) {
  EXPECT_DOUBLE_EQ(*builtin().resolve("rtx5090d").fp16_tflops, 2375.0 / 16);  // the 5090: 209.5 published
  EXPECT_DOUBLE_EQ(*builtin().resolve("rtx5090d-v2").fp16_tflops, 2375.0 / 16);
  EXPECT_DOUBLE_EQ(*builtin().resolve("rtx4090d").fp16_tflops, 1177.0 / 8);
  EXPECT_EQ(*builtin().resolve("rtx5090d").variant_of, "rtx5090");
  EXPECT_EQ(*builtin().resolve("h20").market, "China");
}

TEST(CatalogStatus, UnsupportedIsTheHardwareAndUnpublishedIsTheSpecSheet) {
  EXPECT_EQ(status(builtin().resolve("rtx3090"), "fp8_tflops"), FigureStatus::unsupported);  // Ampere, 8.6
  EXPECT_EQ(status(builtin().resolve("rtx3090"), "fp16_tflops"), FigureStatus::sourced);
  EXPECT_EQ(status(builtin().resolve("v100-sxm2-16gb"), "bf16_tflops"), FigureStatus::unsupported);  // 7.0
  EXPECT_EQ(status(builtin().resolve("v100-sxm2-16gb"), "int8_tops"), FigureStatus::unsupported);
  EXPECT_EQ(status(builtin().resolve("t4"), "fp8_tflops"), FigureStatus::unsupported);
  EXPECT_EQ(status(builtin().resolve("h100-sxm5-80gb"), "fp4_tflops"), FigureStatus::unsupported);
  EXPECT_EQ(status(builtin().resolve("l20"), "fp16_tflops"), FigureStatus::unpublished);
  EXPECT_EQ(status(builtin().resolve("rtx5090"), "fp16_tflops"), FigureStatus::sourced);
  EXPECT_EQ(status(builtin().resolve("rtx4080super"), "fp16_tflops"), FigureStatus::derived);
}

TEST(CatalogStatus, DerivedMetricsFollowTheirTensorInput) {
  const Gpu& rtx4070 = builtin().resolve("rtx4070");
  EXPECT_EQ(find_metric("fp16_tflops_per_usd", "t").status(rtx4070), FigureStatus::derived);
  EXPECT_EQ(find_metric("fp32_tflops_per_usd", "t").status(rtx4070), FigureStatus::sourced);
  EXPECT_EQ(find_metric("fp16_tflops_per_usd", "t").status(builtin().resolve("l20")), FigureStatus::unpublished);
}

TEST(CatalogHoles, FilledWithTheirSources) {
  EXPECT_EQ(*builtin().resolve("rtx5070").base_clock_mhz, 2160);
  EXPECT_EQ(builtin().resolve("b200").memory_bus_bits, 7680);
  // GA102 runs FP64 at 1/64 of FP32 on the RTX A6000 as on the RTX 3090.
  const Gpu& a6000 = builtin().resolve("rtxa6000");
  const Gpu& rtx3090 = builtin().resolve("rtx3090");
  EXPECT_NEAR(*a6000.fp64_tflops / a6000.fp32_tflops, 1.0 / 64, 0.0005);
  EXPECT_NEAR(*rtx3090.fp64_tflops / rtx3090.fp32_tflops, 1.0 / 64, 0.0005);
}

TEST(CatalogGroups, ChinaSelectsTheExportVariantsInCatalogOrder) {
  std::vector<std::string> ids;
  for (const Gpu* gpu : builtin().select("china")) ids.push_back(gpu->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"rtx5090d", "rtx5090d-v2", "rtx4090d", "l20", "h20", "a800-sxm4-80gb",
                                           "a800-pcie-80gb", "a800-pcie-40gb", "h800-sxm5-80gb", "h800-pcie-80gb"}));
}

TEST(CatalogGroups, WorkstationHasTheRtxProLineAndDgxSpark) {
  std::set<std::string> ids;
  for (const Gpu* gpu : builtin().family(Family::workstation)) ids.insert(gpu->id);
  for (const char* id : {"rtxpro6000", "rtxpro5000", "rtxpro4500", "rtxpro4000", "gb10", "rtx6000ada", "rtxa6000"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

TEST(CatalogConsistency, Fp32IsTwiceCudaCoresTimesBoostClock) {
  // An FMA is two FLOPs per CUDA core per clock: a typo in cores, clock or FP32 shows here.
  for (const Gpu& gpu : builtin().gpus()) {
    if (!gpu.boost_clock_mhz) continue;
    EXPECT_NEAR(gpu.fp32_tflops, 2.0 * gpu.cuda_cores * *gpu.boost_clock_mhz / 1e6, gpu.fp32_tflops * 0.015)
        << gpu.id;
  }
}

// ---- the planner's rates: derived figures are used as they are, and said so -----------------------------

TEST(PlannerRates, ADerivedRateIsUsedAndNamedNeverModelledFromASibling) {
  const estimate::CompletedGpu rtx4070 = estimate::complete_tensor_rates(builtin().resolve("rtx4070"), builtin());
  EXPECT_DOUBLE_EQ(*rtx4070.gpu.fp16_tflops, 466.0 / 8);
  ASSERT_EQ(rtx4070.notes.size(), 1u);
  EXPECT_EQ(rtx4070.notes[0],
            "rtx4070: derived from NVIDIA's 466 AI TOPS by the catalog rule 'ada-geforce' (no sibling model): "
            "tf32_tflops 29.1 = 466 x 1/16, fp16_tflops 58.2 = 466 x 1/8, bf16_tflops 58.2 = 466 x 1/8, "
            "fp8_tflops 116.5 = 466 x 1/4");
}

TEST(PlannerRates, ACardWithNeitherIsModelledFromItsSibling) {
  const estimate::CompletedGpu rtx3080 =
      estimate::complete_tensor_rates(builtin().resolve("rtx3080-12gb"), builtin());
  ASSERT_TRUE(rtx3080.gpu.fp16_tflops.has_value());
  ASSERT_EQ(rtx3080.notes.size(), 1u);
  EXPECT_TRUE(rtx3080.notes[0].starts_with("rtx3080-12gb: no published tensor rate; modelled from rtx3090"))
      << rtx3080.notes[0];
  EXPECT_FALSE(rtx3080.gpu.fp8_tflops.has_value());  // Ampere has none to model
}

TEST(PlannerRates, AnExportVariantIsNeverModelledFromAnUncutSibling) {
  // The L20 (AD102, China) has no published tensor table; scaling the L40S per SM would overstate it.
  const estimate::CompletedGpu l20 = estimate::complete_tensor_rates(builtin().resolve("l20"), builtin());
  EXPECT_FALSE(l20.gpu.fp16_tflops.has_value());
  ASSERT_EQ(l20.notes.size(), 1u);
  EXPECT_EQ(l20.notes[0],
            "l20: NVIDIA publishes no tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops and its AI rates are cut for "
            "its market (China), so no sibling model: such math is planned at the FP32 rate of 59.4 TFLOPS (a lower "
            "bound)");
}

// ---- validation of rules and of the cards that use them ------------------------------------------------

const char* kCard = R"(
[[gpu]]
id = "card"
name = "Card"
family = "rtx30"
architecture = "Ampere"
chip = "GA102"
compute_capability = "8.6"
sm_count = 82
cuda_cores = 10496
boost_clock_mhz = 1695
memory_gb = 24
memory_type = "GDDR6X"
memory_bus_bits = 384
memory_bandwidth_gbs = 936
tdp_w = 350
fp32_tflops = 35.6
launch_date = "2020-09"
sources = [ { title = "sheet", url = "https://example.invalid/card" } ]
)";

const char* kRule = R"(schema_version = 1
[[derivation]]
id = "r"
basis = "sparse FP16 TOPS"
ratios = { fp16_tflops = "1/4", tf32_tflops = 0.125 }
sources = [ { title = "whitepaper", url = "https://example.invalid/wp" } ]
[[support]]
fields = ["fp8_tflops"]
min_compute_capability = "8.9"
sources = [ { title = "ptx", url = "https://example.invalid/ptx" } ]
)";

std::string load_error(const std::string& text) {
  try {
    Catalog::parse(text, "rules.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CatalogRules, ARuleFillsOnlyWhatIsNotPublished) {
  Catalog c = Catalog::parse(std::string(kRule) + kCard + "ai_tops = 284\nai_tops_rule = \"r\"\nfp16_tflops = 71\n",
                             "rules.toml");
  const Gpu& gpu = c.gpus().front();
  EXPECT_EQ(*gpu.fp16_tflops, 71);
  EXPECT_EQ(status(gpu, "fp16_tflops"), FigureStatus::sourced);
  EXPECT_EQ(*gpu.tf32_tflops, 284 * 0.125);
  EXPECT_EQ(status(gpu, "tf32_tflops"), FigureStatus::derived);
  EXPECT_EQ(status(gpu, "fp8_tflops"), FigureStatus::unsupported);
  EXPECT_EQ(status(gpu, "bf16_tflops"), FigureStatus::unpublished);
}

TEST(CatalogRules, AiTopsNeedsItsRule) {
  EXPECT_EQ(load_error(std::string(kRule) + kCard + "ai_tops = 284\n"),
            "rules.toml: gpu 'card': field 'ai_tops_rule' is required with the other: a published AI TOPS figure "
            "and the rule that reads it go together");
  EXPECT_EQ(load_error(std::string(kRule) + kCard + "ai_tops = 284\nai_tops_rule = \"ampere\"\n"),
            "rules.toml: gpu 'card': field 'ai_tops_rule' 'ampere' is not a [[derivation]] of this catalog that reads ai_tops "
            "(accepted: r)");
}

TEST(CatalogRules, APrecisionTheHardwareLacksCannotBeStored) {
  EXPECT_EQ(load_error(std::string(kRule) + kCard + "fp8_tflops = 100\n"),
            "rules.toml: gpu 'card': field 'fp8_tflops' is set, but compute capability 8.6 lacks it (the catalog's "
            "support rule: 8.9 and later)");
}

TEST(CatalogRules, BadRulesAreNamed) {
  std::string rule = "schema_version = 1\n[[derivation]]\nid = \"r\"\nbasis = \"b\"\n"
                     "sources = [ { title = \"w\", url = \"https://example.invalid/w\" } ]\n";
  EXPECT_EQ(load_error(rule + "ratios = { fp16_tflops = \"1/0\" }\n" + kCard),
            "rules.toml: derivation 'r': field 'ratios' 'fp16_tflops' must be a positive number or fraction like "
            "\"1/16\"");
  // Infinity, spelled as TOML's number or as text, derives no rate (found by fuzz/catalog_toml).
  for (const char* infinite : {"inf", "\"inf\"", "\"1e308/1e-308\""}) {
    EXPECT_EQ(load_error(rule + "ratios = { fp16_tflops = " + infinite + " }\n" + kCard),
              "rules.toml: derivation 'r': field 'ratios' 'fp16_tflops' must be a positive number or fraction like "
              "\"1/16\"")
        << infinite;
  }
  EXPECT_EQ(load_error(rule + "ratios = { fp32_tflops = \"1/2\" }\n" + kCard),
            "rules.toml: derivation 'r': field 'ratios' names 'fp32_tflops', which is not a tensor rate (accepted: "
            "tf32_tflops, fp16_tflops, fp16_acc16_tflops, bf16_tflops, fp8_tflops, fp8_acc16_tflops, fp4_tflops, "
            "int8_tops)");
}

TEST(CatalogRules, VariantOfMustNameAnotherCard) {
  EXPECT_EQ(load_error(std::string(kRule) + kCard + "variant_of = \"rtx3090\"\n"),
            "rules.toml: gpu 'card': field 'variant_of' names 'rtx3090', which is not another gpu of this catalog");
}

}  // namespace
}  // namespace gpusage::catalog
