// End-to-end: plan's fine-tuning recipe options as a user types them (issue 27).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

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

// universal-llm-trainer's loop: nn.CrossEntropyLoss on a pure-bf16 Llama's logits, no upcast. Its 16-bit loss
// holds less than the plain fp32 one; under autocast (fp32 master weights) it cannot exist and is refused.
TEST(PlanFinetuneE2E, Plain16LossHoldsLessAndNeedsAPureSixteenBitModel) {
  const std::string base = "llama3.1-8b --gpu h100-sxm5-80gb --seq-len 8192 --batch 2 --precision bf16 --lora 8 "
                           "--master-weights bf16 --checkpointing";
  auto plain = plan_json(base);
  auto sixteen = plan_json(base + " --loss plain16");
  EXPECT_LT(sixteen["memory"]["activations"].get<double>(), plain["memory"]["activations"].get<double>());
  EXPECT_LT(sixteen["memory"]["reserved"].get<double>(), plain["memory"]["reserved"].get<double>());
  auto r = run_cli("plan llama3.1-8b --gpu h100-sxm5-80gb --precision bf16 --loss plain16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpusage: --loss plain16 keeps the loss in the model's 16-bit dtype: it needs --master-weights bf16 and "
            "--precision bf16 or fp16, not --master-weights fp32 --precision bf16 (under autocast cross-entropy runs "
            "in fp32: use --loss plain)\n");
}

// Hugging Face's eager RMSNorm and rotary embedding (the default) move more bytes than fused kernels; the
// memory is the same either way, and the recipe line names the fused choice.
TEST(PlanFinetuneE2E, EagerKernelsAreSlowerThanFusedAndHoldTheSameMemory) {
  const std::string base = "llama3.1-8b --gpu a100-sxm4-80gb --seq-len 2048 --batch 2 --precision bf16 --lora 16";
  auto eager = plan_json(base);
  auto fused = plan_json(base + " --kernels fused");
  EXPECT_EQ(plan_json(base + " --kernels eager")["step_time_s"], eager["step_time_s"]);
  EXPECT_GT(eager["step_time_s"].get<double>(), fused["step_time_s"].get<double>());
  EXPECT_GT(eager["time"]["memory_s"].get<double>(), fused["time"]["memory_s"].get<double>());
  EXPECT_EQ(eager["memory"], fused["memory"]);
  auto table = run_cli("plan " + base + " --kernels fused");
  EXPECT_NE(table.out.find("fused elementwise kernels"), std::string::npos) << table.out;
  auto r = run_cli("plan " + base + " --kernels compiled");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Clipping costs a full fine-tune's optimizer step three sweeps of its gradients (7B bf16 gradients: about
// 40 GB more traffic per step) and a LoRA run next to nothing; the memory does not change.
TEST(PlanFinetuneE2E, ClippingTheGradientNormSlowsAFullFineTuneAndNotLora) {
  const std::string full = "llama2-7b --gpu a100-sxm4-80gb --seq-len 256 --batch 1 --precision bf16 --master-weights bf16";
  auto plain = plan_json(full);
  auto clipped = plan_json(full + " --clip-grad-norm");
  const double extra_s = clipped["time"]["optimizer_s"].get<double>() - plain["time"]["optimizer_s"].get<double>();
  const double gradient_bytes = plain["memory"]["weights"].get<double>();  // bf16 weights and gradients alike
  EXPECT_GT(extra_s, 3 * gradient_bytes / 2039e9);  // at most the A100's whole bandwidth
  EXPECT_LT(extra_s, 3 * gradient_bytes / (0.5 * 2039e9));
  EXPECT_EQ(plain["memory"], clipped["memory"]);
  const std::string lora = "llama2-7b --gpu a100-sxm4-80gb --seq-len 256 --batch 1 --precision bf16 --lora 16";
  const double lora_plain = plan_json(lora)["step_time_s"].get<double>();
  const double lora_clipped = plan_json(lora + " --clip-grad-norm")["step_time_s"].get<double>();
  EXPECT_GT(lora_clipped, lora_plain);
  EXPECT_LT(lora_clipped / lora_plain, 1.01);  // the sweeps launch kernels; the adapters hold few bytes
  auto table = run_cli("plan " + full + " --clip-grad-norm");
  EXPECT_NE(table.out.find("gradient norm clipped"), std::string::npos) << table.out;
}

// torch.optim's default foreach AdamW sweeps the states once per op of the update: a 7B full fine-tune's step pays
// 72 B per parameter against the fused kernel's 28 (fp32 masters and states); the fused step also holds no sqrt(v)
// list, so its peak is lower. A LoRA run's step barely moves. A bad value is one line and exit code 2.
TEST(PlanFinetuneE2E, TheFusedOptimizerStepIsFasterAndHoldsNoTemporaries) {
  const std::string full = "llama2-7b --gpu a100-sxm4-80gb --seq-len 256 --batch 1 --precision bf16";
  auto foreach = plan_json(full);
  auto fused = plan_json(full + " --optimizer-impl fused");
  const double saved_s = foreach["time"]["optimizer_s"].get<double>() - fused["time"]["optimizer_s"].get<double>();
  const double params = foreach["memory"]["weights"].get<double>() / 4;  // fp32 master weights
  EXPECT_GT(saved_s, 44 * params / 2039e9);  // at most the A100's whole bandwidth
  EXPECT_LT(saved_s, 44 * params / (0.5 * 2039e9));
  EXPECT_LT(fused["memory"]["total"].get<double>(), foreach["memory"]["total"].get<double>());
  EXPECT_DOUBLE_EQ(fused["memory"]["optimizer_step_temporaries"].get<double>(), 0);
  auto loop = plan_json(full + " --optimizer-impl loop");
  EXPECT_GT(loop["step_time_s"].get<double>(), foreach["step_time_s"].get<double>());  // a kernel per tensor and op
  const std::string lora = "llama2-7b --gpu a100-sxm4-80gb --seq-len 256 --batch 1 --precision bf16 --lora 16";
  const double lora_foreach = plan_json(lora)["step_time_s"].get<double>();
  // The adapters are 0.6% of the parameters: a step of about 60 ms gains about 1 ms.
  EXPECT_LT(lora_foreach / plan_json(lora + " --optimizer-impl fused")["step_time_s"].get<double>(), 1.03);
  auto table = run_cli("plan " + full + " --optimizer-impl fused");
  EXPECT_NE(table.out.find("fused optimizer step"), std::string::npos) << table.out;
  auto r = run_cli("plan " + full + " --optimizer-impl apex");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("apex"), std::string::npos) << r.err;
}

// Without PEFT's k-bit preparation (Unsloth, get_peft_model alone) a QLoRA step keeps its hidden state 16-bit: faster,
// and the embeddings, norms and lm_head take 2 bytes each instead of 4. The flag needs --qlora: one line, exit 2.
TEST(PlanFinetuneE2E, AQloraBaseLeftUnpreparedRunsFasterInLessMemory) {
  const std::string base = "llama3-8b --gpu a100-sxm4-80gb --seq-len 2048 --batch 4 --precision bf16 --qlora --checkpointing";
  auto prepared = plan_json(base);
  auto unprepared = plan_json(base + " --no-kbit-upcast");
  EXPECT_LT(unprepared["step_time_s"].get<double>(), prepared["step_time_s"].get<double>());
  // Llama 3 8B keeps 1.05 B parameters unquantized (embeddings and lm_head, 128,256 x 4,096 each; the norms).
  const double saved = prepared["memory"]["weights"].get<double>() - unprepared["memory"]["weights"].get<double>();
  EXPECT_NEAR(saved / 2, 1.05e9, 0.01e9);
  auto table = run_cli("plan " + base + " --no-kbit-upcast");
  EXPECT_NE(table.out.find("(base not upcast)"), std::string::npos) << table.out;
  auto r = run_cli("plan llama3-8b --gpu a100-sxm4-80gb --lora 16 --no-kbit-upcast");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
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

// A full fine-tune of Llama 3 8B on 8 GPUs: each ZeRO stage holds less than the one before; ZeRO-Offload moves
// the optimizer state to the host, which plan reports with the CPU's step.
TEST(PlanFinetuneE2E, ZeroStagesShardMoreAndOffloadMovesStateToTheHost) {
  const std::string base = "llama3-8b --gpu a100-sxm4-80gb --gpus 8 --precision bf16 --checkpointing --seq-len 2048 --batch 1";
  double previous = plan_json(base)["memory"]["total"].get<double>();
  for (const char* parallel : {"zero1", "zero2", "fsdp"}) {
    const double total = plan_json(base + " --parallel " + parallel)["memory"]["total"].get<double>();
    EXPECT_LT(total, previous) << parallel;
    previous = total;
  }
  auto offload = plan_json(base + " --parallel zero2 --offload optimizer");
  EXPECT_EQ(offload["memory"]["optimizer"], 0.0);
  // fp32 masters, two AdamW states and fp32 gradients of this rank's eighth: 16 B x 8,030,261,248 / 8
  EXPECT_DOUBLE_EQ(offload["memory"]["host"].get<double>(), 16.0 * 8030261248 / 8);
  EXPECT_GT(offload["time"]["optimizer_s"].get<double>(),
            plan_json(base + " --parallel zero2")["time"]["optimizer_s"].get<double>());
  auto table = run_cli("plan " + base + " --parallel zero2 --offload optimizer");
  EXPECT_NE(table.out.find("CPU offload: 15.0 GiB of pinned host memory per GPU"), std::string::npos) << table.out;
}

TEST(PlanFinetuneE2E, OffloadMistakesAreOneLineAndExitTwo) {
  auto r = run_cli("plan llama2-7b --gpu rtx4090 --offload params");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --offload params moves FSDP's weight shards to the host: it needs --parallel fsdp or "
                   "hsdp, not ddp (which keeps whole weights on every GPU)\n");
  for (const char* args : {"plan gpt2 --offload gpu", "plan gpt2 --parallel zero9",
                           "plan gpt2 --offload optimizer --optimizer paged_adamw8bit"}) {
    auto bad = run_cli(args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << args << ": " << bad.err;
  }
}

// A directory laid out as huggingface_hub's cache lays out one model: refs/main names the snapshot, whose
// config.json is a link into blobs/.
// LitGPT's LoRA recipe (dropout 0.05 on query and value): the adapters' dropped-out inputs and masks are kept,
// 3 bytes per input element in bf16, here 2 matrices x 4096 x 32 layers x 2 x 512 tokens.
TEST(PlanFinetuneE2E, LoraDropoutKeepsEachAdaptersDroppedInput) {
  const std::string base = "llama2-7b --gpu a10g --precision bf16 --master-weights bf16 --lora 32 --lora-targets attn "
                           "--seq-len 512 --batch 2 --checkpointing none";
  auto plain = plan_json(base);
  auto dropped = plan_json(base + " --lora-dropout 0.05");
  EXPECT_DOUBLE_EQ(dropped["memory"]["activations"].get<double>() - plain["memory"]["activations"].get<double>(),
                   4.0 * 4096 * 32 * 2 * 512 * 3);
  EXPECT_GT(dropped["step_time_s"].get<double>(), plain["step_time_s"].get<double>());
  auto r = run_cli("plan llama2-7b --lora-dropout 0.1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --lora-dropout 0.1 needs --lora RANK or --qlora (dropout applies to the adapters' input)\n");
  r = run_cli("plan llama2-7b --qlora --lora-dropout 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The allocator keeps the step's largest transient pair cached (docs/MODEL.md): under the plain loss the fp32
// logits and their gradient, 2 x 2 samples x 512 tokens x 32,000 x 4 bytes; under the fused loss the widest
// activation instead, the MLP's 11,008-wide bf16 output. Reserved counts the pair, what has to fit does not.
TEST(PlanFinetuneE2E, ReservedMemoryKeepsTheLargestTransientPairCached) {
  const std::string base = "llama2-7b --gpu a100-sxm4-80gb --precision bf16 --lora 16 --seq-len 512 --batch 2 "
                           "--checkpointing none";
  auto pair = [](const nlohmann::json& p) {
    const auto& m = p["memory"];
    return m["reserved"].get<double>() - m["allocated"].get<double>() -
           0.08 * (m["activations"].get<double>() + m["workspace"].get<double>());
  };
  const auto plain = plan_json(base + " --loss plain");
  const auto fused = plan_json(base + " --loss fused");
  EXPECT_NEAR(pair(plain), 2.0 * 2 * 512 * 32000 * 4, 1e3);
  EXPECT_NEAR(pair(fused), 2.0 * 2 * 512 * 11008 * 2, 1e3);
  // What need not fit: the pair and the releasable part of the 8% reserve (8% less the fitted 6.5%).
  const auto& m = plain["memory"];
  EXPECT_NEAR(m["nvidia_smi"].get<double>() - m["required"].get<double>(),
              pair(plain) + (0.08 - 0.065) * (m["activations"].get<double>() + m["workspace"].get<double>()), 1e3);
}

// validate counts the fine-tuning throughput rows whose measurement lies inside the 80% range plan prints for
// them: a run measured at plan's own prediction is inside, one at ten times it is not.
TEST(PlanFinetuneE2E, ValidateCountsTheRunsInsidePlansPrintedRange) {
  const auto p = plan_json("llama3.2-1b --gpu rtx4090 --precision bf16 --lora 16 --seq-len 1024 --batch 4");
  const double predicted = p["throughput"].get<double>();
  ASSERT_LT(p["throughput_low"].get<double>(), predicted);
  const std::string csv = std::string(GPUSAGE_BINARY_DIR) + "/e2e-validate-ft-range.csv";
  std::ofstream(csv) << "model,gpu,precision,batch_per_gpu,seq_len,metric,value,task,lora_rank,attention,software_date\n"
                     << "llama3.2-1b,rtx4090,bf16,4,1024,train_throughput," << predicted << ",finetune,16,flash,2025-01\n"
                     << "llama3.2-1b,rtx4090,bf16,4,1024,train_throughput," << 10 * predicted
                     << ",finetune,16,flash,2025-01\n";
  auto r = run_cli("validate " + csv + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["fine_tuning"]["throughput"]["rows"], 2);
  EXPECT_EQ(doc["fine_tuning"]["throughput_inside_80_range"], 1);
  ASSERT_EQ(doc["fine_tuning"]["cells"].size(), 1u);  // LoRA on GeForce: the same count, per cell
  EXPECT_EQ(doc["fine_tuning"]["cells"][0]["method"], "lora");
  EXPECT_EQ(doc["fine_tuning"]["cells"][0]["throughput_inside_80_range"], 1);
  r = run_cli("validate " + csv + " --summary");
  std::remove(csv.c_str());
  EXPECT_NE(r.out.find("throughput inside plan's printed 80% range: 1 of 2"), std::string::npos) << r.out;
}

TEST(PlanFinetuneE2E, HfConfigReadsAModelDirectoryOrACacheEntryWithoutNetwork) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(GPUSAGE_BINARY_DIR) / ("e2e-hf-cache-" + std::to_string(::getpid()));
  const fs::path entry = root / "models--TinyLlama--TinyLlama-1.1B-Chat-v1.0";
  const std::string hash = "fe8a4ea1ffedaf415f4da2f062534de366a451e6";
  fs::create_directories(entry / "refs");
  fs::create_directories(entry / "blobs");
  fs::create_directories(entry / "snapshots" / hash);
  fs::create_directories(entry / "snapshots" / "0000000000000000000000000000000000000000");  // an older one
  std::ofstream(entry / "refs" / "main") << hash;  // written without a newline, as huggingface_hub does
  std::ofstream(entry / "blobs" / "cfg") << R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
    "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
    "max_position_embeddings": 2048, "tie_word_embeddings": false})";
  fs::create_symlink("../../blobs/cfg", entry / "snapshots" / hash / "config.json");
  const std::string args = " --gpu a10g --batch 1 --precision bf16 --lora 8";
  const auto cached = plan_json("--hf-config " + entry.string() + args);
  EXPECT_EQ(cached["gpu"], "a10g");
  auto r = run_cli("plan --hf-config " + entry.string() + args + " --format json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["params"], 1100048384LL);  // TinyLlama 1.1B

  // A model directory (what save_pretrained writes) is read as DIR/config.json.
  const auto from_dir = plan_json("--hf-config " + (entry / "snapshots" / hash).string() + args);
  EXPECT_EQ(from_dir["memory"], cached["memory"]);

  // Nothing to read: one line naming the path and what is accepted, exit 2.
  fs::remove(entry / "refs" / "main");
  r = run_cli("plan --hf-config " + entry.string() + args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --hf-config cache entry '" + entry.string() +
                       "' has no refs/main and 2 snapshots; give one snapshot directory (" + entry.string() +
                       "/snapshots/<hash>)\n");
  r = run_cli("plan --hf-config " + root.string() + args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("'" + root.string() + "' has no config.json and no snapshots/"), std::string::npos) << r.err;
  r = run_cli("plan --hf-config " + (root / "missing").string() + args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist; give a config.json, a model directory holding one, or a Hugging Face cache "
                       "entry (models--ORG--NAME)"),
            std::string::npos)
      << r.err;
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpusage::testing
