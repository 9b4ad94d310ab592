// gpusage run predicts for the card NVML reports, that exact card: a laptop GPU by its laptop name, an H100 SXM by
// the name its driver gives it, a 12 GB RTX 3080 and a 16 GB RTX 5060 Ti by their memory (catalog::identify).
#include <gtest/gtest.h>

#include <fstream>

#include "e2e/run_cli.hpp"
#include "e2e/run_harness.hpp"

namespace gpusage::testing {
namespace {

// gpu_busy.json's card renamed: `name`, `memory_bytes` and (when given) `pci_device_id`.
std::string stub_script(const std::string& tag, const std::string& name, double memory_bytes,
                        const std::string& pci = "") {
  json script = read_json(child("gpu_busy.json"));
  json& gpu = script["gpus"][0];
  gpu["name"] = name;
  gpu["memory_total_bytes"] = static_cast<std::uint64_t>(memory_bytes);
  if (!pci.empty()) gpu["pci_device_id"] = pci;
  const std::string path = temp_path(tag + ".json");
  std::ofstream(path) << script.dump();
  return path;
}

struct Reported {
  std::string name;
  double memory_bytes;
  std::string pci;
  std::string id;        // the catalog card it is
  std::string gpu_name;  // that card's name
};

TEST(RunE2E, TheExpectationIsForTheExactCardNvmlReports) {
  const double gib = 1024.0 * 1024 * 1024;
  const std::vector<Reported> cards{
      {"NVIDIA GeForce RTX 4090 Laptop GPU", 15.99 * gib, "", "rtx4090-laptop", "GeForce RTX 4090 Laptop GPU"},
      {"NVIDIA H100 80GB HBM3", 79.65 * gib, "", "h100-sxm5-80gb", "NVIDIA H100 SXM5 80 GB"},
      {"NVIDIA GeForce RTX 3080", 12 * gib, "", "rtx3080-12gb", "GeForce RTX 3080 12 GB"},
      {"NVIDIA GeForce RTX 3080", 12 * gib, "220a", "rtx3080-12gb", "GeForce RTX 3080 12 GB"},
      {"NVIDIA GeForce RTX 5060 Ti", 15.93 * gib, "", "rtx5060ti-16gb", "GeForce RTX 5060 Ti 16 GB"},
  };
  int n = 0;
  for (const Reported& card : cards) {
    const std::string tag = "identify-" + std::to_string(n++);
    const RunResult r = run_gpusage(tag, {"--model", "resnet50", "--batch", "64", "--precision", "fp16"},
                                    {"sh", "-c", "echo trained"}, stub_script(tag, card.name, card.memory_bytes, card.pci));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "gpusage: predicting for " + card.gpu_name + " (" + card.id + "; NVML: " + card.name +
                                    ")\n"))
        << card.name << ": " << r.err;
    const json summary = read_json(r.dir + "/summary.json");
    EXPECT_EQ(summary["expectation"]["gpu"], card.id) << card.name;
  }
}

TEST(RunE2E, AGuessedCardIsSaid) {
  // A 48 GB "RTX 4090" is a memory-modified board: planned with its 48 GB, and said so.
  const std::string script = stub_script("identify-modified", "NVIDIA GeForce RTX 4090", 47.99 * 1024 * 1024 * 1024);
  const RunResult r = run_gpusage("identify-modified", {"--model", "resnet50", "--batch", "64", "--precision", "fp16"},
                                  {"sh", "-c", "echo trained"}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: predicting for GeForce RTX 4090 (48 GB, modified) (rtx4090@48gb; NVML: NVIDIA "
                              "GeForce RTX 4090); 'NVIDIA GeForce RTX 4090' reports 48.0 GiB, the catalog's rtx4090 "
                              "has 24 GB: planned as a memory-modified rtx4090@48gb\n"))
      << r.err;
  EXPECT_EQ(read_json(r.dir + "/summary.json")["expectation"]["gpu"], "rtx4090@48gb");
}

// Issue 49's check: for the card NVML reports, run's expectation is plan's prediction for that card (one prediction
// path), for a vision and an LLM fine-tuning setup.
TEST(RunE2E, TheExpectationOnTheNvmlCardIsPlansPredictionForIt) {
  const double gib = 1024.0 * 1024 * 1024;
  const std::vector<Reported> cards{
      {"NVIDIA GeForce RTX 3080", 12 * gib, "", "rtx3080-12gb", ""},
      {"NVIDIA GeForce RTX 5060 Ti", 15.93 * gib, "", "rtx5060ti-16gb", ""},
      {"NVIDIA GeForce RTX 4090", 23.99 * gib, "", "rtx4090", ""},
      {"NVIDIA H100 80GB HBM3", 79.65 * gib, "", "h100-sxm5-80gb", ""},
  };
  const std::vector<std::vector<std::string>> setups{
      {"--model", "resnet50", "--batch", "64", "--precision", "fp16"},
      // --checkpointing takes an optional value: CLI11 would swallow a "--" right after it (the run's command
      // separator), so it is not last here.
      {"--model", "llama3-8b", "--qlora", "--checkpointing", "--batch", "2", "--seq-len", "2048", "--precision",
       "bf16"},
  };
  int n = 0;
  for (const Reported& card : cards) {
    for (const auto& setup : setups) {
      const std::string tag = "identify-plan-" + std::to_string(n++);
      const RunResult r = run_gpusage(tag, setup, {"sh", "-c", "echo trained"},
                                      stub_script(tag, card.name, card.memory_bytes, card.pci));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const json expectation = read_json(r.dir + "/summary.json")["expectation"];
      ASSERT_EQ(expectation["gpu"], card.id) << card.name;
      std::string plan_args = "plan";
      for (const std::string& word : setup) plan_args += " " + (word == "--model" ? std::string() : word);
      const CliResult plan = run_cli(plan_args + " --gpu " + card.id + " --format json");
      ASSERT_EQ(plan.exit_code, 0) << plan_args << ": " << plan.err;
      const double planned = json::parse(plan.out)["results"][0]["throughput"].get<double>();
      const double expected = expectation["throughput"]["predicted"].get<double>();
      EXPECT_NEAR(expected, planned, 0.005 * planned) << card.name << " " << plan_args;
    }
  }
}

}  // namespace
}  // namespace gpusage::testing
