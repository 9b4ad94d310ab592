// cli/: what the command line is parsed into, and the exit codes of the edge (2 for a user's mistake).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/app.hpp"
#include "cli/gpus_view.hpp"
#include "cli/options.hpp"
#include "cli/setup_binder.hpp"
#include "cli/plan_view.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/setup/plan.hpp"
#include "parse_setup.hpp"

namespace gpusage::cli {
namespace {

using ::testing::HasSubstr;

using setup::hf_config_file;
using setup::TrainingSetup;


TEST(TrainingSetup, ParsesTheModelAndTheTrainingSetup) {
  const TrainingSetup o = parse_run({"resnet50", "--precision", "bf16", "--gpus", "4", "--checkpointing"});
  EXPECT_EQ(o.model, "resnet50");
  const estimate::TrainingConfig c = o.training_config(o.build_workload());
  EXPECT_EQ(c.precision, catalog::Precision::bf16);
  EXPECT_EQ(c.gpus_per_node, 4);
  EXPECT_TRUE(c.checkpointing);
  EXPECT_EQ(c.batch_per_gpu, 1);
}

TEST(TrainingSetup, TheFineTuningRecipeOptionsReachTheTrainingConfig) {
  const TrainingSetup o =
      parse_run({"llama3.2-1b", "--seq-len", "512", "--master-weights", "bf16", "--optimizer", "paged_adamw8bit",
                 "--loss", "fused", "--qlora", "--lora-targets", "mlp", "--accumulate", "4", "--checkpointing",
                 "every:2", "--tokens-per-sample", "300"});
  const workload::Workload w = o.build_workload();
  const estimate::TrainingConfig c = o.training_config(w);
  EXPECT_EQ(c.master_weights, estimate::MasterWeights::bf16);
  EXPECT_EQ(c.optimizer, estimate::Optimizer::paged_adamw8bit);
  EXPECT_EQ(c.loss, estimate::LossImpl::fused);
  EXPECT_EQ(c.lora_targets, estimate::LoraTargets::mlp);
  EXPECT_EQ(c.accumulation_steps, 4);
  EXPECT_TRUE(c.checkpointing);
  EXPECT_FALSE(c.selective_checkpointing);
  EXPECT_EQ(c.checkpoint_every, 2);
  ASSERT_TRUE(o.build_timed_workload(w));
  EXPECT_EQ(o.build_timed_workload(w)->seq_len, 300);
  const TrainingSetup selective = parse_run({"llama3.2-1b", "--checkpointing", "selective"});
  EXPECT_TRUE(selective.training_config(selective.build_workload()).selective_checkpointing);
}

TEST(TrainingSetup, RecipeMistakesNameTheValueAndWhatIsAccepted) {
  auto error = [](std::vector<std::string> args) {
    const TrainingSetup o = parse_run(std::move(args));
    try {
      const workload::Workload w = o.build_workload();
      o.training_config(w);
      o.build_timed_workload(w);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  EXPECT_EQ(error({"gpt2", "--checkpointing", "every:0"}),
            "--checkpointing 'every:0' is not one of full, selective, every:N (N from 1 to 1000), none (give the "
            "model before a bare --checkpointing)");
  EXPECT_EQ(error({"gpt2", "--lora-targets", "attn"}),
            "--lora-targets attn needs --lora RANK or --qlora (without them every weight trains)");
  EXPECT_EQ(error({"resnet50", "--loss", "fused"}),
            "--loss fused applies to language models' vocabulary logits; ResNet-50 is a vision model");
  EXPECT_EQ(error({"gpt2", "--seq-len", "512", "--tokens-per-sample", "600"}),
            "--tokens-per-sample 600 is above the sequence length 512: give at most --seq-len");
  EXPECT_EQ(error({"gpt2", "--optimizer-in-backward", "--accumulate", "2"}),
            "--optimizer-in-backward steps on every micro-batch's gradients, so it cannot accumulate: drop "
            "--accumulate 2 or the flag");
}

TEST(TrainingSetup, TheOptimizerDefaultsByDomain) {
  const TrainingSetup vision = parse_run({"resnet50"});
  EXPECT_EQ(vision.training_config(vision.build_workload()).optimizer, estimate::Optimizer::momentum);
  const TrainingSetup language = parse_run({"gpt2"});
  EXPECT_EQ(language.training_config(language.build_workload()).optimizer, estimate::Optimizer::adamw);
}

TEST(TrainingSetup, NoModelIsAnInputErrorThatSaysWhatToGive) {
  const TrainingSetup o = parse_run({});
  try {
    o.build_workload();
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "which model? give a zoo id (e.g. resnet50), --hf-config FILE or --workload FILE");
  }
}

TEST(TrainingSetup, AModelAndAnHfConfigTogetherAreRefused) {
  const TrainingSetup o = parse_run({"resnet50", "--hf-config", std::string(GPUSAGE_SOURCE_DIR) + "/README.md"});
  EXPECT_THROW(o.build_workload(), InputError);
}

// A cache entry without refs/main (a revision downloaded by hash) is read from its only snapshot; refs/main's
// hash is trimmed of a trailing newline.
TEST(HfConfigFile, ACacheEntryResolvesToItsSnapshotsConfig) {
  namespace fs = std::filesystem;
  const fs::path entry = fs::temp_directory_path() / ("gpusage-cli-test-" + std::to_string(::getpid())) /
                         "models--Qwen--Qwen3-8B";
  fs::create_directories(entry / "snapshots" / "abc");
  std::ofstream(entry / "snapshots" / "abc" / "config.json") << "{}";
  EXPECT_EQ(hf_config_file(entry.string()), (entry / "snapshots" / "abc" / "config.json").string());
  fs::create_directories(entry / "refs");
  fs::create_directories(entry / "snapshots" / "def");
  std::ofstream(entry / "snapshots" / "def" / "config.json") << "{}";
  std::ofstream(entry / "refs" / "main") << "def\n";
  EXPECT_EQ(hf_config_file(entry.string()), (entry / "snapshots" / "def" / "config.json").string());
  const std::string file = (entry / "snapshots" / "def" / "config.json").string();
  EXPECT_EQ(hf_config_file(file), file);
  std::ofstream(entry / "refs" / "main") << "0123";
  EXPECT_THAT([&] {
    try {
      hf_config_file(entry.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  }(),
              HasSubstr("snapshot '" + (entry / "snapshots" / "0123").string() + "' has no config.json"));
  fs::remove_all(entry.parent_path());
}

TEST(TrainingSetup, APrecisionPlanDoesNotModelIsRefusedByTheParser) {
  EXPECT_THROW(parse_run({"resnet50", "--precision", "int8"}), CLI::ValidationError);
  EXPECT_THROW(parse_run({"resnet50", "--resolution", "0"}), CLI::ValidationError);
}

TEST(RunPlan, ListedBatchesArePredictedInOrderOnEachGpu) {
  const TrainingSetup o = parse_run({"resnet50"});
  const catalog::Catalog& catalog = catalog::Catalog::active();
  estimate::SweepRequest request;
  request.gpus = {&catalog.resolve("RTX 5090"), &catalog.resolve("RTX 4090")};
  request.batches = {16, 64};
  const estimate::Sweep sweep = setup::run_plan(o, request);
  ASSERT_EQ(sweep.predictions.size(), 4u);
  EXPECT_EQ(sweep.predictions[0].config.batch_per_gpu, 16);
  EXPECT_EQ(sweep.predictions[1].config.batch_per_gpu, 64);
  EXPECT_EQ(sweep.predictions[2].gpu->id, catalog.resolve("RTX 4090").id);
  EXPECT_EQ(plan_json(sweep).at("results").size(), 4u);
}

TEST(SelectGpus, AnUnknownFamilyIsNamedWithTheAcceptedOnes) {
  try {
    select_gpus(catalog::Catalog::active(), "rtx 5090", "");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--family: 'rtx 5090' is not one of rtx50, rtx40, rtx30, rtx20, gtx, laptop, datacenter, workstation, china, all");
  }
}

TEST(SelectGpus, GpusWinOverTheFamily) {
  const auto gpus = select_gpus(catalog::Catalog::active(), "rtx40", "RTX 5090");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->id, catalog::Catalog::active().resolve("RTX 5090").id);
}

TEST(ParseMetrics, AnEmptyNameIsRefusedQuotingTheList) {
  EXPECT_THROW(parse_metrics("cuda_cores,,tdp_w"), InputError);
  EXPECT_EQ(parse_metrics("cuda_cores,tdp_w").size(), 2u);
}

TEST(FormatOption, AcceptsOnlyTheFormatsACommandOffers) {
  CLI::App app;
  Format format = Format::json;
  add_format_option(app, format, {Format::table, Format::csv});
  EXPECT_EQ(format, Format::table);  // the first is the default
  app.parse(std::vector<std::string>{"CSV", "--format"});
  EXPECT_EQ(format, Format::csv);
  EXPECT_THROW(app.parse(std::vector<std::string>{"json", "--format"}), CLI::ValidationError);
}

int run_gpusage(std::vector<std::string> args) {
  args.insert(args.begin(), "gpusage");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run(static_cast<int>(argv.size()), argv.data());
}

TEST(App, AUserMistakeExitsWith2) {
  EXPECT_EQ(run_gpusage({"plan", "resnet50", "--batch", "32,x"}), 2);
  EXPECT_EQ(run_gpusage({"plan", "no_such_model"}), 2);
  EXPECT_EQ(run_gpusage({"gpus", "--format", "yaml"}), 2);
}

TEST(App, ABadBatchIsOneLineNamingTheEntryAndTheAcceptedForm) {
  ::testing::internal::CaptureStderr();
  const int code = run_gpusage({"plan", "resnet50", "--batch", "32,0"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_EQ(err, "gpusage: --batch '32,0': '0' is not a batch size; give auto, or whole numbers from 1 to 1048576 "
                 "separated by commas\n");
}

TEST(App, AGoodCommandExitsWith0) {
  ::setenv("COLUMNS", "120", 1);
  EXPECT_EQ(run_gpusage({"plan", "resnet50", "--batch", "32", "--gpu", "RTX 5090", "--format", "json"}), 0);
}

}  // namespace
}  // namespace gpusage::cli
