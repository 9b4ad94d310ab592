// ZeRO stages, HSDP and CPU offload (issue 27): where the training state lives and what moving it costs.
// The toy model has 2,000 parameters in two blocks of 1,000 (toy.hpp).
#include <gtest/gtest.h>

#include "core/estimate/constants.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;
using toy::config;

constexpr double kParams = 2000;

TrainingConfig mixed(Parallel parallel, int gpus) {
  TrainingConfig c = config(1, Precision::bf16, Optimizer::adamw);
  c.parallel = parallel;
  c.gpus_per_node = gpus;
  return c;
}

TEST(Parallel, NamesRoundTrip) {
  for (const char* name : {"ddp", "zero1", "zero2", "fsdp", "hsdp"}) {
    ASSERT_TRUE(parse_parallel(name)) << name;
    EXPECT_STREQ(to_string(*parse_parallel(name)), name);
  }
  EXPECT_FALSE(parse_parallel("zero3"));
  EXPECT_EQ(parallel_names(), "ddp|zero1|zero2|fsdp|hsdp");
}

// ZeRO-1 under mixed precision: the model runs on 16-bit weights and gradients; the fp32 masters join
// Adam's two states in the shard (the ZeRO paper's 2 + 2 + 12/N bytes per parameter), and no autocast copy
// of fp32 weights is made.
TEST(Zero, StageOneShardsTheMastersWithTheOptimizerState) {
  const auto w = toy::two_block_model();
  const auto ddp = estimate_memory(w, mixed(Parallel::ddp, 4), toy::gpu());
  const auto zero1 = estimate_memory(w, mixed(Parallel::zero1, 4), toy::gpu());
  EXPECT_DOUBLE_EQ(ddp.weights_bytes + ddp.gradients_bytes + ddp.optimizer_bytes, (4 + 4 + 8) * kParams);
  EXPECT_DOUBLE_EQ(zero1.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(zero1.gradients_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(zero1.optimizer_bytes, 12 * kParams / 4);
  EXPECT_DOUBLE_EQ(ddp.workspace_bytes - zero1.workspace_bytes, 2 * kParams);
}

TEST(Zero, StageTwoShardsTheGradientsToo) {
  const auto m = estimate_memory(toy::two_block_model(), mixed(Parallel::zero2, 4), toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 2 * kParams / 4);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12 * kParams / 4);
}

// Pure bf16 has no fp32 masters: ZeRO-1 shards only the two bf16 states.
TEST(Zero, PureBf16ShardsOnlyTheStates) {
  auto c = mixed(Parallel::zero1, 2);
  c.master_weights = MasterWeights::bf16;
  const auto m = estimate_memory(toy::two_block_model(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 4 * kParams / 2);
}

// HSDP shards over the node's GPUs only: two nodes of four hold what one node of four holds under FSDP.
TEST(Hsdp, ShardsWithinTheNode) {
  const auto w = toy::two_block_model();
  auto hsdp = mixed(Parallel::hsdp, 4);
  hsdp.nodes = 2;
  auto fsdp = hsdp;
  fsdp.parallel = Parallel::fsdp;
  const auto h = estimate_memory(w, hsdp, toy::gpu());
  const auto f = estimate_memory(w, fsdp, toy::gpu());
  const double two_units = 2 * 1000 * 2.0;  // two bf16 blocks gathered
  EXPECT_DOUBLE_EQ(h.weights_bytes, 4 * kParams / 4 + two_units);
  EXPECT_DOUBLE_EQ(f.weights_bytes, 4 * kParams / 8 + two_units);
  EXPECT_DOUBLE_EQ(h.optimizer_bytes, 8 * kParams / 4);
}

// ZeRO-Offload: masters, states and fp32 gradients on the host; the GPU keeps 16-bit weights and the
// gradient buckets in transfer (here the whole 4 kB of gradients, below two 25 MiB buckets).
// Parameter offload moves weight shards, so only the parallelisms that shard the weights allow it; the rest
// of the offloads go with any.
TEST(Offload, ParamsNeedAParallelismThatShardsTheWeights) {
  const Offload params{.optimizer = false, .params = true, .activations = false};
  const Offload optimizer_and_activations{.optimizer = true, .params = false, .activations = true};
  for (Parallel parallel : {Parallel::fsdp, Parallel::hsdp}) EXPECT_TRUE(offload_allowed(params, parallel));
  for (Parallel parallel : {Parallel::ddp, Parallel::zero1, Parallel::zero2}) {
    EXPECT_FALSE(offload_allowed(params, parallel)) << to_string(parallel);
  }
  for (Parallel parallel : {Parallel::ddp, Parallel::zero1, Parallel::zero2, Parallel::fsdp,
                            Parallel::hsdp}) {
    EXPECT_TRUE(offload_allowed(optimizer_and_activations, parallel)) << to_string(parallel);
    EXPECT_TRUE(offload_allowed(Offload{}, parallel)) << to_string(parallel);
  }
}

TEST(Offload, OptimizerMovesMastersStatesAndGradientsToTheHost) {
  auto c = mixed(Parallel::ddp, 1);
  c.offload.optimizer = true;
  const auto m = estimate_memory(toy::two_block_model(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 0);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.host_bytes, (12 + 4) * kParams);
}

// FSDP's parameter offload: the GPU holds only the two units in use and one unit's gradient.
TEST(Offload, ParamsLeaveOnlyTheGatheredUnitsOnTheGpu) {
  auto c = mixed(Parallel::fsdp, 4);
  c.offload.params = true;
  const auto m = estimate_memory(toy::two_block_model(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * 1000 * 2.0);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 1000 * 2.0);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 0);
  // Host: the fp32 weight shard, Adam's states and fp32 gradients, each a quarter.
  EXPECT_DOUBLE_EQ(m.host_bytes, (4 + 8 + 4) * kParams / 4);
}

// Llama 3.1 405B under FSDP with parameter offload on 8 GPUs (its config.json's shape): the GPU keeps one block's
// full bf16 gradient before it is reduce-scattered (3.19B parameters: 6.4 GB) and the root unit's (embeddings and
// lm_head, 2 x 128,256 x 16,384, plus the final norm: 4.2B parameters), not two 25 MiB DDP buckets; and the root unit
// stays gathered beside the two blocks in use.
TEST(Offload, ParamsKeepOneUnitsGradientAndTheRootUnit) {
  const auto w = workload::from_hf_config(
      R"({"model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers": 126,
          "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
          "tie_word_embeddings": false})");
  auto c = mixed(Parallel::fsdp, 8);
  c.batch_per_gpu = 1;
  c.offload.params = true;
  const auto m = estimate_memory(w, c, toy::gpu());
  const double block = 2.0 * 16384 * 16384 + 2.0 * 16384 * 1024 + 3.0 * 16384 * 53248 + 2 * 16384;
  const double root = 2.0 * 128256 * 16384 + 16384;
  EXPECT_NEAR(block * 2, 6.375e9, 0.001e9);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, (block + root) * 2);
  EXPECT_DOUBLE_EQ(m.weights_bytes, (2 * block + root) * 2);
  // The host holds the fp32 weight shard, Adam's two states and the fp32 gradient shard: 16 B per parameter / 8.
  EXPECT_NEAR(m.host_bytes, 16.0 * static_cast<double>(w.params()) / 8, 1e3);
}

// Six equal blocks each saving 200 B per sample (100 bf16 elements): with activation offloading two blocks'
// worth stays on the GPU and four go to the host.
TEST(Offload, ActivationsKeepTwoBlocksOnTheGpu) {
  auto w = toy::two_block_model();
  const workload::Layer block = w.layers.front();
  w.layers.erase(w.layers.begin(), w.layers.begin() + 2);
  for (int i = 5; i >= 0; --i) {
    workload::Layer l = block;
    l.segment = i;
    w.layers.insert(w.layers.begin(), l);
  }
  auto c = mixed(Parallel::ddp, 1);
  c.batch_per_gpu = 2;
  const auto kept = estimate_memory(w, c, toy::gpu());
  c.offload.activations = true;
  const auto offloaded = estimate_memory(w, c, toy::gpu());
  EXPECT_DOUBLE_EQ(offloaded.host_activation_bytes, 2 * 4 * 200.0);
  EXPECT_DOUBLE_EQ(offloaded.host_bytes, offloaded.host_activation_bytes);
  EXPECT_DOUBLE_EQ(kept.activations_bytes - offloaded.activations_bytes, 2 * 4 * 200.0);
}

// A sharded optimizer steps a quarter of the parameters; ZeRO-Offload steps on the CPU at the host's
// bandwidth and sends the updated 16-bit weights back over PCIe (gen 4 x16 by default: 31.5 GB/s);
// FSDP's parameter offload runs torch's slower CPU AdamW and sends nothing back (the weights live there).
TEST(Offload, OptimizerStepTimeFollowsWhereItRuns) {
  const auto w = toy::two_block_model();
  const auto gpu = toy::gpu();
  const ModelConstants& k = default_constants();
  const double adamw_bytes = 3 * 4 + 2 * 8;  // read and write the fp32 weight and both states, read the gradient
  const double pcie = 31.504e9 * k.link_efficiency;

  const auto ddp = estimate_step_time(w, mixed(Parallel::ddp, 4), gpu);
  const auto zero1 = estimate_step_time(w, mixed(Parallel::zero1, 4), gpu);
  EXPECT_GT(ddp.optimizer_s, zero1.optimizer_s);

  auto offload = mixed(Parallel::ddp, 1);
  offload.offload.optimizer = true;
  EXPECT_NEAR(estimate_step_time(w, offload, gpu).optimizer_s,
              adamw_bytes * kParams / (k.host_optimizer_gbs * 1e9) + 2 * kParams / pcie, 1e-15);

  auto params = mixed(Parallel::fsdp, 4);
  params.offload.params = true;
  EXPECT_NEAR(estimate_step_time(w, params, gpu).optimizer_s,
              adamw_bytes * kParams / 4 / (k.host_optimizer_gbs / k.torch_cpu_optimizer_slowdown * 1e9), 1e-15);
}

}  // namespace
}  // namespace gpusage::estimate
