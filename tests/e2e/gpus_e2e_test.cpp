// `gpusage gpus` as a user runs it: every format, sorting, `show`, the chart, and the mistakes that exit 2.
// Most tests read tests/fixtures/catalog/mini.toml (GPUSAGE_CATALOG) so that every value is known here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string mini_path() { return fixture("catalog/mini.toml"); }
std::string mini_env() { return "COLUMNS=120 GPUSAGE_CATALOG=" + mini_path(); }
CliResult gpus(const std::string& args, const std::string& env = mini_env()) { return run_cli("gpus " + args, env); }

std::vector<std::string> ids_of(const std::string& json_text) {
  std::vector<std::string> ids;
  for (const auto& gpu : nlohmann::json::parse(json_text)) ids.push_back(gpu.at("id").get<std::string>());
  return ids;
}

// A user mistake: exit 2, nothing on stdout, exactly one line on stderr.
void expect_one_line_error(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpusage: " + message + "\n");
}

// A fresh directory per test, so that "no temporary file remains" can be checked by listing it.
class ChartDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(GPUSAGE_BINARY_DIR) /
           ("e2e-gpus-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) names.push_back(entry.path().filename());
    return names;
  }
  std::filesystem::path dir_;
};

TEST(GpusTable, DefaultIsTheRtx50FamilyAlignedWithUnitsAndSources) {
  CliResult r = gpus("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "GPU        Arch         CUDA    FP32    FP16     FP8     FP4  VRAM  Mem BW  TDP  Price  FP16/$1k  FP16/W\n"
            "                       cores  TFLOPS  TFLOPS  TFLOPS  TFLOPS    GB    GB/s    W    USD    TFLOPS  TFLOPS\n"
            "---------  ---------  ------  ------  ------  ------  ------  ----  ------  ---  -----  --------  ------\n"
            "rtx5090    Blackwell  21,760   104.8   209.5   419.0       ?    32   1,792  575  1,999     104.8    0.36\n"
            "rtx5070ti  Blackwell   8,960    43.9    87.9       ?       ?    16     896  300    749     117.4    0.29\n"
            "rtx5070    Blackwell   6,144    30.9    61.7       ?       ?    12     672  250    549     112.4    0.25\n"
            "FP16, FP8, FP4: dense tensor-core TFLOPS with FP32 accumulate. Price: launch MSRP. FP16/$1k: FP16 TFLOPS "
            "per $1,000.\n"
            "\u2020: derived from NVIDIA's published AI TOPS (or, where NVIDIA lists none, the FP32 rate) by the "
            "architecture's whitepaper ratio (`gpusage gpus show ID` lists it); \u2013: the hardware lacks the precision; "
            "?: not published.\n"
            "Figures: 3 cited sources in " +
                mini_path() +
                "; `gpusage gpus show ID` gives each field's source.\n"
                "(not shown to fit 120 columns: Name; use --wide or --format csv)\n");
}

TEST(GpusTable, WideKeepsEveryColumn) {
  CliResult r = gpus("--wide");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("GPU        Name                 Arch  "));
  EXPECT_THAT(r.out, HasSubstr("rtx5070ti  GeForce RTX 5070 Ti  Blackwell"));
  EXPECT_THAT(r.out, Not(HasSubstr("not shown")));
}

TEST(GpusTable, NarrowTerminalDropsColumnsAndSaysWhich) {
  CliResult r = gpus("", "COLUMNS=80 GPUSAGE_CATALOG=" + mini_path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("GPU          FP32    FP16     FP8     FP4  VRAM  Mem BW  TDP  Price  FP16/$1k\n"));
  EXPECT_THAT(r.out, HasSubstr("(not shown to fit 80 columns: CUDA, FP16/W, Arch, Name; use --wide or --format csv)"));
  std::size_t start = 0;
  while (start < r.out.size()) {
    std::size_t end = r.out.find('\n', start);
    std::string line = r.out.substr(start, end - start);
    if (!line.starts_with("FP16, FP8") && !line.starts_with("Figures:") && !line.starts_with("(not shown") &&
        !line.starts_with("\u2020:")) {
      EXPECT_LE(line.size(), 80u) << line;
    }
    start = end + 1;
  }
}

TEST(GpusTable, SortByAFieldOutsideTheTableAddsItsColumn) {
  CliResult r = gpus("--family all --sort l2_cache_mb --wide");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("L2 cache\n"));
  EXPECT_THAT(r.out, HasSubstr("Sorted by l2_cache_mb, highest first; unknown values last."));
  // Only the RTX 5090 has an L2 figure in the fixture: it leads, the rest keep catalog order.
  EXPECT_LT(r.out.find("\nrtx5090 "), r.out.find("\nrtx5070ti "));
  EXPECT_LT(r.out.find("\nrtx5070ti "), r.out.find("\nh100-sxm5-80gb "));
}

TEST(GpusMarkdown, SameColumnsAsTheTableWithUnitsInHeaders) {
  CliResult r = gpus("--format markdown");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("| GPU | Name | Arch | CUDA (cores) | FP32 (TFLOPS) | FP16 (TFLOPS) | FP8 (TFLOPS) | "
                                "FP4 (TFLOPS) | VRAM (GB) | Mem BW (GB/s) | TDP (W) | Price (USD) | FP16/$1k (TFLOPS) "
                                "| FP16/W (TFLOPS) |\n| :--- | :--- | :--- | ---: |"));
  EXPECT_THAT(r.out, HasSubstr("\n| rtx5090 | GeForce RTX 5090 | Blackwell | 21,760 | 104.8 | 209.5 | 419.0 | ? | 32 | "
                               "1,792 | 575 | 1,999 | 104.8 | 0.36 |\n"));
}

TEST(GpusCsv, EveryFieldRawWithDerivedMetricsAndSources) {
  CliResult r = gpus("--gpu 5090 --format csv");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "id,name,family,architecture,chip,compute_capability,form_factor,sm_count,cuda_cores,tensor_cores,"
            "tensor_core_generation,base_clock_mhz,boost_clock_mhz,memory_gb,memory_type,memory_bus_bits,"
            "memory_bandwidth_gbs,l2_cache_mb,tdp_w,power_min_w,pcie_gen,pcie_lanes,nvlink_gbs,node_network_gbps,fp64_tflops,fp32_tflops,tf32_tflops,"
            "fp16_tflops,fp16_acc16_tflops,bf16_tflops,fp8_tflops,fp8_acc16_tflops,fp4_tflops,int8_tops,ai_tops,"
            "ai_tops_rule,tensor_rule,launch_date,msrp_usd,market,variant_of,fp16_tflops_per_usd,fp16_tflops_per_watt,fp32_tflops_per_usd,fp32_tflops_per_watt,"
            "vram_gb_per_usd,bandwidth_gbs_per_fp16_tflop,ridge_point_flop_per_byte,sources\n"
            "rtx5090,GeForce RTX 5090,rtx50,Blackwell,GB202,12.0,,170,21760,,,,2407,32,GDDR7,512,1792,96,575,,,,,,,104.8,"
            "104.8,209.5,419,209.5,419,,,,,,,2025-01-30,1999,,,0.104802,0.364348,0.0524262,0.182261,0.016008,8.5537,"
            "116.908,https://example.invalid/rtx5090\n");
}

TEST(GpusCsv, EveryOptionalFieldAndQuotedCommas) {
  // full.toml sets every field; its form factor holds a comma, so that cell is quoted.
  CliResult r = gpus("--family all --format csv", "GPUSAGE_CATALOG=" + fixture("catalog/full.toml"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\ntestcard,Test Card 1000,laptop,Testwell,TC100,8.9,\"PCIe, dual slot\",100,12800,400,4,"
                               "1500,2000,48,GDDR6,384,960,0.5,300,100,4,16,112.5,400,1.25,51.2,102.4,204.8,409.6,204.8,409.6,"
                               "819.2,819.2,819,1638.4,test-rule,test-fp32-rule,2024-03-15,4096,China,basecard,"));
  EXPECT_THAT(r.out, HasSubstr(",https://example.invalid/testcard https://example.invalid/prices\n"));
  // The base card's FP16 and TF32 come from its AI TOPS by the fixture's rule: 2000 x 1/8, 2000 x 0.0625.
  EXPECT_THAT(r.out, HasSubstr("\nbasecard,Test Card 1000 Base,workstation,Testwell,TC100,8.9,,100,12800,,,,2000,48,"
                               "GDDR6,384,960,,300,,,,,,,51.2,125,250,,,,,,,2000,test-rule,,2024-03,"));
}

TEST(GpusJson, EveryFieldWithNullsDerivedAndSources) {
  CliResult r = gpus("--format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json gpus_json = nlohmann::json::parse(r.out);
  ASSERT_EQ(gpus_json.size(), 3u);
  const auto& g = gpus_json[0];
  for (const char* key : {"id", "name", "family", "architecture", "chip", "compute_capability", "form_factor",
                          "sm_count", "cuda_cores", "tensor_cores", "tensor_core_generation", "base_clock_mhz",
                          "boost_clock_mhz", "memory_gb", "memory_type", "memory_bus_bits", "memory_bandwidth_gbs",
                          "l2_cache_mb", "tdp_w", "power_min_w", "pcie_gen", "pcie_lanes", "nvlink_gbs", "node_network_gbps", "fp64_tflops", "fp32_tflops",
                          "tf32_tflops", "fp16_tflops", "fp16_acc16_tflops", "bf16_tflops", "fp8_tflops",
                          "fp8_acc16_tflops", "fp4_tflops", "int8_tops", "ai_tops", "ai_tops_rule", "tensor_rule", "launch_date",
                          "msrp_usd", "market", "variant_of", "sources", "derived", "status", "derivations"}) {
    EXPECT_TRUE(g.contains(key)) << key;
  }
  EXPECT_EQ(g.size(), 45u);
  EXPECT_EQ(g["id"], "rtx5090");
  EXPECT_EQ(g["family"], "rtx50");
  EXPECT_EQ(g["cuda_cores"], 21760);
  EXPECT_TRUE(g["cuda_cores"].is_number_integer());
  EXPECT_EQ(g["fp16_tflops"], 209.5);
  EXPECT_EQ(g["fp16_acc16_tflops"], 419);
  EXPECT_EQ(g["l2_cache_mb"], 96);
  EXPECT_TRUE(g["fp4_tflops"].is_null());
  EXPECT_TRUE(g["nvlink_gbs"].is_null());
  EXPECT_TRUE(g["node_network_gbps"].is_null());
  EXPECT_EQ(g["msrp_usd"], 1999);
  EXPECT_DOUBLE_EQ(g["derived"]["fp16_tflops_per_usd"].get<double>(), 209.5 / 1999);
  EXPECT_DOUBLE_EQ(g["derived"]["bandwidth_gbs_per_fp16_tflop"].get<double>(), 1792 / 209.5);
  EXPECT_EQ(g["derived"].size(), 7u);
  EXPECT_EQ(g["sources"], nlohmann::json::parse(
                              R"([{"title": "test fixture", "url": "https://example.invalid/rtx5090", "fields": []}])"));
  EXPECT_TRUE(gpus_json[1]["l2_cache_mb"].is_null());
}

TEST(GpusJson, DerivedMetricsAreNullWhenAnInputIsUnknown) {
  CliResult r = gpus("--gpu h100-sxm5-80gb --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto g = nlohmann::json::parse(r.out).at(0);
  EXPECT_TRUE(g["msrp_usd"].is_null());
  EXPECT_TRUE(g["derived"]["fp16_tflops_per_usd"].is_null());
  EXPECT_DOUBLE_EQ(g["derived"]["fp16_tflops_per_watt"].get<double>(), 989.4 / 700);
  EXPECT_EQ(g["sources"][1]["fields"], nlohmann::json::parse(R"(["launch_date"])"));
}

TEST(GpusSelect, FamiliesAllAndGpuLists) {
  EXPECT_EQ(ids_of(gpus("--family all --format json").out),
            (std::vector<std::string>{"rtx5090", "rtx5070ti", "rtx5070", "h100-sxm5-80gb", "h100-pcie-80gb"}));
  EXPECT_EQ(ids_of(gpus("--family datacenter --format json").out),
            (std::vector<std::string>{"h100-sxm5-80gb", "h100-pcie-80gb"}));
  EXPECT_EQ(ids_of(gpus("--gpu '5070 ti,RTX 5090,h100 pcie' --format json").out),
            (std::vector<std::string>{"rtx5070ti", "rtx5090", "h100-pcie-80gb"}));
  CliResult empty = gpus("--family rtx40 --format json");
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(empty.out, "[]\n");
}

TEST(GpusSort, NumbersDescendingUnknownLast) {
  EXPECT_EQ(ids_of(gpus("--family all --sort fp16_tflops --format json").out),
            (std::vector<std::string>{"h100-sxm5-80gb", "h100-pcie-80gb", "rtx5090", "rtx5070ti", "rtx5070"}));
  // The H100s have no launch price: they follow the priced cards, in catalog order.
  EXPECT_EQ(ids_of(gpus("--family all --sort msrp_usd --format json").out),
            (std::vector<std::string>{"rtx5090", "rtx5070ti", "rtx5070", "h100-sxm5-80gb", "h100-pcie-80gb"}));
  EXPECT_EQ(ids_of(gpus("--family all --sort fp16_tflops_per_usd --format json").out),
            (std::vector<std::string>{"rtx5070ti", "rtx5070", "rtx5090", "h100-sxm5-80gb", "h100-pcie-80gb"}));
}

TEST(GpusShow, EveryFieldWithItsSource) {
  CliResult r = gpus("show h100-sxm5-80gb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("H100 SXM5 80GB (h100-sxm5-80gb)\n\nField  "));
  EXPECT_THAT(r.out, HasSubstr("\nCUDA cores                    cuda_cores                                  16,896  [1]\n"));
  EXPECT_THAT(r.out, HasSubstr("\nBandwidth                     memory_bandwidth_gbs                    3,350 GB/s  [1]\n"));
  EXPECT_THAT(r.out, HasSubstr("\nFP8 tensor                    fp8_tflops                          1,978.9 TFLOPS  [1]\n"));
  EXPECT_THAT(r.out, HasSubstr("\nLaunch date                   launch_date                                2022-09  [2]\n"));
  EXPECT_THAT(r.out, HasSubstr("\nLaunch price                  msrp_usd                                       n/a\n"));
  EXPECT_THAT(r.out, HasSubstr("\nRidge point (FP16)            ridge_point_flop_per_byte            295 FLOP/byte  computed\n"));
  EXPECT_THAT(r.out, HasSubstr("\n[1] test fixture datasheet: https://example.invalid/h100\n"
                               "[2] test fixture dates (launch_date): https://example.invalid/dates\n"));
}

TEST(GpusShow, NamesResolveEvenUnquoted) {
  CliResult r = gpus("show RTX 5070 Ti");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("GeForce RTX 5070 Ti (rtx5070ti)\n"));
  EXPECT_THAT(gpus("show 5070").out, StartsWith("GeForce RTX 5070 (rtx5070)\n"));
}

TEST(GpusShow, JsonMapsEachKnownFieldToItsSources) {
  CliResult r = gpus("show h100-sxm5-80gb --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto g = nlohmann::json::parse(r.out);
  EXPECT_EQ(g["id"], "h100-sxm5-80gb");
  EXPECT_EQ(g["field_sources"]["launch_date"], nlohmann::json::parse(R"(["https://example.invalid/dates"])"));
  EXPECT_EQ(g["field_sources"]["fp16_tflops"], nlohmann::json::parse(R"(["https://example.invalid/h100"])"));
  EXPECT_FALSE(g["field_sources"].contains("msrp_usd"));
}

TEST(GpusErrors, BadFamily) {
  expect_one_line_error(gpus("--family rtx60"),
                        "--family: 'rtx60' is not one of rtx50, rtx40, rtx30, rtx20, gtx, laptop, datacenter, workstation, china, all");
}

TEST(GpusErrors, BadSortListsAcceptedNames) {
  CliResult r = gpus("--sort fp16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("gpusage: --sort: 'fp16' is not a numeric field (did you mean fp16_tflops or "
                                "fp16_acc16_tflops or fp16_tflops_per_usd?); accepted: sm_count, cuda_cores, "));
  EXPECT_THAT(r.err, HasSubstr(", memory_bandwidth_gbs, "));
  EXPECT_TRUE(r.err.ends_with(", ridge_point_flop_per_byte\n"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(GpusErrors, TextFieldsDoNotSort) {
  CliResult r = gpus("--sort memory_type");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("gpusage: --sort: 'memory_type' is not a numeric field; accepted: "));
}

TEST(GpusErrors, UnknownGpuSuggests) {
  expect_one_line_error(gpus("--gpu rtx9090"), "unknown GPU 'rtx9090'; did you mean: rtx5090, rtx5070");
  expect_one_line_error(gpus("show rtx9090"), "unknown GPU 'rtx9090'; did you mean: rtx5090, rtx5070");
}

TEST(GpusErrors, AmbiguousGpuListsCandidates) {
  expect_one_line_error(gpus("show h100"),
                        "GPU name 'h100' is ambiguous: it matches h100-sxm5-80gb (H100 SXM5 80GB), h100-pcie-80gb (H100 PCIe "
                        "80GB); give the id of the one you mean");
}

TEST(GpusErrors, FamilyAndGpuTogether) {
  expect_one_line_error(gpus("--family rtx50 --gpu 5090"), "--family excludes --gpu (see --help)");
}

TEST(GpusErrors, BadCatalogFileNamesFileGpuAndField) {
  std::string path = fixture("catalog/unknown-key.toml");
  expect_one_line_error(gpus("", "GPUSAGE_CATALOG=" + path),
                        path + ": gpu 'typo': field 'memory_bandwidth_gbs_' is not a catalog field; did you mean "
                               "'memory_bandwidth_gbs'? (schema: data/README.md)");
}

TEST_F(ChartDir, WritesAValidSvgAndNoTemporaryFile) {
  std::string chart = (dir_ / "rtx50.svg").string();
  CliResult r = gpus("--chart " + chart + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ids_of(r.out), (std::vector<std::string>{"rtx5090", "rtx5070ti", "rtx5070"}));
  EXPECT_EQ(r.err, "gpusage: wrote " + chart + " (3 GPUs, 5 metrics)\n");
  EXPECT_EQ(files(), (std::vector<std::string>{"rtx50.svg"}));
  std::string svg = read_text(chart);
  EXPECT_THAT(svg, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  // 3 GPUs x 5 default metrics, all known in the fixture.
  std::size_t bars = 0;
  for (std::size_t pos = svg.find("<rect class=\"bar\""); pos != std::string::npos;
       pos = svg.find("<rect class=\"bar\"", pos + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 15u);
  EXPECT_THAT(svg, HasSubstr(">GPU comparison: rtx50 (3 GPUs)</text>"));
  EXPECT_THAT(svg, HasSubstr(">Bandwidth (GB/s)</text>"));
  EXPECT_THAT(svg, HasSubstr(">1,792 GB/s</text>"));
  EXPECT_THAT(svg, HasSubstr(">209.5 TFLOPS</text>"));
  EXPECT_THAT(svg, HasSubstr(">GeForce RTX 5070 Ti</text>"));
}

TEST_F(ChartDir, MetricsChooseTheBars) {
  std::string chart = (dir_ / "c.svg").string();
  CliResult r = gpus("--family all --chart " + chart + " --metrics fp8_tflops,fp16_tflops_per_watt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string svg = read_text(chart);
  EXPECT_THAT(svg, HasSubstr(">FP8 tensor (TFLOPS)</text>"));
  EXPECT_THAT(svg, HasSubstr(">FP16 tensor per watt (TFLOPS/W)</text>"));
  EXPECT_THAT(svg, HasSubstr(">1,978.9 TFLOPS</text>"));
  EXPECT_THAT(svg, HasSubstr(">n/a</text>"));  // the RTX 5070 has no FP8 figure in the fixture
}

TEST_F(ChartDir, TheSubtitleNamesTheDerivedBars) {
  std::string chart = (dir_ / "d.svg").string();
  CliResult r = run_cli("gpus --gpu rtx5090,rtx5060 --chart " + chart + " --metrics fp16_tflops,tdp_w",
                        "env -u GPUSAGE_CATALOG");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = read_text(chart);
  EXPECT_THAT(svg, HasSubstr("FP16 tensor of GeForce RTX 5060.</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("FP16 tensor of GeForce RTX 5090")));
}

TEST_F(ChartDir, OtherExtensionsAreRejectedBeforeAnythingIsWritten) {
  std::string chart = (dir_ / "chart.png").string();
  expect_one_line_error(gpus("--chart " + chart), "--chart: '" + chart + "' has an unsupported extension; accepted: .svg, .html");
  EXPECT_TRUE(files().empty());
}

TEST_F(ChartDir, UnknownMetricIsRejected) {
  CliResult r = gpus("--chart " + (dir_ / "c.svg").string() + " --metrics cuda_cores,vram");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("gpusage: --metrics: 'vram' is not a numeric field (did you mean vram_gb_per_usd?); "
                                "accepted: "));
  EXPECT_TRUE(files().empty());
}

TEST_F(ChartDir, UnwritableDirectoryIsAnInputErrorAndPrintsNothing) {
  std::string chart = (dir_ / "missing" / "c.svg").string();
  expect_one_line_error(gpus("--chart " + chart), "cannot write '" + chart + "': No such file or directory");
}

// The built-in catalog (data/gpus.toml): the ids the CLI contract (../shared/DESIGN.md) promises, in order.
TEST(GpusBuiltin, AllFamiliesListTheContractIdsInOrderEachWithSources) {
  CliResult r = run_cli("gpus --family all --format json", "env -u GPUSAGE_CATALOG");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ids_of(r.out),
            (std::vector<std::string>{
                "rtx5090",        "rtx5090d",       "rtx5090d-v2",    "rtx5080",        "rtx5070ti",
                "rtx5070",        "rtx5060ti-16gb", "rtx5060ti-8gb",  "rtx5060",        "rtx5050",
                "rtx4090",        "rtx4090d",       "rtx4080super",   "rtx4080",        "rtx4070tisuper",
                "rtx4070super",   "rtx4070",        "rtx4060ti-16gb", "rtx4060",        "rtx3090ti",
                "rtx3090",        "rtx3080-10gb",   "rtx3080-12gb",   "rtx3070",        "rtx3060-12gb",
                "rtxpro6000",     "rtxpro5000",     "rtxpro4500",     "rtxpro4000",     "gb10",
                "rtx6000ada",     "l40s",           "l20",            "l4",             "rtxa6000",
                "t4",             "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-32gb", "a100-sxm4-40gb",
                "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
                "h200-sxm-141gb", "h20",            "b300",           "b200",
                // cards measured in the validation data, appended at the end of gpus.toml
                "quadro-rtx8000", "quadro-rtx6000", "quadro-rtx5000", "rtxa5500", "rtxa5000", "rtxa4500", "rtxa4000",
                "a40", "a10", "a10g",
                // the cards people own (issue 51): RTX 20, TITAN, GTX 16/10, RTX 30/40 additions, laptops, data center
                "rtx2080ti", "rtx2080super", "rtx2080", "rtx2070super", "rtx2070", "rtx2060super", "rtx2060",
                "titan-rtx", "titanv", "gtx1660ti", "gtx1660super", "gtx1660", "gtx1080ti", "gtx1080", "gtx1070",
                "rtx3080ti", "rtx3070ti", "rtx3060ti", "rtx3060-8gb", "rtx3050", "rtx4070ti", "rtx4060ti-8gb",
                "rtx3080ti-laptop", "rtx3080-laptop-16gb", "rtx3080-laptop-8gb", "rtx3070ti-laptop",
                "rtx3070-laptop", "rtx3060-laptop", "rtx3050ti-laptop", "rtx3050-laptop", "rtx4090-laptop",
                "rtx4080-laptop", "rtx4070-laptop", "rtx4060-laptop", "rtx4050-laptop", "rtx5090-laptop",
                "rtx5080-laptop", "a800-sxm4-80gb", "a800-pcie-80gb", "a800-pcie-40gb", "h800-sxm5-80gb",
                "h800-pcie-80gb", "h100-nvl", "l40", "a30", "v100-pcie-16gb", "p100-pcie-16gb", "p100-pcie-12gb",
                "p40"}));
  for (const auto& gpu : nlohmann::json::parse(r.out)) {
    ASSERT_TRUE(gpu["sources"].is_array()) << gpu["id"];
    EXPECT_FALSE(gpu["sources"].empty()) << gpu["id"];
    for (const auto& source : gpu["sources"]) {
      EXPECT_FALSE(source["url"].get<std::string>().empty()) << gpu["id"];
    }
  }
}

// The built-in catalog's derived figures, as the issue that asked for them checks them (issue 17).
CliResult builtin_gpus(const std::string& args) { return run_cli("gpus " + args, "COLUMNS=200 env -u GPUSAGE_CATALOG"); }

// The FP16 column of every row of a --format markdown table: derived cells end with the dagger.
std::vector<std::string> fp16_cells(const std::string& markdown) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while ((start = markdown.find("\n| ", start)) != std::string::npos) {
    std::size_t end = markdown.find('\n', start + 1);
    std::vector<std::string> row;
    std::string line = markdown.substr(start + 3, end - start - 3), cell;
    for (std::size_t at = 0; at < line.size();) {
      std::size_t bar = line.find(" | ", at);
      row.push_back(line.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
      if (bar == std::string::npos) break;
      at = bar + 3;
    }
    if (row.size() > 5 && row[0] != ":---") cells.push_back(row[5]);
    start = end;
  }
  return cells;
}

TEST(GpusBuiltin, EveryRtx50AndRtx40CardShowsAnFp16FigureSourcedOrDerived) {
  for (const char* family : {"rtx50", "rtx40"}) {
    CliResult r = builtin_gpus(std::string("--family ") + family + " --format markdown");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto cells = fp16_cells(r.out);
    EXPECT_GE(cells.size(), 9u) << family;
    for (const auto& cell : cells) {
      EXPECT_NE(cell, "?") << family;
      EXPECT_NE(cell, "n/a") << family;
    }
  }
  CliResult r = builtin_gpus("--family rtx50 --format markdown");
  EXPECT_THAT(r.out, HasSubstr("| rtx5060 | GeForce RTX 5060 | Blackwell | 3,840 | 19.2 | 38.4\u2020 | 76.8\u2020 | 307.0 |"));
  EXPECT_THAT(r.out, HasSubstr("| rtx5050 | GeForce RTX 5050 | Blackwell | 2,560 | 13.2 | 26.3\u2020 | 52.6\u2020 | "
                               "210.5\u2020 |"));
  // Ampere has no FP8 or FP4: a dash, not a question mark.
  EXPECT_THAT(builtin_gpus("--gpu rtx3090 --format markdown").out,
              HasSubstr("| rtx3090 | GeForce RTX 3090 | Ampere | 10,496 | 35.6 | 71.2 | \u2013 | \u2013 |"));
}

TEST(GpusBuiltin, JsonMarksEachFigureAndListsTheDerivations) {
  CliResult r = builtin_gpus("--gpu rtx5060,rtx3090,l20,rtx5090 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto all = nlohmann::json::parse(r.out);
  const auto& rtx5060 = all[0];
  EXPECT_EQ(rtx5060["status"]["fp16_tflops"], "derived");
  EXPECT_EQ(rtx5060["status"]["fp4_tflops"], "sourced");
  EXPECT_EQ(rtx5060["status"]["fp16_tflops_per_usd"], "derived");
  EXPECT_DOUBLE_EQ(rtx5060["fp16_tflops"].get<double>(), 614.0 / 16);
  bool found = false;
  for (const auto& d : rtx5060["derivations"]) {
    if (d["field"] != "fp16_tflops") continue;
    found = true;
    EXPECT_EQ(d["rule"], "blackwell-geforce");
    EXPECT_EQ(d["basis_field"], "ai_tops");
    EXPECT_EQ(d["basis"], 614);
    EXPECT_EQ(d["ratio"], 1.0 / 16);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(all[1]["status"]["fp8_tflops"], "unsupported");
  EXPECT_EQ(all[2]["status"]["fp16_tflops"], "unpublished");
  EXPECT_EQ(all[3]["status"]["fp16_tflops"], "sourced");
  EXPECT_TRUE(all[3]["derivations"].empty());
}

TEST(GpusBuiltin, ShowListsTheDerivationAndTheRulesWhitepaper) {
  CliResult r = builtin_gpus("show 5060");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("38.38\u2020 TFLOPS  derived: 614 ai_tops x 1/16 (blackwell-geforce) [5]\n"));
  EXPECT_THAT(r.out, HasSubstr("\n[5] rule 'blackwell-geforce', from sparse FP4 TOPS"));
  EXPECT_THAT(r.out, HasSubstr("nvidia-rtx-blackwell-gpu-architecture.pdf\n"));
}

TEST(GpusBuiltin, ExportVariantsStateWhatDiffers) {
  CliResult r = builtin_gpus("show 4090 d");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("GeForce RTX 4090 D (rtx4090d)\n"));
  EXPECT_THAT(r.out, HasSubstr("Variant of rtx4090 (GeForce RTX 4090), sold in China. Differs in: SMs 114 (rtx4090: "
                               "128); CUDA cores 14,592 (rtx4090: 16,384); Tensor cores 456 (rtx4090: 512); "));
  EXPECT_THAT(r.out, HasSubstr("AI TOPS (NVIDIA, sparse) 1,177 TOPS (rtx4090: 1,321 TOPS)"));
}

TEST(GpusBuiltin, ChinaAndWorkstationGroups) {
  EXPECT_EQ(ids_of(builtin_gpus("--family china --format json").out),
            (std::vector<std::string>{"rtx5090d", "rtx5090d-v2", "rtx4090d", "l20", "h20", "a800-sxm4-80gb",
                                      "a800-pcie-80gb", "a800-pcie-40gb", "h800-sxm5-80gb", "h800-pcie-80gb"}));
  EXPECT_EQ(ids_of(builtin_gpus("--family workstation --format json").out),
            (std::vector<std::string>{"rtxpro6000", "rtxpro5000", "rtxpro4500", "rtxpro4000", "gb10", "rtx6000ada",
                                      "rtxa6000", "quadro-rtx8000", "quadro-rtx6000", "quadro-rtx5000", "rtxa5500",
                                      "rtxa5000", "rtxa4500", "rtxa4000", "titanv"}));
}

TEST(GpusBuiltin, NamesResolveAsTypedAndNeverToAnotherCard) {
  EXPECT_THAT(builtin_gpus("show h20").out, StartsWith("NVIDIA H20 (h20)\n"));
  EXPECT_THAT(builtin_gpus("show dgx spark").out, StartsWith("NVIDIA GB10 (DGX Spark) (gb10)\n"));
  EXPECT_THAT(builtin_gpus("show 5090d").out, StartsWith("GeForce RTX 5090 D (rtx5090d)\n"));
  // The A10 is its own card (in the catalog for the validation data), never an A100.
  EXPECT_THAT(builtin_gpus("show a10").out, StartsWith("NVIDIA A10 (a10)\n"));
  EXPECT_THAT(builtin_gpus("show a40").out, StartsWith("NVIDIA A40 (a40)\n"));
  EXPECT_THAT(builtin_gpus("show a30").out, StartsWith("NVIDIA A30 (a30)\n"));
  // A name never becomes a card with more words in its name; a name that fits several variants asks which.
  EXPECT_THAT(builtin_gpus("show RTX 4070 Ti").out, StartsWith("GeForce RTX 4070 Ti (rtx4070ti)\n"));
  EXPECT_THAT(builtin_gpus("show L40").out, StartsWith("NVIDIA L40 (l40)\n"));
  CliResult a800 = builtin_gpus("show A800");
  EXPECT_EQ(a800.exit_code, 2);
  EXPECT_THAT(a800.err, StartsWith("gpusage: GPU name 'A800' is ambiguous: it matches a800-sxm4-80gb"));
}

}  // namespace
}  // namespace gpusage::testing
