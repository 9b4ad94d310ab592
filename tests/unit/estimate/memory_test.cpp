#include <gtest/gtest.h>

#include "core/estimate/planner.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;
constexpr double kMiB = 1024.0 * 1024.0;

using toy::config;

TEST(Memory, Fp32AdamKeepsSixteenBytesPerParameter) {
  auto w = toy::two_block_model();
  auto m = estimate_memory(w, config(4, Precision::fp32, Optimizer::adam), toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes, 4 * 2000);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4 * 2000);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * 2000);
}

TEST(Memory, MomentumKeepsOneBufferAndSgdNone) {
  auto w = toy::two_block_model();
  EXPECT_DOUBLE_EQ(estimate_memory(w, config(1, Precision::fp32, Optimizer::momentum), toy::gpu()).optimizer_bytes,
                   4 * 2000);
  EXPECT_DOUBLE_EQ(estimate_memory(w, config(1, Precision::fp32, Optimizer::sgd), toy::gpu()).optimizer_bytes, 0);
}

TEST(Memory, ActivationsScaleWithBatchAndElementSize) {
  auto w = toy::two_block_model();
  // fp32: 4 samples x (2 layers x 100 elements x 4 B + 10 fixed B) = 3240 B.
  EXPECT_DOUBLE_EQ(estimate_memory(w, config(4, Precision::fp32, Optimizer::sgd), toy::gpu()).activations_bytes, 3240);
  // bf16 autocast stores 2-byte activations; the fixed bytes stay: 4 x (200 x 2 + 10) = 1640 B.
  EXPECT_DOUBLE_EQ(estimate_memory(w, config(4, Precision::bf16, Optimizer::sgd), toy::gpu()).activations_bytes, 1640);
}

TEST(Memory, MixedPrecisionKeepsFp32MasterWeightsPlusSixteenBitCopies) {
  auto w = toy::two_block_model();
  auto m = estimate_memory(w, config(4, Precision::fp16, Optimizer::adamw), toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes, 16 * 2000);
  // Workspace: 256 MiB library workspace + 2 B per parameter + the gradients in flight beyond the saved
  // tensors still alive, per sample: at block1 two 50-element outputs (2 x 50 x 2 B) less the loss's 10
  // saved bytes, already freed = 190 B, more than at the loss (4 B) or block0 (200 - 210 B).
  EXPECT_DOUBLE_EQ(m.workspace_bytes, 256 * kMiB + 4 * 190.0 + 2 * 2000);
}

// A convnet's widest gradients come at its stem, when backward has freed what every later layer saved:
// the peak adds only what exceeds those freed tensors, not two stem outputs on top of all activations.
TEST(Memory, BackwardsWidestGradientCountsOnlyBeyondTheTensorsAlreadyFreed) {
  workload::Workload w;
  w.domain = workload::Domain::vision;
  workload::Layer stem;
  stem.name = "stem";
  stem.op = workload::OpClass::conv;
  stem.output_shape = {1000};
  stem.saved_elements = 1000;
  workload::Layer body = stem;
  body.name = "body";
  body.output_shape = {100};
  body.saved_elements = 5000;
  w.layers = {stem, body};
  const auto m = estimate_memory(w, config(2, Precision::fp32, Optimizer::sgd), toy::gpu());
  // At body: 2 x 100 x 4 B with nothing freed = 800 B; at stem: 2 x 1000 x 4 B less body's 20,000 freed.
  EXPECT_DOUBLE_EQ(m.workspace_bytes, 256 * kMiB + 2 * 800.0);
  EXPECT_DOUBLE_EQ(m.activations_bytes, 2 * 6000 * 4.0);
}

TEST(Memory, ContextIsCudaContextPlusAllocatorOverhead) {
  auto w = toy::two_block_model();
  auto m = estimate_memory(w, config(4, Precision::fp32, Optimizer::sgd), toy::gpu());
  // The cached pair: the largest output (50 fp32 elements a sample, the logits under the plain loss) and its
  // gradient, for 4 samples.
  const double cached_pair = 2 * 4 * 50 * 4;
  EXPECT_DOUBLE_EQ(m.context_bytes, 0.29e9 + 0.08 * (m.activations_bytes + m.workspace_bytes) + cached_pair);
  EXPECT_NEAR(m.reserved_bytes() - m.allocated_bytes(),
              0.08 * (m.activations_bytes + m.workspace_bytes) + cached_pair, 1e-3);
  // Software from before lazy module loading holds every kernel in the context: 0.67 GB (PR #86509).
  auto eager = config(4, Precision::fp32, Optimizer::sgd);
  eager.eager_module_loading = true;
  EXPECT_DOUBLE_EQ(estimate_memory(w, eager, toy::gpu()).context_bytes - m.context_bytes, 0.667e9 - 0.29e9);
  // SGD has no step temporaries, and the activations outweigh the gradients: the peak is backward's start, with
  // the first layer's gradient (1,000 fp32 parameters) already made.
  EXPECT_DOUBLE_EQ(m.backward_gradients_bytes, 4 * 1000);
  EXPECT_DOUBLE_EQ(m.total_bytes(), m.weights_bytes + m.optimizer_bytes + m.activations_bytes + m.workspace_bytes +
                                        m.backward_gradients_bytes + m.context_bytes);
}

// Backward frees each block's saved activations as it makes the block's gradients, so the two never peak
// together: the step's peak is backward's start (activations, workspace and the gradients already there) or the
// optimizer step (every gradient and foreach Adam's copy of the second moments), whichever holds more.
TEST(Memory, GradientsAndActivationsDoNotPeakTogether) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::fp32, Optimizer::adamw);
  auto m = estimate_memory(w, c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4 * 2000);
  EXPECT_DOUBLE_EQ(m.backward_gradients_bytes, 4 * 1000);  // the largest layer's, made first
  EXPECT_DOUBLE_EQ(m.step_temporaries_bytes, 4 * 2000);    // sqrt of every second moment, fp32
  const double backward = m.activations_bytes + m.workspace_bytes + 4 * 1000;
  const double step = 4 * 2000 + 4 * 2000;
  EXPECT_DOUBLE_EQ(m.backward_peak_bytes(), backward);
  EXPECT_DOUBLE_EQ(m.step_peak_bytes(), step);
  EXPECT_DOUBLE_EQ(m.total_bytes(), m.weights_bytes + m.optimizer_bytes + m.context_bytes + std::max(backward, step));
  EXPECT_EQ(m.peaks_at_optimizer_step(), step > backward);
  // Every gradient is there from backward's start under DDP (its buckets), with accumulation (the last
  // micro-batch's) and when zero_grad() zeroes rather than frees them (PyTorch before 2.0).
  using Change = void (*)(TrainingConfig&);
  for (Change alive : std::initializer_list<Change>{[](TrainingConfig& x) { x.gpus_per_node = 2; },
                                                    [](TrainingConfig& x) { x.accumulation_steps = 2; },
                                                    [](TrainingConfig& x) { x.gradients_freed_between_steps = false; }}) {
    auto kept = c;
    alive(kept);
    EXPECT_DOUBLE_EQ(estimate_memory(w, kept, toy::gpu()).backward_gradients_bytes, 4 * 2000);
  }
}

// torch.optim's foreach Adam/AdamW hold a square root of every second moment while they step (PyTorch 2.0's
// default); the single-tensor loop before it, SGD, a host step and the step fused into backward hold none.
TEST(Memory, ForeachAdamHoldsASecondMomentsCopyWhileItSteps) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.master_weights = MasterWeights::bf16;
  EXPECT_DOUBLE_EQ(estimate_memory(w, c, toy::gpu()).step_temporaries_bytes, 2 * 2000);
  auto loop = c;
  loop.optimizer_impl = OptimizerImpl::loop;
  EXPECT_DOUBLE_EQ(estimate_memory(w, loop, toy::gpu()).step_temporaries_bytes, 0);
  EXPECT_DOUBLE_EQ(estimate_memory(w, config(1, Precision::bf16, Optimizer::momentum), toy::gpu()).step_temporaries_bytes,
                   0);
  auto host = c;
  host.offload.optimizer = true;
  EXPECT_DOUBLE_EQ(estimate_memory(w, host, toy::gpu()).step_temporaries_bytes, 0);
  auto in_backward = c;
  in_backward.optimizer_in_backward = true;
  EXPECT_DOUBLE_EQ(estimate_memory(w, in_backward, toy::gpu()).step_temporaries_bytes, 0);
}

// Data parallel opens an NCCL communicator on each rank, beside the allocator: 544 MB for two GPUs, 688 MB
// for more (NVIDIA/nccl#964), whatever the node count; one GPU has none.
TEST(Memory, DataParallelAddsTheNcclCommunicator) {
  auto w = toy::two_block_model();
  const auto one = config(4, Precision::fp32, Optimizer::sgd);
  auto with = [&](int gpus_per_node, int nodes) {
    auto c = one;
    c.gpus_per_node = gpus_per_node;
    c.nodes = nodes;
    return estimate_memory(w, c, toy::gpu()).context_bytes - estimate_memory(w, one, toy::gpu()).context_bytes;
  };
  EXPECT_DOUBLE_EQ(with(2, 1), 544e6);
  EXPECT_DOUBLE_EQ(with(8, 1), 688e6);
  EXPECT_DOUBLE_EQ(with(8, 4), 688e6);
  EXPECT_DOUBLE_EQ(with(1, 2), 544e6);  // two nodes of one GPU are two ranks too
}

TEST(Memory, CheckpointingKeepsSegmentInputsAndOneSegmentWorkingSet) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::fp32, Optimizer::sgd);
  c.checkpointing = true;
  // Outside segments: 10 fixed bytes; inputs: 2 segments x 20 elements x 4 B; largest segment: 100 x 4 B.
  EXPECT_DOUBLE_EQ(estimate_memory(w, c, toy::gpu()).activations_bytes, 10 + 160 + 400);
}

TEST(Memory, LoraTrainsOnlyAdaptersOverASixteenBitFrozenBase) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.lora_rank = 4;
  auto m = estimate_memory(w, c, toy::gpu());
  const double adapters = 2 * 4 * (10 + 100);  // r (in + out) per adapted matrix
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * 2000 + 4 * adapters);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4 * adapters);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * adapters);
}

TEST(Memory, QloraStoresAdaptedMatricesInNf4) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::bf16, Optimizer::adamw);
  c.qlora = true;  // default rank 16
  auto m = estimate_memory(w, c, toy::gpu());
  const double linear = 2 * 10 * 100;  // the adapted matrices' own parameters
  const double adapters = 2 * 16 * (10 + 100);
  // The rest (here the matrices' biases and norms) in fp32: PEFT's k-bit preparation (recipe_test.cpp).
  EXPECT_DOUBLE_EQ(m.weights_bytes, linear * 4.127 / 8 + (2000 - linear) * 4 + 4 * adapters);
}

TEST(Memory, FsdpShardsStateAndGathersTheLargestUnit) {
  auto w = toy::two_block_model();
  auto c = config(1, Precision::fp32, Optimizer::adam);
  c.parallel = Parallel::fsdp;
  c.gpus_per_node = 4;
  auto m = estimate_memory(w, c, toy::gpu());
  EXPECT_DOUBLE_EQ(m.weights_bytes, 4 * 2000 / 4.0 + 2 * 1000 * 4);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4 * 2000 / 4.0);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * 2000 / 4.0);
}

// Under FSDP a unit's 16-bit parameters are gathered and freed (counted in weights): no whole-model
// autocast copy in the workspace, which a DDP rank keeps.
TEST(Memory, FsdpKeepsNoWholeModelSixteenBitCopy) {
  auto w = toy::two_block_model();
  auto ddp = config(4, Precision::bf16, Optimizer::adamw);
  ddp.gpus_per_node = 4;
  auto fsdp = ddp;
  fsdp.parallel = Parallel::fsdp;
  const auto d = estimate_memory(w, ddp, toy::gpu());
  const auto f = estimate_memory(w, fsdp, toy::gpu());
  EXPECT_DOUBLE_EQ(d.workspace_bytes - f.workspace_bytes, 2 * 2000);
  EXPECT_DOUBLE_EQ(f.weights_bytes, 4 * 2000 / 4.0 + 2 * 1000 * 2);  // fp32 shard + two bf16 units
}

Calibration with_unreleasable(double fraction) {
  Calibration c;
  c.constants.allocator_overhead_fraction = 0.08;
  c.constants.allocator_unreleasable_fraction = fraction;
  return c;
}

// The allocator frees its cached segments and retries before it fails: only the unreleasable part of its
// reserve has to fit, while nvidia-smi's peak counts all of it.
TEST(Memory, OnlyTheUnreleasablePartOfTheReserveHasToFit) {
  auto w = toy::two_block_model();
  const auto c = config(4, Precision::fp32, Optimizer::sgd);
  const auto whole = with_unreleasable(0.08);
  const auto part = with_unreleasable(0.05);
  const auto all = estimate_memory(w, c, toy::gpu(), &whole);
  const auto some = estimate_memory(w, c, toy::gpu(), &part);
  const double allocated = all.activations_bytes + all.workspace_bytes;
  const double cached_pair = 2 * 4 * 50 * 4;  // free segments of their own: always releasable
  EXPECT_DOUBLE_EQ(all.releasable_bytes, cached_pair);
  EXPECT_DOUBLE_EQ(all.required_bytes(), all.total_bytes() - cached_pair);
  EXPECT_DOUBLE_EQ(some.total_bytes(), all.total_bytes());  // nvidia-smi's peak is the same
  EXPECT_NEAR(some.releasable_bytes, 0.03 * allocated + cached_pair, 1e-3);
  EXPECT_NEAR(some.required_bytes(), all.total_bytes() - 0.03 * allocated - cached_pair, 1e-3);
}

// At the card's edge the cache gives way: a step whose live set and fragmentation fit runs, and
// nvidia-smi shows the card full rather than more than the card has. One that does not fit keeps its need.
TEST(Memory, AtTheEdgeTheCacheGivesWayAndThePeakStopsAtTheCard) {
  auto w = toy::two_block_model();
  const auto c = config(4, Precision::fp32, Optimizer::sgd);
  const auto part = with_unreleasable(0.0);
  const auto roomy = estimate_memory(w, c, toy::gpu(), &part);
  ASSERT_GT(roomy.releasable_bytes, 1e6);
  const double edge = roomy.required_bytes() + 0.5 * roomy.releasable_bytes;
  const auto tight = estimate_memory(w, c, toy::gpu(edge / units::kGiB), &part);
  EXPECT_TRUE(tight.fits(edge));
  EXPECT_NEAR(tight.total_bytes(), edge, 1e-3);
  EXPECT_NEAR(tight.required_bytes(), roomy.required_bytes(), 1e-3);
  const double small = roomy.required_bytes() - 1e6;
  const auto over = estimate_memory(w, c, toy::gpu(small / units::kGiB), &part);
  EXPECT_FALSE(over.fits(small));
  EXPECT_NEAR(over.total_bytes(), roomy.total_bytes(), 1e-3);
}

TEST(Memory, MaxBatchIsTheLargestBatchThatFits) {
  auto w = toy::two_block_model();
  auto gpu = toy::gpu(1.0);
  auto c = config(1, Precision::fp32, Optimizer::sgd);
  int largest = max_batch(w, c, gpu);
  ASSERT_GT(largest, 1);
  c.batch_per_gpu = largest;
  EXPECT_TRUE(estimate_memory(w, c, gpu).fits(gpu.memory_bytes()));
  EXPECT_LE(estimate_memory(w, c, gpu).total_bytes(), gpu.memory_bytes());
  c.batch_per_gpu = largest + 1;
  EXPECT_FALSE(estimate_memory(w, c, gpu).fits(gpu.memory_bytes()));
  EXPECT_GT(estimate_memory(w, c, gpu).required_bytes(), gpu.memory_bytes());
}

TEST(Memory, MaxBatchIsZeroWhenNothingFits) {
  auto w = toy::two_block_model();
  EXPECT_EQ(max_batch(w, config(1, Precision::fp32, Optimizer::sgd), toy::gpu(0.5)), 0);
}

}  // namespace
}  // namespace gpusage::estimate
