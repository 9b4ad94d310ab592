// The fine-tuning recipes plan expresses (issue 27): master weights, optimizers, checkpointing policies,
// loss implementations, LoRA targets, QLoRA's dequantization, and the memory figures users print.
#include <gtest/gtest.h>

#include <tuple>

#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;
using toy::config;

// A language model with a vocabulary head: two blocks (an attention projection and an MLP matrix each,
// then a norm), the lm_head producing 1000 logits per sample, and the loss over them (the plain loss
// keeps the fp32 log-softmax: 4 B per logit, as layers.cpp's cross_entropy records it).
workload::Workload lm() {
  workload::Workload w = toy::two_block_model();
  w.layers.clear();
  for (int block = 0; block < 2; ++block) {
    workload::Layer attn;
    attn.name = "block" + std::to_string(block) + ".q_proj";
    attn.op = workload::OpClass::matmul;
    attn.output_shape = {10};
    attn.params = 100;
    attn.forward_flops = 200;
    attn.backward_flops = 400;
    attn.forward_io_elements = 20;
    attn.saved_elements = 10;
    attn.segment = block;
    attn.input_elements = 10;
    attn.lora_targets = {{10, 10, true}};
    workload::Layer mlp = attn;
    mlp.name = "block" + std::to_string(block) + ".up_proj";
    mlp.output_shape = {40};
    mlp.params = 400;
    mlp.saved_elements = 40;
    mlp.lora_targets = {{10, 40, false}};
    workload::Layer norm = attn;
    norm.name = "block" + std::to_string(block) + ".norm";
    norm.op = workload::OpClass::normalization;
    norm.params = 10;
    norm.saved_elements = 30;
    norm.lora_targets.clear();
    w.layers.insert(w.layers.end(), {attn, mlp, norm});
  }
  workload::Layer head;
  head.name = "lm_head";
  head.op = workload::OpClass::matmul;
  head.output_shape = {1000};
  head.params = 10000;
  head.input_elements = 10;
  w.layers.push_back(head);
  workload::Layer loss;
  loss.name = "loss";
  loss.op = workload::OpClass::loss;
  loss.output_shape = {1};
  loss.input_elements = 1000;
  loss.saved_fixed_bytes = 4 * 1000;
  w.layers.push_back(loss);
  return w;
}

constexpr double kParams = 2 * (100 + 400 + 10) + 10000;

TEST(Recipe, PureBf16KeepsEightBytesPerParameterWithAdamW) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.master_weights = MasterWeights::bf16;
  const auto m = estimate_memory(lm(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes, 8 * kParams);
  // No fp32 master copy to cast: the workspace has no 16-bit weight copies beside the library workspace.
  auto mixed = config(1, Precision::bf16, Optimizer::adamw);
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), mixed, toy::gpu()).workspace_bytes - m.workspace_bytes, 2 * kParams);
}

TEST(Recipe, EightBitAdamWKeepsTwoBytesOfStatePlusBlockConstants) {
  auto c = config(1, Precision::bf16, Optimizer::adamw8bit);
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).optimizer_bytes, kParams * 2 * (1 + 4.0 / 256));
  c.optimizer = Optimizer::paged_adamw8bit;  // paged only under pressure: the same on the GPU
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).optimizer_bytes, kParams * 2 * (1 + 4.0 / 256));
}

TEST(Recipe, LionKeepsOneStateAndAdafactorFactorsMatrices) {
  auto c = config(1, Precision::bf16, Optimizer::lion);
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).optimizer_bytes, 4 * kParams);
  c.optimizer = Optimizer::adafactor;
  // Matrices keep rows + columns (q 10+10, up 10+40 per block; lm_head 10+1000), the norms their 10.
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).optimizer_bytes, 4 * (2 * (20 + 50 + 10) + 1010));
}

TEST(Recipe, SelectiveCheckpointingKeepsGemmOutputsAndRecomputesTheRest) {
  auto c = config(1, Precision::fp32, Optimizer::sgd);
  c.checkpointing = true;
  // Full: the loss's 4000 B + block inputs 2 x 10 x 4 B + the largest block's 80 elements x 4 B.
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).activations_bytes, 4000 + 80 + 320);
  c.selective_checkpointing = true;
  // Selective: the GEMM outputs stay (2 x 50 x 4 B), the norms' 30 elements are recomputed one block at a time.
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).activations_bytes, 4000 + 80 + 400 + 120);
}

TEST(Recipe, CheckpointingEveryOtherBlockKeepsTheOthersWhole) {
  auto c = config(1, Precision::fp32, Optimizer::sgd);
  c.checkpointing = true;
  c.checkpoint_every = 2;
  // Block 0 checkpointed (input 40 B, recomputed 320 B); block 1 keeps its 80 elements (320 B).
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).activations_bytes, 4000 + 40 + 320 + 320);
}

TEST(Recipe, ChunkedAndFusedLossesNeverHoldTheWholeFp32Logits) {
  auto c = config(1, Precision::bf16, Optimizer::sgd);
  const auto plain = estimate_memory(lm(), c, toy::gpu());
  c.loss = LossImpl::chunked;
  const auto chunked = estimate_memory(lm(), c, toy::gpu());
  c.loss = LossImpl::fused;
  const auto fused = estimate_memory(lm(), c, toy::gpu());
  // Saved: plain the fp32 log-softmax (4 B per logit); chunked the 16-bit logits and one of 8 chunks' fp32
  // log-softmax (2 + 0.5 B); fused none.
  EXPECT_DOUBLE_EQ(plain.activations_bytes - fused.activations_bytes, 4 * 1000);
  EXPECT_DOUBLE_EQ(chunked.activations_bytes - fused.activations_bytes, 2.5 * 1000);
}

// nn.CrossEntropyLoss on a pure-bf16 model's logits, with no upcast: the log-softmax it keeps and the cached pair
// of the logits and their gradient are 16-bit, where the plain loss's are fp32.
TEST(Recipe, Plain16KeepsTheLogSoftmaxAndTheCachedPairSixteenBit) {
  auto c = config(1, Precision::bf16, Optimizer::sgd);
  c.master_weights = MasterWeights::bf16;
  const auto plain = estimate_memory(lm(), c, toy::gpu());
  c.loss = LossImpl::plain16;
  const auto sixteen = estimate_memory(lm(), c, toy::gpu());
  c.loss = LossImpl::fused;
  const auto fused = estimate_memory(lm(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(sixteen.activations_bytes - fused.activations_bytes, 2 * 1000);  // against plain's 4 B
  // The cached pair: 2 x 1,000 logits at 4 B under the plain loss, at 2 B under plain16 (and the overhead on
  // the live set's difference).
  const auto live = [](const MemoryBreakdown& m) { return m.activations_bytes + m.workspace_bytes; };
  EXPECT_NEAR(plain.allocator_reserve_bytes - sixteen.allocator_reserve_bytes,
              2 * 1000 * 2 + default_constants().allocator_overhead_fraction * (live(plain) - live(sixteen)), 1e-6);
  // The whole 16-bit gradient pair of the logits is in flight at once (2 x 1,000 x 2 B), as under the plain
  // loss, less what backward has freed by then: the plain loss's 4,000-byte log-softmax covers it, plain16's
  // 2,000 bytes half of it.
  const double library = default_constants().library_workspace_bytes;
  EXPECT_DOUBLE_EQ(sixteen.workspace_bytes - library, 2000);
  EXPECT_EQ(parse_loss("plain16"), LossImpl::plain16);
  EXPECT_STREQ(to_string(LossImpl::plain16), "plain16");
}

TEST(Recipe, UnderCheckpointingOnlyThePlainLossHoldsTheWholeLogitsGradient) {
  auto c = config(1, Precision::bf16, Optimizer::sgd);
  c.checkpointing = true;
  const double library = default_constants().library_workspace_bytes;
  // The largest gradient pair in flight: the 16-bit logits' (2 x 1000 x 2 B) for the plain loss, one of 8
  // chunks of it for the chunked one, and for the fused one the widest block output (2 x 40 x 2 B).
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).workspace_bytes - library, 4000 + 2 * kParams);
  c.loss = LossImpl::chunked;
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).workspace_bytes - library, 500 + 2 * kParams);
  c.loss = LossImpl::fused;
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).workspace_bytes - library, 160 + 2 * kParams);
}

TEST(Recipe, LoraTargetsChooseWhichMatricesCarryAdapters) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.lora_rank = 2;
  const double all = estimate_memory(lm(), c, toy::gpu()).gradients_bytes;
  c.lora_targets = LoraTargets::attention;
  const double attention = estimate_memory(lm(), c, toy::gpu()).gradients_bytes;
  c.lora_targets = LoraTargets::mlp;
  const double mlp = estimate_memory(lm(), c, toy::gpu()).gradients_bytes;
  EXPECT_DOUBLE_EQ(attention, 4 * 2 * 2 * (10 + 10));  // fp32 gradients, 2 blocks x r (in + out)
  EXPECT_DOUBLE_EQ(mlp, 4 * 2 * 2 * (10 + 40));
  EXPECT_DOUBLE_EQ(all, attention + mlp);
}

// A mixture-of-experts layer's experts (Matrix::copies) each carry an adapter and each are quantized and
// dequantized; the rows they see together are the layer's, so the adapters' row traffic does not grow.
TEST(Recipe, EveryExpertOfAnMoeLayerCarriesAnAdapter) {
  workload::Workload moe = lm();
  for (auto& layer : moe.layers) {
    if (layer.name.ends_with("up_proj")) {
      layer.params *= 8;
      layer.lora_targets[0].copies = 8;
    }
  }
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.lora_rank = 2;
  c.lora_targets = LoraTargets::mlp;
  EXPECT_DOUBLE_EQ(estimate_memory(moe, c, toy::gpu()).gradients_bytes, 4 * 2 * 8 * 2 * (10 + 40));
  c.lora_rank = 16;
  const double lora = estimate_step_time(moe, c, toy::gpu()).memory_s;
  c.qlora = true;
  c.kbit_upcast = false;  // the dequantization alone
  const double qlora = estimate_step_time(moe, c, toy::gpu()).memory_s;
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  const double quantized = 2 * (100 + 8 * 400);  // 2 blocks: the attention matrix and 8 experts
  EXPECT_NEAR(qlora - lora, 2 * quantized * (4.127 / 8 + 2) / bandwidth, 1e-18);
}

TEST(Recipe, QloraUpcastsTheUnquantizedWeightsToFp32OnlyWithFp32Masters) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.qlora = true;
  const double linear = 2 * (100 + 400);
  const double adapters = 16 * 2 * ((10 + 10) + (10 + 40));
  // Hugging Face's path: PEFT's k-bit preparation casts the rest (norms, lm_head) to fp32.
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).weights_bytes,
                   linear * 4.127 / 8 + (kParams - linear) * 4 + 4 * adapters);
  c.master_weights = MasterWeights::bf16;  // torchtune, LitGPT: the rest stays bf16, adapters too
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).weights_bytes,
                   linear * 4.127 / 8 + (kParams - linear) * 2 + 2 * adapters);
}

TEST(Recipe, QloraDequantizesEveryMatrixInForwardAndBackward) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.lora_rank = 16;
  const double lora = estimate_step_time(lm(), c, toy::gpu()).memory_s;
  c.qlora = true;
  c.kbit_upcast = false;  // the dequantization alone (the upcast's cost: below)
  const double qlora = estimate_step_time(lm(), c, toy::gpu()).memory_s;
  // Each of the 1000 quantized weights is read at 4.127 bits and written at 16, twice, over the toy GPU's
  // 1000 GB/s at the default memory efficiency.
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  EXPECT_NEAR(qlora - lora, 2 * 1000 * (4.127 / 8 + 2) / bandwidth, 1e-18);
}

// PEFT's k-bit preparation leaves the hidden state fp32: each 4-bit linear casts its input to bf16 and its output
// back (6 bytes per element each way: 120 B for q's 10 + 10 and 300 B for up's 10 + 40 per block, in forward and
// again in backward), and the memory-bound layers and the adapters' path move 4-byte elements. Unprepared (Unsloth,
// get_peft_model alone) the norms and lm_head stay 16-bit in memory too; pure-bf16 recipes never upcast.
TEST(Recipe, QloraKbitPreparationRunsTheHiddenStateInFp32) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.qlora = true;
  const auto prepared = estimate_step_time(lm(), c, toy::gpu());
  const auto prepared_memory = estimate_memory(lm(), c, toy::gpu());
  c.kbit_upcast = false;
  const auto unprepared = estimate_step_time(lm(), c, toy::gpu());
  const auto unprepared_memory = estimate_memory(lm(), c, toy::gpu());
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  const double casts = 2 * 2 * (120 + 300);  // two blocks, forward and backward
  EXPECT_GT(prepared.memory_s - unprepared.memory_s, casts / bandwidth);
  EXPECT_GT(prepared.step_s, unprepared.step_s);
  const double linear = 2 * (100 + 400);
  EXPECT_DOUBLE_EQ(prepared_memory.weights_bytes - unprepared_memory.weights_bytes, (kParams - linear) * 2);
  c.master_weights = MasterWeights::bf16;
  const double pure_unprepared = estimate_step_time(lm(), c, toy::gpu()).step_s;
  c.kbit_upcast = true;
  EXPECT_DOUBLE_EQ(estimate_step_time(lm(), c, toy::gpu()).step_s, pure_unprepared);
}

TEST(Recipe, LoraAddsItsAdapterKernelsToTheStep) {
  auto full = config(1, Precision::bf16, Optimizer::sgd);
  auto lora = full;
  lora.lora_rank = 8;
  const auto base = estimate_step_time(lm(), full, toy::gpu());
  const auto adapted = estimate_step_time(lm(), lora, toy::gpu());
  // The adapters' traffic: per matrix and row, in + 6 out elements forward and twice that in backward.
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  const double bytes = 2 * ((10 + 6 * 10) + (10 + 6 * 40)) * 2.0;  // 2 blocks, 1 row, bf16
  EXPECT_GT(adapted.memory_s, bytes * 3 / bandwidth);
  EXPECT_GT(adapted.overhead_s, base.overhead_s);  // ten more kernels per adapted matrix
}

// LoRA dropout: every adapted matrix saves its dropped-out input (2 bytes in bf16) and the mask (1 byte), and
// runs a dropout kernel each way over x, its copy and the mask.
TEST(Recipe, LoraDropoutSavesTheDroppedInputAndItsMaskPerAdapter) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.lora_rank = 8;
  const auto plain = estimate_memory(lm(), c, toy::gpu());
  const auto plain_time = estimate_step_time(lm(), c, toy::gpu());
  c.lora_dropout = 0.05;
  const auto dropped = estimate_memory(lm(), c, toy::gpu());
  const auto dropped_time = estimate_step_time(lm(), c, toy::gpu());
  // 2 blocks x 2 adapted matrices, each with 10 input elements per sample, 3 bytes each.
  EXPECT_DOUBLE_EQ(dropped.activations_bytes - plain.activations_bytes, 2 * 2 * 10 * 3.0);
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  EXPECT_NEAR(dropped_time.memory_s - plain_time.memory_s, 2 * (2 * 2 * 10 * (2 * 2.0 + 1)) / bandwidth, 1e-18);
  c.lora_targets = LoraTargets::attention;  // only the attention matrices carry adapters, so dropouts
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).activations_bytes - plain.activations_bytes, 2 * 10 * 3.0);
  c.lora_rank.reset();  // no adapters: the probability has nothing to drop
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).activations_bytes,
                   estimate_memory(lm(), config(1, Precision::bf16, Optimizer::adamw), toy::gpu()).activations_bytes);
}

// Fused: 28 B per parameter with fp32 masters and states, 14 pure bf16; torch.optim's foreach: 72 and 36.
TEST(Recipe, PureBf16HalvesTheOptimizerSweep) {
  const double bandwidth = memory_bound_bandwidth(default_constants(), toy::gpu(80));
  for (const auto& [impl, mixed_bytes, pure_bytes] :
       {std::tuple{OptimizerImpl::fused, 28.0, 14.0}, std::tuple{OptimizerImpl::foreach, 72.0, 36.0}}) {
    auto c = config(1, Precision::bf16, Optimizer::adamw);
    c.optimizer_impl = impl;
    const double mixed = estimate_step_time(lm(), c, toy::gpu()).optimizer_s;
    c.master_weights = MasterWeights::bf16;
    const double pure = estimate_step_time(lm(), c, toy::gpu()).optimizer_s;
    EXPECT_NEAR(mixed - pure, (mixed_bytes - pure_bytes) * kParams / bandwidth, 1e-15) << to_string(impl);
  }
}

TEST(Recipe, AllocatedAndReservedLeaveOutTheContext) {
  auto c = config(2, Precision::bf16, Optimizer::adamw);
  const auto m = estimate_memory(lm(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.allocated_bytes(), m.weights_bytes + m.optimizer_bytes +
                                            std::max(m.backward_peak_bytes(), m.step_peak_bytes()));
  // The reserve: the overhead on the live set and the cached pair, the 1,000 logits of each of the 2 samples in
  // fp32 and their gradient (the plain loss).
  EXPECT_NEAR(m.reserved_bytes() - m.allocated_bytes(),
              default_constants().allocator_overhead_fraction * (m.activations_bytes + m.workspace_bytes) +
                  2 * 2 * 1000 * 4,
              1e-3);
  EXPECT_NEAR(m.total_bytes() - m.reserved_bytes(), default_constants().cuda_context_bytes, 1e-3);
}

TEST(Recipe, OptimizerInBackwardKeepsOneGradientAtATime) {
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.master_weights = MasterWeights::bf16;
  c.optimizer_in_backward = true;
  EXPECT_DOUBLE_EQ(estimate_memory(lm(), c, toy::gpu()).gradients_bytes, 2 * 10000);  // the lm_head's
}

TEST(Recipe, PagedStatesNeedNotFitAndWhatDoesNotFitLivesOnTheHost) {
  auto c = config(1, Precision::bf16, Optimizer::paged_adamw);
  const auto roomy = estimate_memory(lm(), c, toy::gpu());
  EXPECT_DOUBLE_EQ(roomy.paged_bytes, roomy.optimizer_bytes);
  EXPECT_DOUBLE_EQ(roomy.required_bytes(), roomy.total_bytes() - roomy.releasable_bytes - roomy.optimizer_bytes);
  EXPECT_DOUBLE_EQ(roomy.paged_out_bytes, 0);
  // A card just too small for the states: the cache gives way, then the states move out, and the total
  // stops at the card.
  const double capacity = roomy.total_bytes() - roomy.releasable_bytes - roomy.optimizer_bytes / 2;
  const auto tight = estimate_memory(lm(), c, toy::gpu(capacity / (1024.0 * 1024 * 1024)));
  EXPECT_NEAR(tight.total_bytes(), capacity, 1e-3);
  EXPECT_NEAR(tight.paged_out_bytes, roomy.optimizer_bytes / 2, 1e-3);
  EXPECT_GT(estimate_step_time(lm(), c, toy::gpu(capacity / (1024.0 * 1024 * 1024))).optimizer_s,
            estimate_step_time(lm(), c, toy::gpu()).optimizer_s);
}

TEST(Recipe, NamesRoundTrip) {
  for (const char* name : {"sgd", "adamw8bit", "paged_adamw", "paged_adamw8bit", "adafactor", "lion"}) {
    ASSERT_TRUE(parse_optimizer(name)) << name;
    EXPECT_STREQ(to_string(*parse_optimizer(name)), name);
  }
  EXPECT_FALSE(parse_optimizer("adam8bit"));
  EXPECT_EQ(parse_loss("fused"), LossImpl::fused);
  EXPECT_FALSE(parse_loss("liger"));
  EXPECT_EQ(parse_lora_targets("attn"), LoraTargets::attention);
  EXPECT_EQ(optimizer_names(), "sgd|momentum|adam|adamw|adamw8bit|paged_adamw|paged_adamw8bit|adafactor|lion");
}

}  // namespace
}  // namespace gpusage::estimate
