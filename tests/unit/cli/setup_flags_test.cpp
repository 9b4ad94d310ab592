// The training setup prints itself back as flags (TrainingSetup::to_flags) that the one binder
// (cli/setup_binder) parses into the same setup: a property over many seeded random setups, each field
// drawn from its valid values. And a page's command line remakes the page's plan.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/report_pages.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/setup/plan.hpp"

namespace gpusage::setup {
// A setup in a failure message: its flags.
void PrintTo(const TrainingSetup& s, std::ostream* os) { *os << "{" << s.to_flags() << " }"; }
}  // namespace gpusage::setup

namespace gpusage::cli {
namespace {

using setup::TrainingSetup;

// Every option of the setup, as a door that takes them all (plan's, with --target-batch).
SetupDoor every_option() {
  SetupDoor door;
  door.model_positional = true;
  door.gpu_help = "GPUs";
  door.batch_help = "batches";
  door.target_batch_help = "target";
  return door;
}

TrainingSetup parse_args(std::vector<std::string> args) {
  CLI::App app;
  TrainingSetup parsed;
  bind_setup(app, parsed, every_option());
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  app.parse(args);
  return parsed;
}

// The words of a POSIX command line as to_flags writes it: spaces between words, single quotes around a word
// with special characters, '\'' for a quote inside one.
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false, escaped = false;
  for (char c : line) {
    if (quoted) {
      if (c == '\'') quoted = false;
      else word += c;
    } else if (escaped) {
      word += c;  // after a backslash: the character as it is (to_flags writes \' only)
      escaped = false;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\') {
      escaped = in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

class SetupGenerator {
 public:
  explicit SetupGenerator(unsigned seed) : random_(seed) {}

  TrainingSetup next() {
    TrainingSetup s;
    s.model = pick<std::string>({"", "resnet50", "llama3-8b", "gpt2", "bert-base"});
    s.hf_config = pick<std::string>({"", "config.json", "models/my model/config.json", "it's/config.json"});
    s.workload_file = pick<std::string>({"", "convnext.json"});
    s.resolution = maybe<int>({1, 224, 512, 8192});
    s.seq_len = maybe<int>({1, 512, 2048, 1 << 24});
    s.tokens_per_sample = maybe<int>({1, 300, 1500});
    s.precision = pick<std::string>({"auto", "fp32", "tf32", "fp16", "bf16", "fp8"});
    s.batch = pick<std::string>({"", "auto", "1", "64", "32,64,128"});
    s.target_batch = maybe<int>({1, 512, 1 << 24});
    s.accumulate = maybe<int>({1, 4, 1 << 20});
    s.optimizer = pick<std::string>({"", "sgd", "momentum", "adam", "adamw", "adamw8bit", "paged_adamw",
                                     "paged_adamw8bit", "adafactor", "lion"});
    s.optimizer_impl = pick<std::string>({"foreach", "fused", "loop"});
    s.optimizer_in_backward = coin();
    s.master_weights = pick<std::string>({"fp32", "bf16"});
    s.loss = pick<std::string>({"plain", "plain16", "chunked", "fused"});
    s.kernels = pick<std::string>({"eager", "fused"});
    s.fp8_recipe = pick<std::string>({"delayed", "tensorwise"});
    s.low_precision_norm = coin();
    s.attention_kernel = pick<std::string>({"flash2", "flash1", "cudnn"});
    s.checkpointing = pick<std::string>({"", "none", "full", "selective", "every:1", "every:1000"});
    s.clip_grad_norm = coin();
    s.channels_last = coin();
    s.no_flash_attention = coin();
    s.lora = maybe<int>({1, 16, 4096});
    s.qlora = coin();
    s.no_kbit_upcast = coin();
    s.lora_targets = pick<std::string>({"attn", "mlp", "all"});
    s.lora_dropout = maybe<double>({0.0, 0.05, 0.1, 1.0 / 3, 0.99});
    s.gpus = pick<int>({1, 2, 8, 1024});
    s.nodes = pick<int>({1, 4, 100000});
    s.parallel = pick<std::string>({"ddp", "zero1", "zero2", "fsdp", "hsdp"});
    s.offload = pick<std::vector<std::string>>(
        {{}, {"optimizer"}, {"params", "optimizer"}, {"activations", "optimizer", "params"}});
    s.interconnect = pick<std::string>({"card", "pcie", "nvlink"});
    s.network_gbps = pick<double>({0, 0.001, 25, 400.5, 1e6});
    s.dataset_size = pick<double>({0, 1, 1281167, 14.2e6, 1e12});
    s.gpu = pick<std::string>({"", "rtx5090", "rtx5090,8xh100-sxm5-80gb", "rtx50", "GeForce RTX 3080 12GB"});
    s.gpu_power_w = maybe<double>({1, 115, 87.5, 1e5});
    s.gpu_memory_gb = maybe<double>({1, 22, 48, 1e5});
    s.calibration_file = pick<std::string>({"", std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/report/bench-rtx5090.json"});
    return s;
  }

 private:
  template <typename T>
  T pick(std::vector<T> values) {
    return values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(random_)];
  }
  template <typename T>
  std::optional<T> maybe(std::vector<T> values) {
    if (coin()) return std::nullopt;
    return pick(std::move(values));
  }
  bool coin() { return std::bernoulli_distribution(0.5)(random_); }

  std::mt19937 random_;
};

TEST(SetupFlags, EveryGeneratedSetupParsesBackFromItsArguments) {
  SetupGenerator generate(49);
  for (int i = 0; i < 2000; ++i) {
    const TrainingSetup s = generate.next();
    ASSERT_EQ(parse_args(s.to_args()), s) << "setup " << i << ":" << s.to_flags();
  }
}

TEST(SetupFlags, EveryGeneratedSetupParsesBackFromItsShellLine) {
  SetupGenerator generate(4949);
  for (int i = 0; i < 500; ++i) {
    const TrainingSetup s = generate.next();
    ASSERT_EQ(parse_args(shell_words(s.to_flags())), s) << "setup " << i << ":" << s.to_flags();
  }
}

TEST(SetupFlags, TheFlagsTheOldPrinterDroppedArePrinted) {
  TrainingSetup s;
  s.model = "llama3-8b";
  s.kernels = "fused";
  s.channels_last = true;
  s.qlora = true;
  s.lora_dropout = 0.05;
  EXPECT_EQ(s.to_flags(), " --model llama3-8b --precision auto --kernels fused --channels-last --qlora --lora-dropout 0.05");
}

TEST(SetupFlags, AWordWithSpacesOrQuotesIsQuotedForTheShell) {
  TrainingSetup s;
  s.hf_config = "my models/it's.json";
  EXPECT_EQ(s.to_flags(), " --hf-config 'my models/it'\\''s.json' --precision auto");
}

// The command line a plan page prints (plan --chart) remakes the page's plan: the same predictions.
TEST(SetupFlags, APlanPagesCommandLineRemakesItsPlan) {
  TrainingSetup s;
  s.model = "llama3-8b";
  s.seq_len = 2048;
  s.precision = "bf16";
  s.qlora = true;
  s.checkpointing = "full";
  s.kernels = "fused";
  s.lora_dropout = 0.1;
  s.gpu = "rtx5090,rtx3080-12gb";
  s.batch = "1,2";
  const std::string line = plan_command_line(s, "page.html");
  ASSERT_EQ(line.rfind("gpusage plan ", 0), 0u);
  std::vector<std::string> words = shell_words(line.substr(std::string("gpusage plan").size()));
  ASSERT_GE(words.size(), 2u);
  ASSERT_EQ(words[words.size() - 2], "--chart");
  words.resize(words.size() - 2);
  const TrainingSetup parsed = parse_args(words);
  EXPECT_EQ(parsed, s);
  estimate::SweepRequest request;
  request.batches = {1, 2};
  const estimate::Sweep original = setup::run_plan(s, s.gpu, request);
  const estimate::Sweep remade = setup::run_plan(parsed, parsed.gpu, request);
  ASSERT_EQ(original.predictions.size(), 4u);
  ASSERT_EQ(remade.predictions.size(), original.predictions.size());
  for (std::size_t i = 0; i < original.predictions.size(); ++i) {
    EXPECT_EQ(remade.predictions[i].gpu->id, original.predictions[i].gpu->id);
    EXPECT_EQ(remade.predictions[i].throughput, original.predictions[i].throughput);
    EXPECT_EQ(remade.predictions[i].memory.total_bytes(), original.predictions[i].memory.total_bytes());
  }
  // The recipe the old printer dropped moves the prediction: without it the line would plan another run.
  TrainingSetup eager = s;
  eager.kernels = "eager";
  EXPECT_NE(setup::run_plan(eager, eager.gpu, request).predictions[0].throughput,
            original.predictions[0].throughput);
}

// --gpu-power and --gpu-memory are the @Nw and @Ngb suffixes for every card of --gpu: the same cards, and the
// laptop's power and the modified board's memory reach the plan.
TEST(SetupFlags, GpuPowerAndMemoryAreTheSuffixesOfEveryCard) {
  TrainingSetup flagged;
  flagged.model = "resnet50";
  flagged.gpu = "rtx4090-laptop,rtx4090";
  flagged.gpu_power_w = 115;
  TrainingSetup suffixed = flagged;
  suffixed.gpu = "rtx4090-laptop@115w,rtx4090@115w";
  suffixed.gpu_power_w.reset();
  estimate::SweepRequest request;
  request.batches = {64};
  const estimate::Sweep a = setup::run_plan(flagged, flagged.gpu, request);
  const estimate::Sweep b = setup::run_plan(suffixed, suffixed.gpu, request);
  ASSERT_EQ(a.predictions.size(), 2u);
  ASSERT_EQ(b.predictions.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.predictions[i].gpu->id, b.predictions[i].gpu->id);
    EXPECT_EQ(a.predictions[i].gpu->tdp_w, 115);
    EXPECT_EQ(a.predictions[i].throughput, b.predictions[i].throughput);
  }
  TrainingSetup memory;
  memory.model = "resnet50";
  memory.gpu = "rtx4090";
  memory.gpu_memory_gb = 48;
  EXPECT_EQ(setup::run_plan(memory, memory.gpu, request).predictions[0].gpu->memory_gb, 48);
  EXPECT_EQ(memory.to_flags(), " --model resnet50 --precision auto --gpu rtx4090 --gpu-memory 48");
  EXPECT_EQ(parse_args({"--model", "resnet50", "--gpu", "rtx4090", "--gpu-memory", "48"}), memory);
  memory.gpu = "rtx4090@24gb";
  try {
    setup::run_plan(memory, memory.gpu, request);
    ADD_FAILURE() << "the memory given twice was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--gpu 'rtx4090@24gb' already gives the memory (@24gb); drop it or --gpu-memory");
  }
}

}  // namespace
}  // namespace gpusage::cli
