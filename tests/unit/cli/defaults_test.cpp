// Honest defaults (issue 50): what plan assumes when the setup does not say is the likeliest run, is resolved in
// the one prediction path (setup::run_plan), and is said in the plan's text and JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/plan_view.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/units.hpp"
#include "core/setup/plan.hpp"
#include "parse_setup.hpp"
#include "report/table.hpp"

namespace gpusage::cli {
namespace {

using ::testing::HasSubstr;
using setup::TrainingSetup;

TrainingSetup parse(std::vector<std::string> args) { return parse_run(std::move(args)); }

estimate::Sweep plan(const TrainingSetup& setup, const std::string& gpus) {
  estimate::SweepRequest request;
  request.batches = {1};
  return setup::run_plan(setup, gpus, request);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

TEST(HonestDefaults, PrecisionIsBf16WhereTheCardHasItElseFp16) {
  const TrainingSetup setup = parse({"llama3.2-1b", "--qlora"});
  EXPECT_EQ(setup.precision, "auto");
  const estimate::Sweep sweep = plan(setup, "rtx4090,rtx2080ti");
  ASSERT_EQ(sweep.predictions.size(), 2u);
  EXPECT_EQ(sweep.predictions[0].config.precision, catalog::Precision::bf16);
  EXPECT_EQ(sweep.predictions[1].config.precision, catalog::Precision::fp16);
  const std::string said = joined(sweep.assumptions);
  EXPECT_THAT(said, HasSubstr("bf16 autocast because the GeForce RTX 4090 supports it (compute capability 8.9)"));
  EXPECT_THAT(said, HasSubstr("fp16 autocast with a loss scaler because the GeForce RTX 2080 Ti has no bfloat16 "
                              "(compute capability 7.5, below 8.0)"));
  // The same card planned at an explicit precision gives the same numbers, and no precision is assumed.
  const estimate::Sweep explicit_bf16 = plan(parse({"llama3.2-1b", "--qlora", "--precision", "bf16"}), "rtx4090");
  EXPECT_DOUBLE_EQ(explicit_bf16.predictions[0].throughput, sweep.predictions[0].throughput);
  EXPECT_DOUBLE_EQ(explicit_bf16.predictions[0].memory.total_bytes(), sweep.predictions[0].memory.total_bytes());
  EXPECT_THAT(joined(explicit_bf16.assumptions), ::testing::Not(HasSubstr("autocast")));
}

TEST(HonestDefaults, ALanguageModelWithoutSeqLenIsPlannedAt2048Tokens) {
  const estimate::Sweep llama = plan(parse({"llama3.1-8b", "--qlora"}), "rtx4090");
  EXPECT_EQ(llama.workload.seq_len, 2048);  // not Llama 3.1's context (capped at 8,192 before)
  EXPECT_THAT(joined(llama.assumptions), HasSubstr("2048 tokens per sample because no --seq-len was given"));
  const estimate::Sweep longer = plan(parse({"llama3.1-8b", "--qlora", "--seq-len", "4096"}), "rtx4090");
  EXPECT_EQ(longer.workload.seq_len, 4096);
  EXPECT_THAT(joined(longer.assumptions), ::testing::Not(HasSubstr("tokens per sample")));
  // GPT-2's context is shorter than the default: its own.
  const estimate::Sweep gpt2 = plan(parse({"gpt2"}), "rtx4090");
  EXPECT_EQ(gpt2.workload.seq_len, 1024);
  EXPECT_THAT(joined(gpt2.assumptions), HasSubstr("1024 tokens per sample (the model's context)"));
}

TEST(HonestDefaults, CheckpointingAndTheOptimizerAreSaidWhenNotGiven) {
  const std::string plain = joined(plan(parse({"llama3.2-1b"}), "rtx4090").assumptions);
  EXPECT_THAT(plain, HasSubstr("no activation checkpointing because --checkpointing was not given"));
  EXPECT_THAT(plain, HasSubstr("AdamW with fp32 states because no --optimizer was given"));
  const std::string given =
      joined(plan(parse({"llama3.2-1b", "--checkpointing", "--optimizer", "adamw8bit"}), "rtx4090").assumptions);
  EXPECT_THAT(given, ::testing::Not(HasSubstr("checkpointing")));
  EXPECT_THAT(given, ::testing::Not(HasSubstr("--optimizer was given")));
  const std::string vision = joined(plan(parse({"resnet50"}), "rtx4090").assumptions);
  EXPECT_THAT(vision, HasSubstr("224 px images because no --resolution was given"));
  EXPECT_THAT(vision, HasSubstr("SGD with momentum"));
}

TEST(HonestDefaults, PlanPrintsEachAssumptionAndListsThemInJson) {
  const estimate::Sweep sweep = plan(parse({"llama3.2-1b"}), "rtx4090");
  const std::string table = plan_table(sweep, 120);
  EXPECT_THAT(table, HasSubstr("\nassumed: bf16 autocast because the GeForce RTX 4090 supports it"));
  EXPECT_THAT(table, HasSubstr("bf16 training"));
  const nlohmann::json json = plan_json(sweep);
  ASSERT_TRUE(json.at("assumptions").is_array());
  EXPECT_EQ(json.at("assumptions").size(), sweep.assumptions.size());
  EXPECT_GE(sweep.assumptions.size(), 5u);
}

// The table's memory is the peak nvidia-smi shows; the advice's "needs" is what must fit. Where they differ, the
// advice names the table's figure and the difference, so the two read as two quantities.
TEST(HonestDefaults, TheAdvicesNeedsNamesTheTablesPeakBesideIt) {
  const estimate::Sweep sweep = plan(parse({"llama3.1-8b", "--qlora", "--seq-len", "8192"}), "rtx4090");
  const estimate::Prediction& p = sweep.predictions.front();
  ASSERT_FALSE(p.fits);
  ASSERT_GT(p.memory.total_bytes(), p.memory.required_bytes());
  ASSERT_FALSE(p.advice.empty());
  EXPECT_THAT(p.advice.front(), HasSubstr(fmt::format("needs {} but", units::format_gib(p.memory.required_bytes()))));
  EXPECT_THAT(p.advice.front(),
              HasSubstr(fmt::format("the table's {} is the peak nvidia-smi shows", units::format_gib(p.memory.total_bytes()))));
  EXPECT_THAT(plan_table(sweep, 120), HasSubstr(report::format_number(units::to_gib(p.memory.total_bytes()), 1) + " of 24"));
}

// plan --format csv and guide --format csv: plain numbers (no thousands separators, no "x of y" cells) and RFC 4180
// quoting of a name with a comma.
TEST(PlanCsv, NumbersArePlainAndANameWithACommaIsQuoted) {
  estimate::SweepRequest request;
  request.batches = {256};
  const estimate::Sweep sweep = setup::run_plan(parse({"resnet18"}), "b200", request);
  const std::string csv = plan_csv(sweep);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header,
            "gpu,gpu_name,gpus,batch,accumulation_steps,precision,fits,memory_gib,vram_gib,max_batch,throughput_img/s,"
            "throughput_low_img/s,throughput_high_img/s,tokens_per_s,step_ms,epoch_s,energy_kwh_per_epoch,bound");
  const estimate::Prediction& p = sweep.predictions.front();
  ASSERT_GT(p.throughput, 10000);  // above the tables' thousands-separator threshold
  EXPECT_THAT(csv, HasSubstr(",\"NVIDIA B200 (HGX B200, SXM)\",1,256,1,bf16,true,"));
  EXPECT_THAT(csv, HasSubstr(fmt::format(",{:.2f},", p.throughput)));
  EXPECT_EQ(csv.find("\"1"), std::string::npos);  // no quoted number: none has a separator
}

}  // namespace
}  // namespace gpusage::cli
