// End-to-end: plan's fine-tuning recipe options as a user types them (issue 27).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

nlohmann::json plan_json(const std::string& args) {
  auto r = run_cli("plan " + args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.out)["results"][0];
}

TEST(PlanFinetuneE2E, AccumulateHoldsTheBatch) {
  auto p = plan_json("llama3.2-1b --gpu rtx4090 --seq-len 1024 --batch 2 --accumulate 8 --precision bf16");
  EXPECT_EQ(p["batch"], 2);
  EXPECT_EQ(p["accumulation_steps"], 8);
  EXPECT_EQ(p["effective_batch"], 16);
}

TEST(PlanFinetuneE2E, ABatchGivenWithATargetBatchIsHeldAndAccumulationMakesUpTheRest) {
  auto p = plan_json("llama3.2-1b --gpu rtx4090 --seq-len 1024 --batch 2 --target-batch 32 --precision bf16");
  EXPECT_EQ(p["batch"], 2);
  EXPECT_EQ(p["accumulation_steps"], 16);
  auto q = plan_json("llama3.2-1b --gpu rtx4090 --seq-len 1024 --accumulate 4 --target-batch 32 --precision bf16");
  EXPECT_EQ(q["batch"], 8);
  EXPECT_EQ(q["accumulation_steps"], 4);
}

TEST(PlanFinetuneE2E, MemoryComesAsAllocatedReservedAndNvidiaSmi) {
  auto m = plan_json("llama3.1-8b --gpu rtx4090 --qlora --seq-len 2048 --batch 2 --precision bf16")["memory"];
  EXPECT_LT(m["allocated"].get<double>(), m["reserved"].get<double>());
  EXPECT_LT(m["reserved"].get<double>(), m["nvidia_smi"].get<double>());
  EXPECT_EQ(m["nvidia_smi"], m["total"]);
  auto table = run_cli("plan llama3.1-8b --gpu rtx4090 --qlora --seq-len 2048 --batch 2 --precision bf16");
  EXPECT_NE(table.out.find("allocated (torch.cuda.max_memory_allocated)"), std::string::npos) << table.out;
}

TEST(PlanFinetuneE2E, PureBf16HalvesAFullFineTunesStateAndQloraCostsTimeOverLora) {
  const std::string base = "llama3.2-1b --gpu h100-sxm5-80gb --seq-len 2048 --batch 4 --precision bf16";
  auto mixed = plan_json(base)["memory"];
  auto pure = plan_json(base + " --master-weights bf16")["memory"];
  EXPECT_DOUBLE_EQ(pure["weights"].get<double>() * 2, mixed["weights"].get<double>());
  EXPECT_DOUBLE_EQ(pure["optimizer"].get<double>() * 2, mixed["optimizer"].get<double>());
  auto lora = plan_json(base + " --lora 16");
  auto qlora = plan_json(base + " --qlora");
  EXPECT_GT(qlora["step_time_s"].get<double>(), lora["step_time_s"].get<double>());
  EXPECT_LT(qlora["memory"]["weights"].get<double>(), lora["memory"]["weights"].get<double>());
}

TEST(PlanFinetuneE2E, FusedLossAndSelectiveCheckpointingMoveMemoryTheRightWay) {
  const std::string base = "qwen2.5-7b --gpu h100-sxm5-80gb --seq-len 4096 --batch 2 --precision bf16 --lora 16";
  const double plain = plan_json(base)["memory"]["activations"].get<double>();
  const double fused = plan_json(base + " --loss fused")["memory"]["activations"].get<double>();
  EXPECT_LT(fused, plain);
  const double full = plan_json(base + " --checkpointing full")["memory"]["activations"].get<double>();
  const double selective = plan_json(base + " --checkpointing selective")["memory"]["activations"].get<double>();
  EXPECT_LT(full, selective);
  EXPECT_LT(selective, plain);
}

TEST(PlanFinetuneE2E, TokensPerSampleSpeedsUpTheStepButNotTheMemory) {
  const std::string base = "llama3.2-3b --gpu rtx5090 --seq-len 2048 --batch 2 --precision bf16 --qlora";
  auto padded = plan_json(base);
  auto packed = plan_json(base + " --tokens-per-sample 512");
  EXPECT_EQ(padded["memory"], packed["memory"]);
  EXPECT_LT(packed["step_time_s"].get<double>(), padded["step_time_s"].get<double>());
}

TEST(PlanFinetuneE2E, TwoRtx3090sWithoutTheirBridgeAllReduceOverPcie) {
  const std::string base = "llama2-7b --gpu rtx3090 --gpus 2 --lora 64 --precision bf16 --master-weights bf16 "
                           "--batch 1 --seq-len 512 --checkpointing --parallel fsdp";
  auto bridged = plan_json(base);
  auto pcie = plan_json(base + " --interconnect pcie");
  EXPECT_EQ(bridged["step_time_s"], plan_json(base + " --interconnect card")["step_time_s"]);
  EXPECT_GT(pcie["time"]["communication_s"].get<double>(), bridged["time"]["communication_s"].get<double>());
  EXPECT_LT(pcie["throughput"].get<double>(), bridged["throughput"].get<double>());
  auto r = run_cli("plan llama2-7b --gpu rtx4090 --gpus 2 --interconnect nvlink");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --interconnect nvlink: GeForce RTX 4090 has no NVLink (accepted for it: card or pcie)\n");
}

TEST(PlanFinetuneE2E, RecipeMistakesAreOneLineAndExitTwo) {
  for (const char* args : {"plan gpt2 --master-weights fp16", "plan gpt2 --loss liger", "plan gpt2 --qlora --lora-targets qkv",
                           "plan gpt2 --optimizer adam8bit", "plan gpt2 --checkpointing every:x",
                           "plan gpt2 --batch 2 --target-batch 31", "plan gpt2 --batch 2 --accumulate 4 --target-batch 16",
                           "plan gpt2 --tokens-per-sample 5000"}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  EXPECT_EQ(run_cli("plan gpt2 --gpu rtx4090 --batch 2 --target-batch 31").err,
            "gpusage: --target-batch 31 is not a multiple of --batch 2 x 1 GPU(s) = 2\n");
}

}  // namespace
}  // namespace gpusage::testing
