// A printed estimate never lies outside its own printed range (issue 50: "19.2 (19.3-25.2)"), over many
// setups: vision and language models, adapters and full training, precisions whose held-out errors lean one
// way (ResNet fp16 on Hopper, ViT, VGG, MobileNet, ...), every card of the catalog, one GPU and eight. Checked
// as printed, after rounding: plan's throughput against its 80% range (plan --format csv), and every
// "estimate (low-high)" cell of the cost table and of the buy-or-rent table.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cost_view.hpp"
#include "cli/plan_view.hpp"
#include "core/common/text.hpp"
#include "core/setup/plan.hpp"

namespace gpusage::cli {
namespace {

struct Case {
  std::string model;
  std::string precision;
  std::string batch;
  bool qlora = false;
  std::optional<int> lora;
  int seq_len = 0;
};

const std::vector<Case> kCases = {
    {"resnet50", "fp16", "64", false, std::nullopt, 0},
    {"resnet50", "tf32", "64", false, std::nullopt, 0},
    {"resnet50", "fp32", "32", false, std::nullopt, 0},
    {"vit_b_16", "fp16", "32", false, std::nullopt, 0},
    {"vit_b_16", "tf32", "32", false, std::nullopt, 0},
    {"vgg16", "fp16", "32", false, std::nullopt, 0},
    {"mobilenet_v2", "fp16", "128", false, std::nullopt, 0},
    {"efficientnet_b0", "fp16", "64", false, std::nullopt, 0},
    {"wide_resnet50_2", "fp16", "32", false, std::nullopt, 0},
    {"bert-base", "fp16", "16", false, std::nullopt, 0},
    {"gpt2", "bf16", "8", false, std::nullopt, 0},
    {"llama3.1-8b", "bf16", "1", true, std::nullopt, 2048},
    {"Qwen/Qwen2.5-7B-Instruct", "bf16", "1", false, 16, 2048},
};

double number(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  return std::stod(digits);
}

// "19.2 (19.3-25.2)" -> checks 19.3 <= 19.2 <= 25.2; "26 (15 or more)" -> 15 <= 26. Other cells are skipped.
int expect_inside(const std::string& cell, const std::string& where) {
  static const std::regex closed(R"(^\$?([0-9][0-9,]*(?:\.[0-9]+)?) \(([0-9][0-9,]*(?:\.[0-9]+)?)-([0-9][0-9,]*(?:\.[0-9]+)?)\)$)");
  static const std::regex open(R"(^([0-9][0-9,]*(?:\.[0-9]+)?) \(([0-9][0-9,]*(?:\.[0-9]+)?) or more\)$)");
  std::smatch m;
  if (std::regex_match(cell, m, closed)) {
    EXPECT_LE(number(m[2]), number(m[1])) << where << ": " << cell;
    EXPECT_LE(number(m[1]), number(m[3])) << where << ": " << cell;
    return 1;
  }
  if (std::regex_match(cell, m, open)) {
    EXPECT_LE(number(m[2]), number(m[1])) << where << ": " << cell;
    return 1;
  }
  return 0;
}

setup::TrainingSetup setup_of(const Case& c, const std::string& gpu) {
  setup::TrainingSetup s;
  s.model = c.model;
  s.precision = c.precision;
  s.batch = c.batch;
  s.qlora = c.qlora;
  s.lora = c.lora;
  if (c.seq_len > 0) s.seq_len = c.seq_len;
  s.gpu = gpu;
  return s;
}

estimate::Sweep sweep_of(const setup::TrainingSetup& s) {
  estimate::SweepRequest request;
  request.batches = {std::stoi(s.batch)};
  return setup::run_plan(s, s.gpu, request);
}

// plan --format csv: the throughput column against its low and high columns, as printed.
int check_plan_rows(const estimate::Sweep& sweep, const std::string& where) {
  std::istringstream csv(plan_csv(sweep));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = text::csv_fields(line);
  std::size_t throughput = header.size(), low = header.size(), high = header.size();
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i].rfind("throughput_low_", 0) == 0) low = i;
    else if (header[i].rfind("throughput_high_", 0) == 0) high = i;
    else if (header[i].rfind("throughput_", 0) == 0) throughput = i;
  }
  EXPECT_LT(throughput, header.size()) << line;
  EXPECT_LT(low, header.size()) << line;
  EXPECT_LT(high, header.size()) << line;
  if (throughput == header.size() || low == header.size() || high == header.size()) return 0;
  int checked = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> row = text::csv_fields(line);
    if (row.size() != header.size() || row[throughput].empty()) continue;
    checked += expect_inside(row[throughput] + " (" + row[low] + "-" + row[high] + ")", where + " " + row[0]);
  }
  return checked;
}

int check_table(const report::Table& table, const std::string& where) {
  int checked = 0;
  for (const auto& row : table.rows) {
    for (const auto& cell : row) checked += expect_inside(cell, where + " " + row.front());
  }
  return checked;
}

TEST(EstimateInRange, EveryPrintedEstimateLiesInsideItsPrintedRange) {
  CostOptions options;
  options.enabled = true;
  int plan_cells = 0, cost_cells = 0, pair_cells = 0;
  for (const Case& c : kCases) {
    for (const std::string gpu : {"all", "8xh100-sxm5-80gb,8xrtx4090,4xa100-sxm4-80gb"}) {
      const setup::TrainingSetup s = setup_of(c, gpu);
      const estimate::Sweep sweep = sweep_of(s);
      const std::string where = c.model + " " + c.precision + " on " + gpu;
      plan_cells += check_plan_rows(sweep, where);
      options.tokens.reset();
      options.epochs.reset();
      if (sweep.workload.domain == workload::Domain::language) {
        options.tokens = 1e8;
      } else {
        options.epochs = 90;
      }
      const CostReport report = build_cost_report(sweep, options, 0, cost::builtin_price_book(), "2026-12-07");
      cost_cells += check_table(cost_table_model(report), where);
      pair_cells += check_table(buy_or_rent_table(report), where);
    }
  }
  // The cases reach every kind of figure: throughput ranges, wall times and bills, break-evens.
  EXPECT_GT(plan_cells, 1000);
  EXPECT_GT(cost_cells, 1000);
  EXPECT_GT(pair_cells, 50);
}

}  // namespace
}  // namespace gpusage::cli
