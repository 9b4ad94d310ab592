// The catalog loader, its validation messages, name resolution, selection and derived metrics.
#include "core/catalog/catalog.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "unit/catalog/fixture.hpp"

namespace gpusage::catalog {
namespace {

const Catalog& mini() {
  static const Catalog catalog = Catalog::load(fixture("mini.toml"));
  return catalog;
}

// One valid [[gpu]] entry as `key = value` lines; each validation test changes one line.
using Entry = std::vector<std::pair<std::string, std::string>>;

Entry valid_entry() {
  return {{"id", "\"testgpu\""},
          {"name", "\"Test GPU\""},
          {"family", "\"rtx40\""},
          {"architecture", "\"Ada Lovelace\""},
          {"chip", "\"AD104\""},
          {"compute_capability", "\"8.9\""},
          {"sm_count", "46"},
          {"cuda_cores", "5888"},
          {"boost_clock_mhz", "2475"},
          {"memory_gb", "12"},
          {"memory_type", "\"GDDR6X\""},
          {"memory_bus_bits", "192"},
          {"memory_bandwidth_gbs", "504"},
          {"tdp_w", "200"},
          {"fp32_tflops", "29.1"},
          {"fp16_tflops", "58.3"},
          {"launch_date", "\"2023-04-13\""},
          {"msrp_usd", "599"},
          {"sources", "[ { title = \"datasheet\", url = \"https://example.invalid/a\" } ]"}};
}

Entry with(Entry entry, const std::string& key, const std::string& value) {
  for (auto& [k, v] : entry) {
    if (k == key) {
      v = value;
      return entry;
    }
  }
  entry.emplace_back(key, value);
  return entry;
}

Entry without(Entry entry, const std::string& key) {
  std::erase_if(entry, [&key](const auto& kv) { return kv.first == key; });
  return entry;
}

std::string toml_of(const std::vector<Entry>& entries) {
  std::string text = "schema_version = 1\n";
  for (const auto& entry : entries) {
    text += "\n[[gpu]]\n";
    for (const auto& [key, value] : entry) text += key + " = " + value + "\n";
  }
  return text;
}

// The message of the InputError that `action` throws ("" when it throws none).
template <typename Action>
std::string input_error(Action action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string load_error(const std::vector<Entry>& entries) {
  return input_error([&] { Catalog::parse(toml_of(entries), "bad.toml"); });
}
std::string load_error(const Entry& entry) { return load_error(std::vector<Entry>{entry}); }
std::string resolve_error(std::string_view name) {
  return input_error([&] { mini().resolve(name); });
}

std::vector<std::string> ids(const std::vector<const Gpu*>& gpus) {
  std::vector<std::string> out;
  for (const Gpu* gpu : gpus) out.push_back(gpu->id);
  return out;
}

// ---- loading ----------------------------------------------------------------------------------------

TEST(CatalogLoad, ValidEntryParses) {
  Catalog catalog = Catalog::parse(toml_of({valid_entry()}), "ok.toml");
  ASSERT_EQ(catalog.gpus().size(), 1u);
  const Gpu& gpu = catalog.gpus().front();
  EXPECT_EQ(gpu.id, "testgpu");
  EXPECT_EQ(gpu.family, Family::rtx40);
  EXPECT_EQ(gpu.cuda_cores, 5888);
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth_gbs, 504);
  EXPECT_EQ(gpu.fp16_tflops, 58.3);
  EXPECT_FALSE(gpu.fp8_tflops.has_value());
  EXPECT_EQ(catalog.origin(), "ok.toml");
}

TEST(CatalogLoad, MiniFixtureKeepsFileOrderAndValues) {
  EXPECT_EQ(ids(mini().family(Family::rtx50)), (std::vector<std::string>{"rtx5090", "rtx5070ti", "rtx5070"}));
  const Gpu* h100 = mini().find("h100-sxm5-80gb");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->memory_type, "HBM3");
  EXPECT_EQ(h100->nvlink_gbs, 900);
  EXPECT_EQ(h100->launch_date, "2022-09");
  EXPECT_FALSE(h100->msrp_usd.has_value());
  ASSERT_EQ(h100->sources.size(), 2u);
  EXPECT_EQ(h100->sources[1].fields, (std::vector<std::string>{"launch_date"}));
  EXPECT_EQ(mini().origin(), fixture("mini.toml"));
}

TEST(CatalogLoad, EveryOptionalFieldIsRead) {
  Catalog catalog = Catalog::load(fixture("full.toml"));
  const Gpu& g = catalog.gpus().front();
  EXPECT_EQ(g.form_factor, "PCIe, dual slot");
  EXPECT_EQ(g.tensor_cores, 400);
  EXPECT_EQ(g.tensor_core_generation, 4);
  EXPECT_EQ(g.base_clock_mhz, 1500);
  EXPECT_EQ(g.l2_cache_mb, 0.5);
  EXPECT_EQ(g.pcie_gen, 4);
  EXPECT_EQ(g.pcie_lanes, 16);
  EXPECT_EQ(g.nvlink_gbs, 112.5);
  EXPECT_EQ(g.fp64_tflops, 1.25);
  EXPECT_EQ(g.tf32_tflops, 102.4);
  EXPECT_EQ(g.fp16_acc16_tflops, 409.6);
  EXPECT_EQ(g.bf16_tflops, 204.8);
  EXPECT_EQ(g.fp8_tflops, 409.6);
  EXPECT_EQ(g.fp8_acc16_tflops, 819.2);
  EXPECT_EQ(g.fp4_tflops, 819.2);
  EXPECT_EQ(g.int8_tops, 819);
  EXPECT_EQ(g.msrp_usd, 4096);
  EXPECT_EQ(g.sources[1].title, "test price list & \"notes\"");
}

TEST(CatalogLoad, IntegersAndFloatsAreBothNumbers) {
  Catalog catalog = Catalog::parse(toml_of({with(valid_entry(), "memory_gb", "12.0")}), "ok.toml");
  EXPECT_DOUBLE_EQ(catalog.gpus().front().memory_gb, 12);
}

// ---- validation: each message names the file, the GPU and the field --------------------------------

TEST(CatalogValidation, UnknownKeySuggestsTheField) {
  EXPECT_EQ(load_error(with(valid_entry(), "fp16_tflop", "58")),
            "bad.toml: gpu 'testgpu': field 'fp16_tflop' is not a catalog field; did you mean 'fp16_tflops'? "
            "(schema: data/README.md)");
}

TEST(CatalogValidation, MisspeltRequiredFieldIsReportedAsTheMisspelling) {
  Entry entry = with(without(valid_entry(), "memory_bandwidth_gbs"), "memory_bandwidth_gb", "504");
  EXPECT_EQ(load_error(entry),
            "bad.toml: gpu 'testgpu': field 'memory_bandwidth_gb' is not a catalog field; did you mean "
            "'memory_bandwidth_gbs'? (schema: data/README.md)");
}

TEST(CatalogValidation, UnknownKeyFarFromAnyFieldHasNoSuggestion) {
  EXPECT_EQ(load_error(with(valid_entry(), "colour", "\"green\"")),
            "bad.toml: gpu 'testgpu': field 'colour' is not a catalog field (schema: data/README.md)");
}

TEST(CatalogValidation, MissingRequiredField) {
  EXPECT_EQ(load_error(without(valid_entry(), "memory_gb")), "bad.toml: gpu 'testgpu': field 'memory_gb' is required");
  EXPECT_EQ(load_error(without(valid_entry(), "architecture")),
            "bad.toml: gpu 'testgpu': field 'architecture' is required");
}

TEST(CatalogValidation, MissingIdNamesTheEntryNumber) {
  EXPECT_EQ(load_error(std::vector<Entry>{valid_entry(), without(valid_entry(), "id")}),
            "bad.toml: gpu '#2': field 'id' is required");
}

TEST(CatalogValidation, NegativeValue) {
  EXPECT_EQ(load_error(with(valid_entry(), "tdp_w", "-5")),
            "bad.toml: gpu 'testgpu': field 'tdp_w' must be positive, got -5");
}

TEST(CatalogValidation, ZeroValue) {
  EXPECT_EQ(load_error(with(valid_entry(), "memory_bandwidth_gbs", "0")),
            "bad.toml: gpu 'testgpu': field 'memory_bandwidth_gbs' must be positive, got 0");
  EXPECT_EQ(load_error(with(valid_entry(), "msrp_usd", "0.0")),
            "bad.toml: gpu 'testgpu': field 'msrp_usd' must be positive, got 0");
}

TEST(CatalogValidation, InfiniteValue) {
  EXPECT_EQ(load_error(with(valid_entry(), "memory_gb", "inf")),
            "bad.toml: gpu 'testgpu': field 'memory_gb' must be a finite number, got inf");
  EXPECT_EQ(load_error(with(valid_entry(), "tdp_w", "-inf")),
            "bad.toml: gpu 'testgpu': field 'tdp_w' must be a finite number, got -inf");
}

TEST(CatalogValidation, WrongType) {
  EXPECT_EQ(load_error(with(valid_entry(), "memory_gb", "\"12\"")),
            "bad.toml: gpu 'testgpu': field 'memory_gb' must be a number");
  EXPECT_EQ(load_error(with(valid_entry(), "chip", "104")), "bad.toml: gpu 'testgpu': field 'chip' must be a string");
  EXPECT_EQ(load_error(with(valid_entry(), "sm_count", "46.5")),
            "bad.toml: gpu 'testgpu': field 'sm_count' must be a whole number, got 46.5");
  // Found by fuzz/catalog_toml (kept in fuzz/regressions/catalog_toml): beyond int, the cast was undefined.
  EXPECT_EQ(load_error(with(valid_entry(), "sm_count", "7777777132")),
            "bad.toml: gpu 'testgpu': field 'sm_count' must be a whole number up to 2147483647, got 7777777132");
}

TEST(CatalogValidation, BadMemoryType) {
  EXPECT_EQ(load_error(with(valid_entry(), "memory_type", "\"GDDR4\"")),
            "bad.toml: gpu 'testgpu': field 'memory_type' 'GDDR4' is not a known memory type "
            "(GDDR5, GDDR5X, GDDR6, GDDR6X, GDDR7, HBM2, HBM2e, HBM3, HBM3e, LPDDR5X)");
}

TEST(CatalogValidation, BadFamily) {
  EXPECT_EQ(load_error(with(valid_entry(), "family", "\"rtx60\"")),
            "bad.toml: gpu 'testgpu': field 'family' 'rtx60' is not one of rtx50, rtx40, rtx30, rtx20, gtx, "
            "laptop, datacenter, workstation");
}

TEST(CatalogValidation, BadIdComputeCapabilityAndDate) {
  EXPECT_EQ(load_error(with(valid_entry(), "id", "\"RTX 4070\"")),
            "bad.toml: gpu 'RTX 4070': field 'id' must be lowercase with no spaces");
  EXPECT_EQ(load_error(with(valid_entry(), "compute_capability", "\"89\"")),
            "bad.toml: gpu 'testgpu': field 'compute_capability' '89' is not of the form major.minor");
  EXPECT_EQ(load_error(with(valid_entry(), "launch_date", "\"April 2023\"")),
            "bad.toml: gpu 'testgpu': field 'launch_date' 'April 2023' is not YYYY-MM-DD or YYYY-MM");
}

TEST(CatalogValidation, DuplicateId) {
  Entry second = with(valid_entry(), "name", "\"Test GPU again\"");
  EXPECT_EQ(load_error(std::vector<Entry>{valid_entry(), second}),
            "bad.toml: gpu 'testgpu': field 'id' repeats entry #1 (ids must be unique)");
}

TEST(CatalogValidation, SourcesMissingOrEmpty) {
  EXPECT_EQ(load_error(without(valid_entry(), "sources")),
            "bad.toml: gpu 'testgpu': field 'sources' is required: a list of { title, url, fields? }");
  EXPECT_EQ(load_error(with(valid_entry(), "sources", "[]")),
            "bad.toml: gpu 'testgpu': field 'sources' is required: a list of { title, url, fields? }");
}

TEST(CatalogValidation, SourceEntriesNeedTitleAndHttpUrl) {
  EXPECT_EQ(load_error(with(valid_entry(), "sources", "[ { title = \"datasheet\" } ]")),
            "bad.toml: gpu 'testgpu': field 'sources' entries need both a title and a url");
  EXPECT_EQ(load_error(with(valid_entry(), "sources", "[ { title = \"t\", url = \"example.com/a\" } ]")),
            "bad.toml: gpu 'testgpu': field 'sources' url 'example.com/a' is not an http(s) address");
  EXPECT_EQ(load_error(with(valid_entry(), "sources", "[ { title = \"t\", link = \"https://a.invalid\" } ]")),
            "bad.toml: gpu 'testgpu': field 'sources' has an unknown or mistyped key 'link' (accepted: title, "
            "url, fields)");
}

TEST(CatalogValidation, SourceFieldsMustNameCatalogFields) {
  EXPECT_EQ(load_error(with(valid_entry(), "sources",
                            "[ { title = \"t\", url = \"https://a.invalid\", fields = [\"fp16_tflop\"] } ]")),
            "bad.toml: gpu 'testgpu': field 'sources' lists 'fp16_tflop' in 'fields', which is not a catalog "
            "field; did you mean 'fp16_tflops'?");
  EXPECT_EQ(load_error(with(valid_entry(), "sources",
                            "[ { title = \"t\", url = \"https://a.invalid\", fields = [\"msrp_usd\", 3] } ]")),
            "bad.toml: gpu 'testgpu': field 'sources' 'fields' must list field names");
}

TEST(CatalogValidation, EveryFigureNeedsASource) {
  Entry entry = with(valid_entry(), "sources",
                     "[ { title = \"spec\", url = \"https://a.invalid\", fields = [\"sm_count\", \"cuda_cores\", "
                     "\"boost_clock_mhz\", \"memory_gb\", \"memory_bus_bits\", \"memory_bandwidth_gbs\", \"tdp_w\", "
                     "\"fp32_tflops\", \"fp16_tflops\"] } ]");
  EXPECT_EQ(load_error(entry),
            "bad.toml: gpu 'testgpu': field 'msrp_usd' has no source: list it in a source's 'fields', or add a "
            "source without 'fields'");
  EXPECT_EQ(load_error(without(entry, "msrp_usd")), "");
}

TEST(CatalogValidation, TomlSyntaxErrorNamesFileLineAndColumn) {
  std::string message = input_error([] { Catalog::load(fixture("syntax-error.toml")); });
  EXPECT_THAT(message, ::testing::StartsWith(fixture("syntax-error.toml") + ":6:"));
  EXPECT_THAT(message, ::testing::HasSubstr("string"));
}

TEST(CatalogValidation, FileErrorsNameThePath) {
  EXPECT_EQ(input_error([] { Catalog::load(fixture("unknown-key.toml")); }),
            fixture("unknown-key.toml") +
                ": gpu 'typo': field 'memory_bandwidth_gbs_' is not a catalog field; did you mean "
                "'memory_bandwidth_gbs'? (schema: data/README.md)");
  EXPECT_EQ(input_error([] { Catalog::load(fixture("no-such-file.toml")); }),
            "cannot read catalog file '" + fixture("no-such-file.toml") + "'");
}

TEST(CatalogValidation, TopLevelProblems) {
  auto error = [](const std::string& text) { return input_error([&] { Catalog::parse(text, "top.toml"); }); };
  EXPECT_EQ(error("schema_version = 1\n"), "top.toml: no [[gpu]] tables");
  EXPECT_EQ(error("schema_version = 2\n" + toml_of({valid_entry()}).substr(19)),
            "top.toml: schema_version 2 is not supported (this gpusage reads 1)");
  EXPECT_EQ(error("gpus = 1\n"), "top.toml: unknown top-level key 'gpus' (accepted: schema_version, derivation, support, gpu)");
}

// ---- name resolution ---------------------------------------------------------------------------------

TEST(CatalogResolve, ExactId) { EXPECT_EQ(mini().resolve("rtx5070ti").id, "rtx5070ti"); }

TEST(CatalogResolve, IdIgnoresCaseAndSpaces) { EXPECT_EQ(mini().resolve("  RTX5090 ").id, "rtx5090"); }

TEST(CatalogResolve, MarketingName) {
  EXPECT_EQ(mini().resolve("RTX 5090").id, "rtx5090");
  EXPECT_EQ(mini().resolve("GeForce RTX 5070 Ti").id, "rtx5070ti");
  EXPECT_EQ(mini().resolve("H100 PCIe 80GB").id, "h100-pcie-80gb");
}

TEST(CatalogResolve, CudaDeviceNameWithVendorPrefix) {
  // What torch.cuda.get_device_name() and NVML report.
  EXPECT_EQ(mini().resolve("NVIDIA GeForce RTX 5090").id, "rtx5090");
  EXPECT_EQ(mini().resolve("NVIDIA GeForce RTX 5070 Ti").id, "rtx5070ti");
}

TEST(CatalogResolve, NumberAlone) { EXPECT_EQ(mini().resolve("5090").id, "rtx5090"); }

TEST(CatalogResolve, TiSuffixTellsTheCardsApart) {
  EXPECT_EQ(mini().resolve("5070 ti").id, "rtx5070ti");
  EXPECT_EQ(mini().resolve("5070").id, "rtx5070");
  EXPECT_EQ(mini().resolve("rtx 5070").id, "rtx5070");
}

TEST(CatalogResolve, AmbiguousNameListsEveryCandidate) {
  EXPECT_EQ(resolve_error("h100"),
            "GPU name 'h100' is ambiguous: it matches h100-sxm5-80gb (H100 SXM5 80GB), h100-pcie-80gb (H100 PCIe 80GB); "
            "give the id of the one you mean");
  EXPECT_EQ(mini().resolve("h100 sxm").id, "h100-sxm5-80gb");
}

TEST(CatalogResolve, UnknownNameSuggestsCloseIds) {
  EXPECT_EQ(resolve_error("rtx5009"), "unknown GPU 'rtx5009'; did you mean: rtx5090, rtx5070");
  EXPECT_EQ(resolve_error("quadro"), "unknown GPU 'quadro' (see `gpusage gpus --family all` for the ids)");
  EXPECT_EQ(resolve_error(" "), "empty GPU name");
}

TEST(CatalogSelect, FamiliesNamesAndAllWithoutRepeats) {
  EXPECT_EQ(ids(mini().select("datacenter")), (std::vector<std::string>{"h100-sxm5-80gb", "h100-pcie-80gb"}));
  EXPECT_EQ(ids(mini().select("RTX 5090, h100-pcie-80gb, rtx5090")),
            (std::vector<std::string>{"rtx5090", "h100-pcie-80gb"}));
  EXPECT_EQ(ids(mini().select("all")).size(), 5u);
  EXPECT_EQ(ids(mini().select("5070,rtx50")), (std::vector<std::string>{"rtx5070", "rtx5090", "rtx5070ti"}));
  EXPECT_TRUE(mini().select("rtx40").empty());
  EXPECT_THROW(mini().select("5090,,5070"), InputError);
}

TEST(CatalogSelect, ANameTakenAsADefaultVariantIsNotListedTwiceBesideItsId) {
  // "H800" is the SXM5 card with a note (a copy of the entry); with the id beside it, the card is listed once.
  const Catalog& catalog = Catalog::builtin();
  EXPECT_EQ(ids(catalog.select("h800,h800-sxm5-80gb")), (std::vector<std::string>{"h800-sxm5-80gb"}));
  EXPECT_EQ(ids(catalog.select("tesla p100,p100-pcie-16gb,p100")), (std::vector<std::string>{"p100-pcie-16gb"}));
}

TEST(CatalogParse, FamilyAndPrecisionNames) {
  EXPECT_EQ(parse_family("RTX50"), Family::rtx50);
  EXPECT_EQ(parse_family("workstation"), Family::workstation);
  EXPECT_EQ(parse_family("rtx20"), Family::rtx20);
  EXPECT_EQ(parse_family("Laptop"), Family::laptop);
  EXPECT_FALSE(parse_family("rtx10").has_value());
  EXPECT_EQ(parse_precision("BF16"), Precision::bf16);
  EXPECT_FALSE(parse_precision("int4").has_value());
}

// ---- per-GPU figures and derived metrics ---------------------------------------------------------------

TEST(CatalogGpu, MatmulRatesAndSupport) {
  const Gpu& gpu = mini().resolve("rtx5070ti");
  EXPECT_EQ(gpu.matmul_tflops(Precision::fp32), 43.9);
  EXPECT_EQ(gpu.matmul_tflops(Precision::bf16), 87.9);
  EXPECT_FALSE(gpu.supports(Precision::fp8));
  EXPECT_DOUBLE_EQ(gpu.compute_capability_value(), 12.0);
  EXPECT_DOUBLE_EQ(gpu.memory_bytes(), 16.0 * 1024 * 1024 * 1024);
}

TEST(CatalogDerive, RatiosOnFixtureValues) {
  Derived d = derive(mini().resolve("rtx5090"));  // 209.5 FP16 TFLOPS, 104.8 FP32, 32 GB, 1792 GB/s, 575 W, $1999
  EXPECT_DOUBLE_EQ(*d.fp16_tflops_per_usd, 209.5 / 1999);
  EXPECT_DOUBLE_EQ(*d.fp16_tflops_per_watt, 209.5 / 575);
  EXPECT_DOUBLE_EQ(*d.fp32_tflops_per_usd, 104.8 / 1999);
  EXPECT_DOUBLE_EQ(*d.fp32_tflops_per_watt, 104.8 / 575);
  EXPECT_DOUBLE_EQ(*d.vram_gb_per_usd, 32.0 / 1999);
  EXPECT_DOUBLE_EQ(*d.bandwidth_gbs_per_fp16_tflop, 1792 / 209.5);
  // 209.5e12 FLOP/s over 1792e9 B/s: about 117 FLOPs per byte before compute, not memory, limits.
  EXPECT_NEAR(*d.ridge_point_flop_per_byte, 116.908, 1e-3);
}

TEST(CatalogDerive, UnknownInputGivesNoValue) {
  Derived d = derive(mini().resolve("h100-sxm5-80gb"));  // no launch price in the fixture
  EXPECT_FALSE(d.fp16_tflops_per_usd.has_value());
  EXPECT_FALSE(d.vram_gb_per_usd.has_value());
  EXPECT_DOUBLE_EQ(*d.fp16_tflops_per_watt, 989.4 / 700);
  EXPECT_NEAR(*d.ridge_point_flop_per_byte, 989.4e12 / 3350e9, 1e-9);
}

// Each card's power flagship is the highest-TDP card of its compute capability (ties: the higher FP16
// rate); a GeForce flagship counts at its FP16-accumulate rate.
TEST(CatalogBuiltin, PowerFlagshipIsTheCapabilitysHighestTdpCard) {
  const Catalog& catalog = Catalog::builtin();
  const Gpu* a6000 = catalog.find("rtxa6000");
  ASSERT_NE(a6000, nullptr);
  // GA102 at 450 W: the RTX 3090 Ti, at its FP16-accumulate 160 TFLOPS (derived from its 320 AI TOPS).
  EXPECT_EQ(a6000->power_flagship, "rtx3090ti");
  EXPECT_NEAR(*a6000->power_flagship_fp16_tflops_per_watt, 160.0 / 450, 1e-12);
  const Gpu* pcie = catalog.find("h100-pcie-80gb");
  ASSERT_NE(pcie, nullptr);
  EXPECT_EQ(pcie->power_flagship, "h200-sxm-141gb");  // 700 W like the H100 SXM, 989.5 TFLOPS against 989.4
  EXPECT_NEAR(*pcie->power_flagship_fp16_tflops_per_watt, 989.5 / 700, 1e-12);
  const Gpu* sxm = catalog.find("a100-sxm4-80gb");
  ASSERT_NE(sxm, nullptr);
  EXPECT_NEAR(*sxm->power_flagship_fp16_tflops_per_watt, 312.0 / 400, 1e-12);
}

}  // namespace
}  // namespace gpusage::catalog
