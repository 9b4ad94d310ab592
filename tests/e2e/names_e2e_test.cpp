// End-to-end: the names, typos and formats a fine-tuner types (issue 50): Hugging Face ids, case and
// punctuation variants, misspelt options and commands, --parallel aliases, --format csv, enum help in words.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

constexpr const char* kCard = " --gpu rtx4090 --seq-len 2048 --precision bf16";

bool one_line(const std::string& s) { return std::count(s.begin(), s.end(), '\n') == 1; }

// The "Done when": four Hub ids plan without a config file.
TEST(NamesE2E, HubIdsPlanWithoutAConfigFile) {
  for (const std::string model :
       {"meta-llama/Llama-3.1-8B --qlora", "Qwen/Qwen2.5-7B-Instruct --lora 16",
        "meta-llama/Llama-3.3-70B-Instruct --qlora", "google/gemma-2-9b-it --qlora"}) {
    const CliResult r = run_cli("plan " + model + kCard + " --format json");
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_GT(doc["results"][0]["throughput"].get<double>(), 0) << model;
  }
  const CliResult llama70 = run_cli(std::string("plan meta-llama/Llama-3.3-70B-Instruct --qlora") + kCard);
  EXPECT_NE(llama70.out.find("meta-llama/Llama-3.3-70B-Instruct: 70"), std::string::npos) << llama70.out;
}

TEST(NamesE2E, CaseAndPunctuationVariantsAndPrecisionInAnyCase) {
  for (const std::string model : {"Llama-3.1-8B", "llama3.1-8b", "qwen2.5-7B"}) {
    const CliResult r = run_cli("plan " + model + " --qlora --gpu rtx4090 --seq-len 2048 --precision BF16");
    EXPECT_EQ(r.exit_code, 0) << model << ": " << r.err;
  }
  const CliResult fp16 = run_cli("plan resnet50 --gpu rtx4090 --batch 32 --precision FP16");
  EXPECT_EQ(fp16.exit_code, 0) << fp16.err;
  EXPECT_NE(fp16.out.find("fp16 training"), std::string::npos) << fp16.out;
}

TEST(NamesE2E, AnUnknownModelGetsThreeNamesOnOneLine) {
  const CliResult r = run_cli("plan meta-llama/Llama-9-8B --gpu rtx4090");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("did you mean "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("resnet18"), std::string::npos) << r.err;
}

TEST(NamesE2E, AMisspeltOptionIsAnsweredWithTheNearestOne) {
  const CliResult r = run_cli("plan gpt2 --gpu rtx4090 --seqlen 2048");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpusage: plan: unknown option '--seqlen'; did you mean --seq-len? (see gpusage plan --help)\n");
}

TEST(NamesE2E, AMisspeltCommandIsAnsweredWithTheNearestOne) {
  const CliResult r = run_cli("plna gpt2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: unknown command 'plna'; did you mean plan? (see gpusage --help)\n");
  EXPECT_EQ(run_cli("gpus shwo rtx5090").err,
            "gpusage: gpus: unknown command 'shwo'; did you mean show? (see gpusage gpus --help)\n");
  EXPECT_EQ(run_cli("--verison").err,
            "gpusage: unknown option '--verison'; did you mean --version? (see gpusage --help)\n");
}

// An alias plans what its mode plans: the same memory, different from plain data parallel.
TEST(NamesE2E, ParallelAliasesAreTaken) {
  const auto memory = [](const std::string& name) {
    const CliResult r = run_cli(
        "plan llama3-8b --gpu rtx4090 --gpus 4 --seq-len 1024 --batch 1 --precision bf16 --format json "
        "--parallel " +
        name);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["results"][0]["memory"]["total"].get<double>()
                            : -1.0;
  };
  const double fsdp = memory("fsdp"), zero2 = memory("zero2");
  EXPECT_NE(fsdp, memory("ddp"));
  EXPECT_EQ(memory("zero3"), fsdp);
  EXPECT_EQ(memory("fsdp2"), fsdp);
  EXPECT_EQ(memory("ds_z2"), zero2);
  const CliResult bad = run_cli("plan llama3-8b --gpu rtx4090 --gpus 4 --parallel zero9");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(one_line(bad.err)) << bad.err;
  EXPECT_NE(bad.err.find("did you mean"), std::string::npos) << bad.err;
}

TEST(NamesE2E, PlanAndGuideWriteCsv) {
  const CliResult plan = run_cli("plan resnet50 --gpu rtx4090,rtx5090 --batch 32,64 --format csv");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(plan.out.substr(0, plan.out.find('\n')),
            "gpu,gpu_name,gpus,batch,accumulation_steps,precision,fits,memory_gib,vram_gib,max_batch,throughput_img/s,"
            "throughput_low_img/s,throughput_high_img/s,tokens_per_s,step_ms,epoch_s,energy_kwh_per_epoch,bound");
  EXPECT_EQ(std::count(plan.out.begin(), plan.out.end(), '\n'), 5);  // header + 2 cards x 2 batches
  const CliResult guide = run_cli("guide --format csv");
  ASSERT_EQ(guide.exit_code, 0) << guide.err;
  EXPECT_EQ(guide.out.rfind("gpu,gpu_name,gpus,batch,", 0), 0u) << guide.out;
  const CliResult json = run_cli("guide --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_FALSE(nlohmann::json::parse(json.out)["gpus"].empty());
}

TEST(NamesE2E, EnumHelpIsInWords) {
  for (const std::string command :
       {"guide", "gpus", "plan", "validate", "monitor", "doctor", "bench", "report", "run", "fit-batch"}) {
    const CliResult r = run_cli(command + " --help");
    ASSERT_EQ(r.exit_code, 0) << command;
    EXPECT_EQ(r.out.find("ENUM:value in"), std::string::npos) << command << ":\n" << r.out;
  }
  EXPECT_NE(run_cli("plan --help").out.find("FORMAT:{table,csv,json}"), std::string::npos);
  EXPECT_NE(run_cli("bench --help").out.find("--device DEVICE:{cpu,cuda}"), std::string::npos);
}

}  // namespace
}  // namespace gpusage::testing
