// --recipe and --train-config (cli/setup_layers, core/setup/recipes, core/setup/train_config): each recipe sets
// exactly the options its data file says for the method asked, an option given on the command line wins over the
// config file, the config file over the recipe, and each framework's own example config maps as its fields say.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/setup_binder.hpp"
#include "core/common/error.hpp"
#include "core/setup/recipes.hpp"
#include "core/setup/train_config.hpp"

namespace gpusage::cli {
namespace {

using setup::TrainingSetup;

struct LayeredParse {
  TrainingSetup setup;
  setup::SetupLayers layers;
};

LayeredParse parse_layered(std::vector<std::string> args) {
  CLI::App app;
  LayeredParse parsed;
  SetupDoor door;
  door.model_positional = true;
  door.gpu_help = "GPUs";
  door.batch_help = "batches";
  auto layers = bind_setup(app, parsed.setup, door);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  app.parse(args);
  parsed.layers = *layers;
  return parsed;
}

std::string train_fixture(const std::string& name) {
  return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/train_configs/" + name;
}

std::vector<std::string> method_flags(const std::string& method) {
  if (method == "qlora") return {"--qlora"};
  if (method == "lora") return {"--lora", "32"};
  return {};
}

// The recipe gives the same setup as its defaults typed out as options: the data file is what applies.
TEST(Recipes, EachRecipeSetsWhatItsDataSaysForEachMethod) {
  ASSERT_EQ(setup::recipes().size(), 7u);
  for (const setup::Recipe& recipe : setup::recipes()) {
    for (const std::string method : {"full", "lora", "qlora"}) {
      std::vector<std::string> with_recipe = {"llama3-8b", "--recipe", recipe.name};
      std::vector<std::string> typed_out = {"llama3-8b"};
      for (const std::string& flag : method_flags(method)) {
        with_recipe.push_back(flag);
        typed_out.push_back(flag);
      }
      const auto defaults = setup::recipe_defaults(recipe, method);
      for (const setup::RecipeDefault& d : defaults) {
        if (method == "lora" && d.option.option == "--lora") continue;  // the rank given wins
        typed_out.push_back(d.option.option);
        if (d.option.value != "true") typed_out.push_back(d.option.value);
      }
      const LayeredParse a = parse_layered(with_recipe);
      EXPECT_EQ(a.setup, parse_layered(typed_out).setup) << recipe.name << " " << method;
      ASSERT_EQ(a.layers.recipe.size(), 1u);
      EXPECT_EQ(a.layers.recipe[0].method, method);
      EXPECT_FALSE(defaults.empty()) << recipe.name << " has no default for " << method;
    }
  }
}

TEST(Recipes, UnslothQloraIsUnslothsDefaults) {
  const TrainingSetup s = parse_layered({"llama3.1-8b", "--qlora", "--recipe", "unsloth"}).setup;
  EXPECT_EQ(s.checkpointing, "full");
  EXPECT_EQ(s.offload, std::vector<std::string>{"activations"});
  EXPECT_EQ(s.loss, "fused");
  EXPECT_EQ(s.kernels, "fused");
  EXPECT_TRUE(s.no_kbit_upcast);
  EXPECT_EQ(s.lora, 16);
  EXPECT_EQ(s.lora_targets, "all");
  EXPECT_EQ(s.optimizer, "adamw8bit");
  // Unsloth picks bfloat16 where the card has it, else float16: gpusage's auto.
  EXPECT_EQ(s.precision, "auto");
}

TEST(Recipes, TorchtuneFullFineTuneStepsInBackwardWithPagedAdamw8bitInPureBf16) {
  const TrainingSetup s = parse_layered({"llama3.1-8b", "--recipe", "torchtune"}).setup;
  EXPECT_TRUE(s.optimizer_in_backward);
  EXPECT_EQ(s.optimizer, "paged_adamw8bit");
  EXPECT_EQ(s.master_weights, "bf16");
  EXPECT_EQ(s.loss, "chunked");
  EXPECT_FALSE(s.lora.has_value());
}

TEST(Recipes, AnOptionGivenWinsAndIsReportedAsKept) {
  const LayeredParse p = parse_layered(
      {"llama3.1-8b", "--qlora", "--recipe", "unsloth", "--loss", "plain", "--lora", "64", "--optimizer", "adamw"});
  EXPECT_EQ(p.setup.loss, "plain");
  EXPECT_EQ(p.setup.lora, 64);
  EXPECT_EQ(p.setup.optimizer, "adamw");
  EXPECT_EQ(p.setup.kernels, "fused");  // what was not given still comes from the recipe
  std::vector<std::string> kept;
  for (const auto& e : p.layers.recipe[0].defaults) kept.insert(kept.end(), e.kept.begin(), e.kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"--loss", "--lora", "--optimizer"}));
}

TEST(Recipes, AnUnknownNameIsOneLineWithTheNearestAndTheAcceptedNames) {
  try {
    parse_layered({"llama3-8b", "--recipe", "unslot"});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--recipe: unknown recipe 'unslot' (did you mean 'unsloth'?); accepted: unsloth, trl, torchtune, "
              "axolotl, llamafactory, litgpt, ms-swift");
  }
  EXPECT_EQ(setup::find_recipe("LLaMA-Factory").name, "llamafactory");
}

TEST(TrainConfig, AxolotlsQloraExampleMapsItsFieldsAndImpliesTheAxolotlRecipe) {
  const LayeredParse p = parse_layered({"--train-config", train_fixture("axolotl_llama3_qlora.yml")});
  EXPECT_EQ(p.setup.model, "Meta-Llama-3-8B");
  EXPECT_TRUE(p.setup.qlora);
  EXPECT_EQ(p.setup.lora, 32);
  EXPECT_EQ(p.setup.seq_len, 4096);
  EXPECT_EQ(p.setup.batch, "2");
  EXPECT_EQ(p.setup.accumulate, 4);
  EXPECT_EQ(p.setup.optimizer, "paged_adamw");
  EXPECT_EQ(p.setup.checkpointing, "full");
  EXPECT_EQ(p.setup.precision, "bf16");
  EXPECT_EQ(p.setup.lora_dropout, 0.05);
  EXPECT_EQ(p.setup.lora_targets, "all");
  EXPECT_TRUE(p.setup.clip_grad_norm);           // the axolotl recipe: the Trainer's max_grad_norm 1.0
  EXPECT_EQ(p.setup.optimizer_impl, "foreach");  // the config's optimizer keeps the recipe's implementation out
  ASSERT_EQ(p.layers.config.size(), 1u);
  EXPECT_EQ(p.layers.config[0].format, "axolotl");
  ASSERT_EQ(p.layers.recipe.size(), 1u);
  EXPECT_TRUE(p.layers.recipe[0].implied);
}

TEST(TrainConfig, TheCommandLineWinsOverTheFileAndTheFileOverTheRecipe) {
  const LayeredParse p = parse_layered({"--train-config", train_fixture("axolotl_llama3_qlora.yml"), "--recipe",
                                        "unsloth", "--lora", "8", "--seq-len", "1024"});
  EXPECT_EQ(p.setup.lora, 8);                   // command line over the file's lora_r 32
  EXPECT_EQ(p.setup.seq_len, 1024);             // command line over sequence_len 4096
  EXPECT_EQ(p.setup.optimizer, "paged_adamw");  // the file over unsloth's adamw8bit
  EXPECT_EQ(p.setup.loss, "fused");             // the recipe where the file says nothing
  EXPECT_FALSE(p.layers.recipe[0].implied);
}

TEST(TrainConfig, LlamaFactorysLoraExampleMaps) {
  const TrainingSetup s = parse_layered({"--train-config", train_fixture("llamafactory_llama3_lora_sft.yaml")}).setup;
  EXPECT_EQ(s.model, "meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(s.lora, 8);
  EXPECT_FALSE(s.qlora);
  EXPECT_EQ(s.lora_targets, "all");
  EXPECT_EQ(s.seq_len, 2048);
  EXPECT_EQ(s.batch, "1");
  EXPECT_EQ(s.accumulate, 8);
  EXPECT_EQ(s.precision, "bf16");
  EXPECT_EQ(s.checkpointing, "full");  // LLaMA-Factory's default: disable_gradient_checkpointing False
}

TEST(TrainConfig, TorchtunesQloraRecipeMapsItsBuilderAndNestedFields) {
  const TrainingSetup s =
      parse_layered({"--train-config", train_fixture("torchtune_llama3_1_8B_qlora_single_device.yaml")}).setup;
  EXPECT_EQ(s.model, "llama3.1-8b");
  EXPECT_TRUE(s.qlora);
  EXPECT_EQ(s.lora, 8);
  EXPECT_EQ(s.batch, "2");
  EXPECT_EQ(s.accumulate, 8);
  EXPECT_EQ(s.optimizer, "adamw");
  EXPECT_EQ(s.optimizer_impl, "fused");
  EXPECT_EQ(s.loss, "chunked");
  EXPECT_EQ(s.master_weights, "bf16");
  EXPECT_EQ(s.lora_targets, "all");
  EXPECT_TRUE(s.no_kbit_upcast);
}

TEST(TrainConfig, TrainingArgumentsJsonAndTrainerStateMap) {
  const TrainingSetup s = parse_layered({"--train-config", train_fixture("hf_training_args.json")}).setup;
  EXPECT_EQ(s.model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(s.batch, "4");
  EXPECT_EQ(s.seq_len, 2048);
  EXPECT_EQ(s.loss, "fused");  // use_liger_kernel
  EXPECT_EQ(s.optimizer_impl, "fused");
  const LayeredParse state = parse_layered({"llama3-8b", "--train-config", train_fixture("trainer_state.json")});
  EXPECT_EQ(state.setup.batch, "4");
  EXPECT_EQ(state.layers.config[0].format, "trainer-state");
  EXPECT_TRUE(state.layers.recipe.empty());
}

TEST(TrainConfig, ABrokenFileIsOneLineNamingIt) {
  const std::string path = train_fixture("broken.yml");
  try {
    parse_layered({"llama3-8b", "--train-config", path});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--train-config: '" + path + "' is not valid YAML: line 3: illegal map value");
  }
}

TEST(TrainConfig, LoraTargetsFromModuleNames) {
  EXPECT_EQ(setup::lora_targets_of({"q_proj", "v_proj"}), "attn");
  EXPECT_EQ(setup::lora_targets_of({"gate_proj", "down_proj"}), "mlp");
  EXPECT_EQ(setup::lora_targets_of({"q_proj", "up_proj"}), "all");
  EXPECT_EQ(setup::lora_targets_of({"all-linear"}), "all");
  EXPECT_EQ(setup::lora_targets_of({"embed_tokens"}), "");
}

}  // namespace
}  // namespace gpusage::cli
