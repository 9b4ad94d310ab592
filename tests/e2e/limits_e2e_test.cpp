// plan's numeric inputs at their bounds, just inside and just outside: inside answers (exit 0), outside is
// one line on stderr naming the option and exit 2. The config.json size fields have their own table in
// tests/unit/workload/hf_limits_test.cpp; here the billion-layer config goes through the whole CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Bound {
  std::string command;  // plan's arguments before the option
  std::string option;
  std::vector<std::string> accepted;  // the bound and just inside it
  std::vector<std::string> refused;   // just outside, and past the low end
};

int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(PlanLimits, EveryNumericOptionAcceptsItsBoundAndRefusesOnePastIt) {
  const std::vector<Bound> bounds = {
      {"resnet50 --batch 32", "--resolution", {"8192", "8160"}, {"8193", "0"}},
      {"llama3-8b --qlora --batch 1", "--seq-len", {"16777216", "16777215"}, {"16777217", "0"}},
      {"resnet50 --batch 32", "--gpus", {"1024", "1023"}, {"1025", "0"}},
      {"resnet50 --batch 32", "--nodes", {"100000", "99999"}, {"100001", "0"}},
      {"llama3-8b --batch 1 --seq-len 512", "--lora", {"4096", "4095"}, {"4097", "0"}},
      {"resnet50 --batch 32", "--dataset-size", {"1e12", "999999999999"}, {"1000000000001", "0.5"}},
      {"resnet50 --batch 32 --nodes 2", "--network-gbps", {"1000000", "999999"}, {"1000001", "0"}},
      {"resnet50", "--target-batch", {"16777216", "16777215"}, {"16777217", "0"}},
      {"resnet50", "--batch", {"1048576", "1048575"}, {"1048577", "0"}},
  };
  for (const Bound& b : bounds) {
    for (const auto& value : b.accepted) {
      CliResult r = run_cli("plan " + b.command + " --gpu rtx5090 " + b.option + " " + value);
      EXPECT_EQ(r.exit_code, 0) << b.option << " " << value << ": " << r.err;
    }
    for (const auto& value : b.refused) {
      CliResult r = run_cli("plan " + b.command + " --gpu rtx5090 " + b.option + " " + value);
      EXPECT_EQ(r.exit_code, 2) << b.option << " " << value;
      EXPECT_THAT(r.err, HasSubstr(b.option)) << value;
      EXPECT_EQ(lines(r.err), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = (fs::path(GPUSAGE_BINARY_DIR) / ("e2e-limits-" + std::to_string(::getpid()) + "-" + name)).string();
  std::ofstream(path) << text;
  return path;
}

TEST(PlanLimits, ABillionLayerConfigIsOneLineErrorNotAnAttemptToBuildIt) {
  std::string path = write_file("big.json", R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_hidden_layers": 1000000000, "num_attention_heads": 32, "vocab_size": 32000})");
  CliResult r = run_cli("plan --hf-config " + path + " --batch auto --gpu rtx5090");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: config.json field 'num_hidden_layers' is 1000000000; expected an integer from 1 to 1024\n");
  fs::remove(path);
}

TEST(PlanLimits, AConfigAtEveryBoundIsAnswered) {
  std::string path = write_file("largest.json", R"({"model_type": "llama", "hidden_size": 131072,
    "intermediate_size": 1048576, "num_hidden_layers": 1024, "num_attention_heads": 4096,
    "num_key_value_heads": 4096, "head_dim": 16384, "vocab_size": 16777216, "max_position_embeddings": 16777216})");
  CliResult r = run_cli("plan --hf-config " + path + " --batch auto --gpu rtx5090,h100-sxm5-80gb --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"gpu\""));
  fs::remove(path);
}

TEST(PlanLimits, AnOversizedConfigFileIsRefusedBeforeItIsRead) {
  std::string path = write_file("huge.json", std::string((16u << 20) + 1, ' '));
  CliResult r = run_cli("plan --hf-config " + path + " --gpu rtx5090");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is 16777217 bytes; accepted: up to 16777216 bytes (16 MiB)"));
  EXPECT_EQ(lines(r.err), 1) << r.err;
  fs::remove(path);
}

}  // namespace
}  // namespace gpusage::testing
