// One setup, one prediction, every command: plan, run's expectation, guide, report and the cost table print
// the same figures for the same setup on the same card (setup::run_plan is the one path), over vision, BERT
// and LLM full/LoRA/QLoRA setups on a card with published tensor rates, one with derived rates and a variant.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/text.hpp"
#include "e2e/process.hpp"
#include "e2e/run_cli.hpp"
#include "e2e/run_harness.hpp"

namespace gpusage::testing {
namespace {

struct Door {
  std::string model;
  std::string flags;  // the setup beyond the model, --batch included
};

const std::vector<Door> kSetups = {
    {"resnet50", "--precision fp16 --batch 64"},
    {"bert-base", "--seq-len 128 --precision fp16 --batch 32"},
    {"llama3.2-1b", "--seq-len 1024 --precision bf16 --checkpointing full --batch 2"},
    {"qwen2.5-1.5b", "--seq-len 1024 --precision bf16 --lora 16 --batch 4"},
    {"llama3-8b", "--qlora --seq-len 2048 --precision bf16 --checkpointing full --batch 2"},
};
// rtx5090: published tensor rates; rtx5060ti-16gb: rates the catalog derives; rtx3080-12gb: a variant card.
const std::vector<std::string> kCards = {"rtx5090", "rtx5060ti-16gb", "rtx3080-12gb"};

json plan_json(const Door& d, const std::string& card, const std::string& more = "") {
  const CliResult r = run_cli("plan " + d.model + " " + d.flags + " --gpu " + card + " --format json" + more);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(DoorsE2E, EveryCommandPrintsPlansPredictionForTheSameSetupAndCard) {
  for (const Door& d : kSetups) {
    for (const std::string& card : kCards) {
      SCOPED_TRACE(d.model + " " + d.flags + " on " + card);
      const json plan = plan_json(d, card);
      ASSERT_EQ(plan["results"].size(), 1u);
      const json& p = plan["results"][0];
      const double throughput = p["throughput"].get<double>();
      ASSERT_GT(throughput, 0);

      // run's expectation (the card given with --gpu; the program prints nothing to compare).
      std::vector<std::string> options = {"--gpu", card, "--model", d.model};
      for (const auto& word : text::split(d.flags, ' ')) options.push_back(word);
      const RunResult run = run_gpusage("doors-" + d.model + "-" + card, options, {"sh", "-c", "echo trained"});
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const json expectation = read_json(run.dir + "/summary.json")["expectation"];
      ASSERT_TRUE(expectation.is_object()) << run.err;
      EXPECT_EQ(expectation["throughput"]["predicted"].get<double>(), throughput);
      EXPECT_EQ(expectation["throughput"]["low"], p["throughput_low"]);
      EXPECT_EQ(expectation["memory"]["predicted_bytes"], p["memory"]["total"]);
      // ... and the plan command its summary prints remakes the same prediction.
      const std::string plan_command = expectation["plan_command"].get<std::string>();
      ASSERT_EQ(plan_command.rfind("gpusage plan ", 0), 0u) << plan_command;
      const CliResult again = run_cli(plan_command.substr(std::string("gpusage ").size()) + " --format json");
      ASSERT_EQ(again.exit_code, 0) << again.err;
      EXPECT_EQ(json::parse(again.out)["results"][0]["throughput"].get<double>(), throughput);

      // guide prints plan's table for the same setup (the same text at the same width).
      const CliResult plan_text = run_cli("plan " + d.model + " " + d.flags + " --gpu " + card, "COLUMNS=200");
      const CliResult guide = run_cli("guide " + d.model + " " + d.flags + " --gpu " + card, "COLUMNS=200");
      ASSERT_EQ(guide.exit_code, 0) << guide.err;
      EXPECT_NE(guide.out.find(plan_text.out), std::string::npos) << guide.out << "\n---\n" << plan_text.out;

      // report's training charts carry plan's figure, where the batch fits.
      const std::string page = temp_path("doors-" + d.model + "-" + card + ".html");
      const CliResult report =
          run_cli("report --model " + d.model + " " + d.flags + " --gpu " + card + " --out " + page);
      ASSERT_EQ(report.exit_code, 0) << report.err;
      if (p["fits"].get<bool>()) {
        EXPECT_NE(read_text(page).find("\"throughput\":" + json(throughput).dump()), std::string::npos);
      }

      // The cost table's wall time is the job's samples at plan's throughput.
      const json cost = plan_json(d, card, " --cost --steps 1000")["cost"]["rows"][0];
      if (p["fits"].get<bool>()) {
        EXPECT_DOUBLE_EQ(cost["wall_time_h"]["estimate"].get<double>(),
                         cost["samples"].get<double>() / (throughput * cost["gpus"].get<double>()) / 3600);
      } else {
        EXPECT_FALSE(cost["fits"].get<bool>());
      }
    }
  }
}

// The setup: guide and report show a fitting batch and a throughput on both cards, and price them.
TEST(DoorsE2E, AQLoRALlmFitsInGuideAndReportOnTheCardsPlanFitsItOn) {
  const std::string setup = "llama3.1-8b --qlora --seq-len 2048 --precision bf16 --checkpointing";
  const CliResult plan = run_cli("plan " + setup + " --gpu rtx5090,rtx4090 --batch auto --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  for (const auto& row : json::parse(plan.out)["results"]) ASSERT_TRUE(row["fits"].get<bool>()) << row["gpu"];

  const CliResult guide = run_cli("guide " + setup + " --gpu rtx5090,rtx4090 --cost --tokens 1e8", "COLUMNS=250");
  ASSERT_EQ(guide.exit_code, 0) << guide.err;
  EXPECT_NE(guide.out.find("batch 1 "), std::string::npos) << guide.out;  // the language ladder, from 1
  const std::size_t costs = guide.out.find("== Buy or rent? ==");
  ASSERT_NE(costs, std::string::npos) << guide.out;
  EXPECT_EQ(guide.out.find("does not fit", costs), std::string::npos) << guide.out;  // both cards priced

  const std::string page = temp_path("doors-qlora.html");
  const CliResult report = run_cli("report --model " + setup + " --gpu rtx5090,rtx4090 --cost --tokens 1e8 --out " +
                                   page + " --format json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = read_text(page);
  EXPECT_EQ(html.find("none of the batch sizes fits"), std::string::npos);
  EXPECT_EQ(html.find("does not fit"), std::string::npos);

  const CliResult cost = run_cli("plan " + setup + " --gpu rtx5090,rtx4090 --cost --tokens 1e8 --format json");
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  for (const auto& row : json::parse(cost.out)["cost"]["rows"]) {
    EXPECT_TRUE(row["fits"].get<bool>()) << row["gpu"];
    EXPECT_TRUE(row["wall_time_h"].is_object()) << row["gpu"];
  }
}

}  // namespace
}  // namespace gpusage::testing
