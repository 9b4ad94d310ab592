// Names as people type them (issue 50): Hugging Face ids and names, the built-in table of Hub configs
// (data/models/*.toml), the local Hugging Face cache, and "did you mean" with three names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/estimate/parallel_aliases.hpp"
#include "core/workload/hub_models.hpp"
#include "workload_test_util.hpp"

namespace gpusage::workload {
namespace {

using ::testing::HasSubstr;
using testing::input_error_of;
using ::testing::Not;

TEST(HubTable, HoldsAtLeastEightyDistinctIdsEachWithItsSources) {
  std::set<std::string> ids;
  for (const detail::HubModel& m : detail::hub_models()) {
    for (const std::string& id : m.ids) EXPECT_TRUE(ids.insert(id).second) << "listed twice: " << id;
    // The Hub page of the first id; a training codebase's model that is not on the Hub (the FlashAttention
    // repository's GPT-3 configs) cites its config file at a commit.
    if (m.source.rfind("https://github.com/", 0) == 0) {
      EXPECT_THAT(m.source, ::testing::ContainsRegex("/blob/[0-9a-f]{40}/")) << m.ids.front();
    } else {
      EXPECT_THAT(m.source, HasSubstr("https://huggingface.co/" + m.ids.front() + "/")) << m.ids.front();
    }
    EXPECT_FALSE(m.read_from.empty()) << m.ids.front();
  }
  EXPECT_GE(ids.size(), 80u);
}

TEST(HubTable, EveryEntryBuildsThroughTheConfigJsonImporter) {
  for (const detail::HubModel& m : detail::hub_models()) {
    const Workload w = from_hf_config(m.config_json);
    EXPECT_GT(w.params(), 100'000'000) << m.ids.front();
    EXPECT_EQ(w.domain, Domain::language) << m.ids.front();
  }
}

// An entry that names a zoo model holds the same config.json shapes: both build the same parameters.
TEST(HubTable, EntriesLinkedToTheZooHaveTheZoosParameterCount) {
  int linked = 0;
  for (const detail::HubModel& m : detail::hub_models()) {
    if (m.zoo.empty()) continue;
    ++linked;
    EXPECT_EQ(from_hf_config(m.config_json).params(), build(m.zoo).params())
        << m.ids.front() << " vs " << m.zoo;
  }
  EXPECT_EQ(linked, 18);
}

TEST(ModelNames, HubIdsCaseAndPunctuationVariantsReachTheSameModel) {
  const std::int64_t zoo = build("llama3.1-8b").params();
  for (const char* name :
       {"meta-llama/Llama-3.1-8B", "META-LLAMA/llama-3.1-8b", "Llama-3.1-8B",
        "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B", "llama3.1-8B"}) {
    const Workload w = build(name);
    EXPECT_EQ(w.params(), zoo) << name;
    EXPECT_EQ(w.id, "llama3.1-8b") << name;
  }
  EXPECT_EQ(build("qwen2.5-7B").id, "qwen2.5-7b");
  EXPECT_EQ(build("Qwen/Qwen2.5-7B-Instruct").id, "qwen2.5-7b");
  EXPECT_EQ(build("google/gemma-2-9b-it").id, "gemma2-9b");
}

// Llama 3.3 70B and Qwen2.5 72B are not in the zoo: the table's config.json shapes give the checkpoints'
// parameter totals (70,553,706,496 and 72,706,203,648: the Hub's safetensors totals, "70.6B" and "72.7B").
TEST(ModelNames, TableModelsBuildToTheCheckpointsParameterTotals) {
  const Workload llama = build("meta-llama/Llama-3.3-70B-Instruct");
  EXPECT_EQ(llama.params(), 70'553'706'496);
  EXPECT_EQ(llama.display_name, "meta-llama/Llama-3.3-70B-Instruct");
  EXPECT_THAT(llama.architecture_source, HasSubstr("data/models/llama.toml"));
  EXPECT_EQ(build("Qwen/Qwen2.5-72B-Instruct").params(), 72'706'203'648);
}

// DeepSeek's R1 distills are fine-tuned Qwen2.5 checkpoints (the DeepSeek-R1 README's table of base models): the
// same shapes, so the same parameter totals as their bases (7.62B, 14.8B, 32.8B on the Hub).
TEST(ModelNames, R1QwenDistillsHaveTheirBaseModelsParameters) {
  EXPECT_EQ(build("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B").params(), 7'615'616'512);
  EXPECT_EQ(build("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B").params(), build("Qwen/Qwen2.5-7B").params());
  EXPECT_EQ(build("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B").params(), build("Qwen/Qwen2.5-14B").params());
  EXPECT_EQ(build("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B").params(), build("Qwen/Qwen2.5-32B").params());
}

// OLMo 2 7B as Olmo2ForCausalLM builds its config.json: 32 layers of 4 x 4096^2 attention, 3 x 4096 x 11008 MLP and
// four 4096-wide norms, two untied 100352 x 4096 embeddings and the final norm: 7,298,617,344. Planned as Qwen3,
// its q/k norms are 128 wide instead of 4096: 32 x 2 x 3968 = 253,952 fewer.
TEST(ModelNames, Olmo2IsPlannedWithQwen3sLayoutToItsParameterCount) {
  const Workload olmo2 = build("allenai/OLMo-2-1124-7B-Instruct");
  EXPECT_EQ(olmo2.params(), 7'298'617'344 - 253'952);
  EXPECT_THAT(olmo2.architecture_source, HasSubstr("planned as qwen3"));
  EXPECT_THAT(build("OLMo-7B-hf").architecture_source, HasSubstr("planned as llama"));
}

TEST(ModelNames, FamiliesWithoutTheirOwnBuilderSayWhichLayoutPlansThem) {
  EXPECT_THAT(build("internlm/internlm2_5-7b-chat").architecture_source, HasSubstr("planned as llama"));
  EXPECT_THAT(build("THUDM/glm-4-9b-chat").architecture_source, HasSubstr("planned as qwen2"));
}

TEST(ModelNames, UnknownNameGetsThreeNearestNotTheWholeList) {
  const std::string message = input_error_of([] { build("meta-llama/Llama-9.9-8B"); });
  EXPECT_THAT(message, HasSubstr("unknown model 'meta-llama/Llama-9.9-8B'; did you mean "));
  EXPECT_THAT(message, Not(HasSubstr("resnet18")));
  const std::size_t from = message.find("did you mean ") + 13, to = message.find('?', from);
  const std::string names = message.substr(from, to - from);
  EXPECT_EQ(std::count(names.begin(), names.end(), ','), 2) << names;
}

class HfCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpusage-hf-cache-" + std::to_string(::getpid()));
    ::setenv("HF_HUB_CACHE", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("HF_HUB_CACHE");
    std::filesystem::remove_all(dir_);
  }
  void add(const std::string& entry, const std::string& config) {
    const auto snapshot = dir_ / entry / "snapshots" / "abc123";
    std::filesystem::create_directories(snapshot);
    std::filesystem::create_directories(dir_ / entry / "refs");
    std::ofstream(dir_ / entry / "refs" / "main") << "abc123\n";
    std::ofstream(snapshot / "config.json") << config;
  }
  std::filesystem::path dir_;
};

constexpr const char* kTinyLlama = R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
  "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000})";

TEST_F(HfCache, AModelInTheLocalCacheIsPlannedFromItsConfigJson) {
  add("models--acme--tiny-llama", kTinyLlama);
  const Workload w = build("acme/tiny-llama");
  EXPECT_EQ(w.display_name, "acme/tiny-llama");
  EXPECT_THAT(w.architecture_source, HasSubstr("local Hugging Face cache"));
  EXPECT_EQ(w.params(), from_hf_config(kTinyLlama).params());
}

TEST_F(HfCache, TheCacheIsReadBeforeTheBuiltInTable) {
  add("models--Qwen--Qwen2.5-72B", kTinyLlama);
  EXPECT_EQ(build("Qwen/Qwen2.5-72B").params(), from_hf_config(kTinyLlama).params());
}

TEST(ParallelAliases, NamesPeopleUseMapToGpusagesModes) {
  using estimate::canonical_parallel_name;
  EXPECT_EQ(canonical_parallel_name("zero3"), "fsdp");
  EXPECT_EQ(canonical_parallel_name("ZeRO-3"), "fsdp");
  EXPECT_EQ(canonical_parallel_name("fsdp2"), "fsdp");
  EXPECT_EQ(canonical_parallel_name("FULL_SHARD"), "fsdp");
  EXPECT_EQ(canonical_parallel_name("ds_z2"), "zero2");
  EXPECT_EQ(canonical_parallel_name("shard_grad_op"), "zero2");
  EXPECT_EQ(canonical_parallel_name("hsdp"), "hsdp");
  EXPECT_EQ(canonical_parallel_name("no_shard"), "ddp");
  EXPECT_EQ(canonical_parallel_name("zero9"), std::nullopt);
}

}  // namespace
}  // namespace gpusage::workload
