// gpusage plan --workload FILE: a model traced by gpusage-trace (python/gpusage) planned as the zoo's own. The
// fixture resnet18.json is `gpusage-trace torchvision:resnet18 --input 3x224 --loss cross_entropy` (PyTorch
// 1.13), so these tests hold without PyTorch; tests/python/test_trace.py traces afresh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

using ::testing::HasSubstr;

// The table after its first line (the model's name, which says "traced" for a traced workload), its numbers
// masked: the traced loss keeps its int64 targets too, which moves a figure by 0.01% and can flip its last digit
// (the next test holds the figures to that).
std::string after_first_line(const std::string& text) {
  return std::regex_replace(text.substr(text.find('\n')), std::regex("[0-9]+"), "#");
}

TEST(PlanWorkloadE2E, TracedResNet18PrintsWhatTheZoosResNet18Prints) {
  const auto traced = run_cli("plan --workload " + fixture("workloads/resnet18.json") + " --gpu rtx4090,rtx5090 "
                              "--batch 64,128 --precision bf16");
  // The trace carries its 224 px input; the zoo model is given it, so neither plan assumes a resolution.
  const auto zoo = run_cli("plan resnet18 --gpu rtx4090,rtx5090 --batch 64,128 --precision bf16 --resolution 224");
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  ASSERT_EQ(zoo.exit_code, 0) << zoo.err;
  EXPECT_THAT(traced.out, ::testing::StartsWith("resnet18 (traced): 11.7 M parameters, 3.64 GFLOPs forward"));
  EXPECT_EQ(after_first_line(traced.out), after_first_line(zoo.out));
}

TEST(PlanWorkloadE2E, TracedResNet18TakesCheckpointingFsdpAndAdamwAsTheZooModelDoes) {
  const std::string options = " --gpu h100-sxm5-80gb --batch 256 --checkpointing --gpus 4 --parallel fsdp "
                              "--optimizer adamw --format json";
  const auto traced = run_cli("plan --workload " + fixture("workloads/resnet18.json") + options);
  const auto zoo = run_cli("plan resnet18" + options);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const auto t = nlohmann::json::parse(traced.out)["results"][0];
  const auto z = nlohmann::json::parse(zoo.out)["results"][0];
  EXPECT_EQ(t["max_batch"], z["max_batch"]);
  EXPECT_EQ(t["memory"]["weights"], z["memory"]["weights"]);
  EXPECT_EQ(t["memory"]["optimizer"], z["memory"]["optimizer"]);
  // The traced loss also keeps its int64 targets (8 bytes a sample), which the zoo leaves out.
  EXPECT_NEAR(t["memory"]["total"].get<double>() / z["memory"]["total"].get<double>(), 1, 1e-5);
  EXPECT_NEAR(t["throughput"].get<double>() / z["throughput"].get<double>(), 1, 1e-4);
}

TEST(PlanWorkloadE2E, AnUnknownOpClassIsNamedWithItsShareOfTheFlops) {
  const auto r = run_cli("plan --workload " + fixture("workloads/tiny_mlp.json") + " --gpu rtx4090 --batch 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("traced op class 'custom_scatter' (1 layer, 1.6% of the forward FLOPs)"));
}

TEST(PlanWorkloadE2E, AnOverflowingNumberIsOneLineAndExit2) {
  const std::string path = std::string(GPUSAGE_BINARY_DIR) + "/e2e-overflow-workload.json";
  std::ofstream(path) << R"({"format": "gpusage-workload", "version": 1, "id": "x", "domain": "vision",
                            "layers": [{"name": "a", "op": "conv", "forward_flops": 1e999}]})";
  const auto r = run_cli("plan --workload " + path + " --gpu rtx4090");
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpusage: workload " + path +
                       " is not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'\n");
}

TEST(PlanWorkloadE2E, AWorkloadWithAZooModelOrAResolutionIsRefused) {
  const std::string file = fixture("workloads/resnet18.json");
  auto r = run_cli("plan resnet18 --workload " + file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --workload " + file + ": give one model, a zoo MODEL, --hf-config or --workload\n");
  r = run_cli("plan --workload " + file + " --resolution 64");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--resolution does not apply to --workload"));
}

TEST(PlanWorkloadE2E, GuideReportAndRunTakeATracedWorkloadToo) {
  const std::string file = fixture("workloads/resnet18.json");
  const auto guide = run_cli("guide --workload " + file + " --gpu rtx4090 --batch 64");
  ASSERT_EQ(guide.exit_code, 0) << guide.err;
  EXPECT_THAT(guide.out, HasSubstr("== Will it fit, and how fast? resnet18 (traced) training, predicted =="));
  const std::string page = std::string(GPUSAGE_BINARY_DIR) + "/e2e-traced-report.html";
  const auto report = run_cli("report --workload " + file + " --gpu rtx4090 --out " + page);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(read_text(page), HasSubstr("resnet18 (traced)"));
  std::remove(page.c_str());
  const auto run = run_cli("run --workload " + fixture("workloads/tiny_mlp.json") + " --model resnet50 -- true");
  EXPECT_EQ(run.exit_code, 2);  // one model: --workload excludes --model
}

TEST(PlanWorkloadE2E, AMissingFileIsExit2) {
  const auto r = run_cli("plan --workload /nonexistent/model.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/model.json"));
}

}  // namespace
}  // namespace gpusage::testing
