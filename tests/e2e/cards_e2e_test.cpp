// End-to-end: the cards people own (issue 51). Old and laptop cards plan slower than the cards that replaced
// them, a memory-modified card plans with its memory, names that fit variants a user may not know apart plan the
// documented default and say so, --gpu-power and --gpu-memory are the @Nw and @Ngb suffixes, and attention below
// sm80 is planned as PyTorch's memory-efficient kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

nlohmann::json plan_json(const std::string& args) {
  const CliResult r = run_cli("plan " + args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.out);
}

double resnet_fp16_throughput(const std::string& gpu) {
  return plan_json("resnet50 --batch 64 --precision fp16 --gpu " + gpu)["results"][0]["throughput"].get<double>();
}

bool advises(const nlohmann::json& result, const std::string& text) {
  for (const auto& line : result["advice"]) {
    if (line.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(CardsE2E, AGtx1080TiTrainsResNet50InFp16SlowerThanAnRtx2080Ti) {
  const double pascal = resnet_fp16_throughput("'GTX 1080 Ti'");
  const double turing = resnet_fp16_throughput("'RTX 2080 Ti'");
  EXPECT_GT(pascal, 0);
  EXPECT_LT(pascal, 0.75 * turing) << pascal << " vs " << turing;  // no tensor cores: fp16 at the FP32 rate
}

TEST(CardsE2E, AnRtx4090LaptopIsSlowerThanTheDesktopCardAndSaysWhatPowerItAssumed) {
  const nlohmann::json laptop = plan_json("resnet50 --batch 64 --precision fp16 --gpu 'RTX 4090 Laptop'");
  const double desktop = resnet_fp16_throughput("rtx4090");
  EXPECT_EQ(laptop["results"][0]["gpu"], "rtx4090-laptop");
  EXPECT_LT(laptop["results"][0]["throughput"].get<double>(), 0.7 * desktop);
  EXPECT_TRUE(advises(laptop["results"][0],
                      "assumed: 175 W, the top of the GeForce RTX 4090 Laptop GPU's 80-175 W "
                      "range"))
      << laptop["results"][0]["advice"];
  // --gpu-power picks the laptop's limit: less power, less speed.
  const nlohmann::json at_115 =
      plan_json("resnet50 --batch 64 --precision fp16 --gpu 'RTX 4090 Laptop' --gpu-power 115");
  EXPECT_EQ(at_115["results"][0]["gpu"], "rtx4090-laptop@115w");
  EXPECT_LT(at_115["results"][0]["throughput"].get<double>(), laptop["results"][0]["throughput"].get<double>());
  const CliResult outside = run_cli("plan resnet50 --gpu rtx4090-laptop --gpu-power 200");
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_EQ(outside.err,
            "gpusage: GPU 'rtx4090-laptop@200w': 200 W is outside the GeForce RTX 4090 Laptop GPU's power range of "
            "80-175 W (its laptop's maker sets the limit within it)\n");
}

TEST(CardsE2E, AMemoryModifiedRtx4090PlansWith48GB) {
  for (const std::string gpu : {"rtx4090@48gb", "rtx4090 --gpu-memory 48"}) {
    const nlohmann::json doc = plan_json("llama3-8b --qlora --seq-len 2048 --precision bf16 --batch auto --gpu " + gpu);
    const auto& result = doc["results"][0];
    EXPECT_EQ(result["gpu"], "rtx4090@48gb") << gpu;
    EXPECT_EQ(result["capacity_bytes"].get<double>(), 48.0 * 1024 * 1024 * 1024) << gpu;
    EXPECT_TRUE(advises(result, "is a modified card")) << gpu;
  }
}

TEST(CardsE2E, NamesThatFitUnknowableVariantsPlanTheDefaultAndSayWhich) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"H800", "h800-sxm5-80gb"},
      {"'A800 80GB'", "a800-sxm4-80gb"},
      {"'Tesla P100'", "p100-pcie-16gb"},
      {"'RTX 3080 Laptop'", "rtx3080-laptop-16gb"},
      {"'Tesla P40'", "p40"},
  };
  for (const auto& [typed, id] : cases) {
    const nlohmann::json doc = plan_json("resnet50 --batch 64 --gpu " + typed);
    EXPECT_EQ(doc["results"][0]["gpu"], id) << typed;
    if (id != "p40") {
      EXPECT_TRUE(advises(doc["results"][0], "is taken as the")) << typed;
    }
  }
  const CliResult a800 = run_cli("plan resnet50 --gpu A800");
  EXPECT_EQ(a800.exit_code, 2);
  EXPECT_NE(a800.err.find("'A800' is ambiguous"), std::string::npos) << a800.err;
}

TEST(CardsE2E, AttentionBelowSm80IsPlannedAsTheMemoryEfficientKernel) {
  const std::string setup = "gpt2 --seq-len 1024 --batch 4 --precision fp16 --gpu ";
  const nlohmann::json turing = plan_json(setup + "rtx2080ti");
  EXPECT_TRUE(advises(turing["results"][0], "has no FlashAttention 2 (sm80 and newer)")) << turing;
  EXPECT_FALSE(advises(plan_json(setup + "rtx3090")["results"][0], "FlashAttention"));
  // Memory stays linear in the sequence as with flash: the same activations as an Ampere card's.
  const nlohmann::json ampere = plan_json(setup + "rtx3080ti");
  EXPECT_EQ(turing["results"][0]["memory"]["activations"], ampere["results"][0]["memory"]["activations"]);
}

}  // namespace
}  // namespace gpusage::testing
