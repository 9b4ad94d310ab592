// cli/cost_view: the job and price options of plan --cost and guide --cost, and their mistakes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/cost_view.hpp"
#include "core/common/error.hpp"
#include "unit/input_error.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::cli {
namespace {

CostOptions parse_cost(std::vector<std::string> args) {
  CLI::App app;
  CostOptions options;
  options.add_to(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  app.parse(args);
  return options;
}

estimate::Sweep sweep_of(const std::string& model) {
  estimate::Sweep sweep;
  sweep.workload = workload::build(model, {});
  return sweep;
}

using gpusage::testing::input_error_message;

TEST(CostOptions, TheJobIsTokensStepsOrEpochsOverTheDataset) {
  EXPECT_EQ(parse_cost({"--cost", "--tokens", "1e9"}).job(sweep_of("gpt2"), 0).amount, 1e9);
  EXPECT_EQ(parse_cost({"--cost", "--steps", "500"}).job(sweep_of("gpt2"), 0).unit, cost::JobUnit::steps);
  const cost::JobSize epochs = parse_cost({"--cost", "--epochs", "3"}).job(sweep_of("gpt2"), 1000);
  EXPECT_EQ(epochs.unit, cost::JobUnit::samples);
  EXPECT_DOUBLE_EQ(epochs.amount, 3000);
  // A vision model's dataset defaults to ImageNet-1k.
  EXPECT_DOUBLE_EQ(parse_cost({"--cost", "--epochs", "2"}).job(sweep_of("resnet50"), 0).amount, 2 * 1281167.0);
}

TEST(CostOptions, MistakesSayWhatToGive) {
  EXPECT_EQ(input_error_message([] { parse_cost({"--cost"}).job(sweep_of("gpt2"), 0); }),
            "--cost needs the job's size: --tokens T (language models), --steps S, or --epochs N (over --dataset-size)");
  EXPECT_EQ(input_error_message([] { parse_cost({"--cost", "--tokens", "1e9", "--steps", "5"}).job(sweep_of("gpt2"), 0); }),
            "--cost takes one job size: --epochs N, --tokens T or --steps S, not several");
  EXPECT_THAT(input_error_message([] { parse_cost({"--cost", "--epochs", "1"}).job(sweep_of("gpt2"), 0); }),
              ::testing::HasSubstr("needs --dataset-size N"));
  EXPECT_THAT(input_error_message([] { parse_cost({"--tokens", "1e9"}).check_given_with_cost(); }),
              ::testing::HasSubstr("add --cost"));
  EXPECT_NO_THROW(parse_cost({}).check_given_with_cost());
}

TEST(CostOptions, OverridesAreCommaSeparatedOrRepeated) {
  const cost::PriceOverrides o =
      parse_cost({"--cost", "--price", "rtx5090=2199,rtx4090=1500", "--rent", "h100-sxm5-80gb=2.49/h", "--electricity",
                  "0.3/kWh"})
          .overrides();
  EXPECT_DOUBLE_EQ(o.purchase_usd.at("rtx5090"), 2199);
  EXPECT_DOUBLE_EQ(o.purchase_usd.at("rtx4090"), 1500);
  EXPECT_DOUBLE_EQ(o.rent_usd_per_gpu_hour.at("h100-sxm5-80gb"), 2.49);
  EXPECT_DOUBLE_EQ(*o.electricity_usd_per_kwh, 0.3);
}

}  // namespace
}  // namespace gpusage::cli
