#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/estimate/planner.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;

TrainingConfig sgd_config(int batch, Precision precision) { return toy::config(batch, precision, Optimizer::sgd); }

// One huge GEMM layer: compute-bound at any precision, so step time follows the peak rate.
// One normalization layer of rows x width elements per sample that reads its input and writes its output, alone in
// a workload of `domain`.
workload::Workload one_norm(const std::string& name, double rows, double width, workload::Domain domain) {
  workload::Layer norm;
  norm.name = name;
  norm.op = workload::OpClass::normalization;
  norm.output_shape = {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(width)};
  norm.input_elements = rows * width;
  norm.forward_io_elements = 2 * norm.input_elements;
  workload::Workload w;
  w.layers = {norm};
  w.domain = domain;
  return w;
}

workload::Workload big_gemm() {
  workload::Workload w;
  w.id = "gemm";
  w.display_name = "GEMM";
  workload::Layer l;
  l.name = "fc";
  l.op = workload::OpClass::matmul;
  l.output_shape = {4096, 4096};
  l.params = 4096 * 4096;
  l.forward_flops = 2.0 * 4096 * 4096 * 4096;
  l.backward_flops = 2 * l.forward_flops;
  l.forward_io_elements = 2 * 4096 * 4096;
  w.layers.push_back(l);
  return w;
}

TEST(StepTime, ComputeBoundGemmRunsAtCalibratedTensorRate) {
  auto w = big_gemm();
  auto gpu = toy::gpu(80);
  auto t = estimate_step_time(w, sgd_config(8, Precision::fp16), gpu);
  EXPECT_EQ(t.bound, Bound::compute);
  const ModelConstants& k = default_constants();
  const double flops = 8 * 3 * w.layers[0].forward_flops;
  const double ideal = flops / (160e12 * k.matmul_tensor_efficiency);
  EXPECT_GT(t.step_s, ideal);
  EXPECT_LT(t.step_s, ideal * 1.05);  // fixed costs, casts and the optimizer are small next to the GEMM
}

TEST(StepTime, MixedPrecisionIsFasterThanFp32OnTensorCores) {
  auto w = big_gemm();
  auto gpu = toy::gpu(80);
  auto fp32 = estimate_step_time(w, sgd_config(8, Precision::fp32), gpu);
  auto fp16 = estimate_step_time(w, sgd_config(8, Precision::fp16), gpu);
  // 160 TFLOPS at the tensor efficiency against 40 TFLOPS at the FP32 efficiency.
  const ModelConstants& k = default_constants();
  const double expected = 160 * k.matmul_tensor_efficiency / (40 * k.matmul_fp32_efficiency);
  EXPECT_NEAR(fp32.step_s / fp16.step_s, expected, 0.05 * expected);
}

// A card whose tensor cores run FP32 accumulation at half their 16-bit-accumulate rate (GeForce) runs a GEMM at
// twice the efficiency of its halved peak, at most all of it; a card without the split runs at the efficiency.
TEST(StepTime, HalfRateTensorCoresRunAtTwiceTheEfficiencyOfTheirHalvedPeak) {
  const ModelConstants& k = default_constants();
  auto w = big_gemm();
  auto full = toy::gpu(80);
  auto halved = full;
  halved.fp16_acc16_tflops = 2 * *full.fp16_tflops;  // 320 with 16-bit accumulation, 160 with FP32
  const double flops = 8 * 3 * w.layers[0].forward_flops;
  const double full_s = estimate_step_time(w, sgd_config(8, Precision::fp16), full).compute_s;
  const double halved_s = estimate_step_time(w, sgd_config(8, Precision::fp16), halved).compute_s;
  EXPECT_NEAR(full_s, flops / (160e12 * k.matmul_tensor_efficiency), 0.02 * full_s);
  EXPECT_NEAR(halved_s, flops / (160e12 * std::min(1.0, 2 * k.matmul_tensor_efficiency)), 0.02 * halved_s);
}

// The power limit compares the flagship's FLOPs per watt with the card's own at the same (full) tensor rate: a
// GeForce card listing 320 TFLOPS with 16-bit accumulation at 400 W, against a flagship doing 0.64 TFLOPS per
// watt, sustains power_headroom x 0.64 x 400 / 320 of its clock, not twice that (its FP32-accumulate 160).
TEST(StepTime, PowerLimitCountsTheCardAtItsFullTensorRate) {
  ModelConstants k = default_constants();
  k.power_headroom = 1.0;
  auto card = toy::gpu(80);
  card.fp16_acc16_tflops = 320;
  card.power_flagship_fp16_tflops_per_watt = 0.64;
  Calibration calibration;
  calibration.constants = k;
  auto w = big_gemm();
  const double flops = 8 * 3 * w.layers[0].forward_flops;
  const double held = 0.64 * 400 / 320;  // 0.8 of the rated clock
  const double expected = flops / (160e12 * held * std::min(1.0, 2 * k.matmul_tensor_efficiency));
  const double got = estimate_step_time(w, sgd_config(8, Precision::fp16), card, &calibration).compute_s;
  EXPECT_NEAR(got, expected, 0.02 * expected);
}

TEST(StepTime, TinyBatchesAreOverheadBound) {
  auto w = toy::two_block_model();
  auto t = estimate_step_time(w, sgd_config(1, Precision::fp32), toy::gpu(80));
  EXPECT_EQ(t.bound, Bound::overhead);
}

TEST(StepTime, AccumulationRunsTheMicroBatchKTimesAndTheOptimizerOnce) {
  auto w = big_gemm();
  auto gpu = toy::gpu(80);
  auto c = sgd_config(8, Precision::fp16);
  auto one = estimate_step_time(w, c, gpu);
  c.accumulation_steps = 4;
  auto four = estimate_step_time(w, c, gpu);
  EXPECT_NEAR(four.step_s, 4 * (one.step_s - one.optimizer_s) + one.optimizer_s, 1e-9);
}

TEST(StepTime, CheckpointingAddsOneForwardOfTheSegments) {
  auto w = big_gemm();
  w.layers[0].segment = 0;
  auto gpu = toy::gpu(80);
  auto c = sgd_config(8, Precision::fp16);
  auto plain = estimate_step_time(w, c, gpu);
  c.checkpointing = true;
  auto recomputed = estimate_step_time(w, c, gpu);
  EXPECT_GT(recomputed.recompute_s, 0);
  // Forward is a third of forward + backward for a GEMM.
  EXPECT_NEAR(recomputed.step_s / plain.step_s, 4.0 / 3.0, 0.05);
}

TEST(StepTime, DataParallelAllReduceIsHiddenUnlessTheLinkIsSlow) {
  auto w = big_gemm();
  auto gpu = toy::gpu(80);
  gpu.nvlink_gbs = 900;
  auto c = sgd_config(8, Precision::fp16);
  c.gpus_per_node = 8;
  auto nvlink = estimate_step_time(w, c, gpu);
  c.gpus_per_node = 1;
  c.nodes = 8;
  c.network_gbs = 1.25;  // 10 Gb/s Ethernet
  auto ethernet = estimate_step_time(w, c, gpu);
  EXPECT_LT(nvlink.communication_s, ethernet.communication_s);
  // 64 MiB of fp32 gradients, ring 2 x 7/8, over 1.25 GB/s x 0.8 efficiency, less what backward hides.
  const double ring_s = 2.0 * 7 / 8 * 4.0 * 4096 * 4096 / (1.25e9 * 0.8);
  EXPECT_GT(ethernet.communication_s, ring_s * 0.5);
  EXPECT_LE(ethernet.communication_s, ring_s);
}

// --interconnect pcie: a card with NVLink run without its bridge all-reduces over PCIe (gen 4 x16 here), and a
// GeForce card has no PCIe peer-to-peer, so NCCL stages through host memory: each byte crosses PCIe twice.
// --interconnect nvlink on a card without NVLink is the user's mistake.
TEST(StepTime, InterconnectPcieDropsTheBridgeAndGeForceStagesThroughTheHost) {
  auto w = big_gemm();
  auto gpu = toy::gpu(80);
  gpu.nvlink_gbs = 112.5;
  gpu.pcie_gen = 4;
  gpu.pcie_lanes = 16;
  auto c = sgd_config(1, Precision::fp16);
  c.gpus_per_node = 2;
  const double card = estimate_step_time(w, c, gpu).communication_s;
  c.interconnect = Interconnect::pcie;
  const double pcie = estimate_step_time(w, c, gpu).communication_s;
  auto geforce = gpu;
  geforce.family = catalog::Family::rtx30;
  const double staged = estimate_step_time(w, c, geforce).communication_s;
  EXPECT_GT(pcie, card);
  EXPECT_GT(staged, pcie);
  // 64 MiB of fp32 gradients, ring 2 x 1/2, over PCIe 4.0 x16 (31.5 GB/s a direction) at 80% (staged: half
  // that): no more than the whole transfer is exposed.
  const double ring_pcie_s = 4.0 * 4096 * 4096 / (31.5e9 * 0.8);
  EXPECT_LE(pcie, ring_pcie_s * 1.001);
  EXPECT_GT(staged, pcie + 0.5 * ring_pcie_s);
  EXPECT_LE(staged, 2 * ring_pcie_s * 1.001);
  c.interconnect = Interconnect::nvlink;
  auto no_bridge = gpu;
  no_bridge.nvlink_gbs.reset();
  EXPECT_THROW(estimate_step_time(w, c, no_bridge), InputError);
}

// A card whose FP16 peak per watt exceeds its flagship's clocks down to power_headroom x the
// flagship's FLOPs per watt x its TDP: 1.228 x 0.2 TFLOPS/W x 400 W = 98 TFLOPS of its 160.
TEST(StepTime, APowerLimitedCardSustainsItsShareOfTheFlagshipsFlopsPerWatt) {
  auto w = big_gemm();
  auto free_running = toy::gpu(80);
  auto limited = free_running;
  limited.power_flagship = "flagship";
  limited.power_flagship_fp16_tflops_per_watt = 0.2;
  const ModelConstants& k = default_constants();
  const double sustained = k.power_headroom * 0.2 * limited.tdp_w;
  ASSERT_LT(sustained, 160);
  const auto fast = estimate_step_time(w, sgd_config(8, Precision::fp16), free_running);
  const auto slow = estimate_step_time(w, sgd_config(8, Precision::fp16), limited);
  EXPECT_NEAR(slow.step_s / fast.step_s, 160 / sustained, 0.02 * 160 / sustained);
  // TF32 runs on the same tensor cores at the same clock; FP32 CUDA-core math is not limited.
  const auto tf32_fast = estimate_step_time(w, sgd_config(8, Precision::tf32), free_running);
  const auto tf32_slow = estimate_step_time(w, sgd_config(8, Precision::tf32), limited);
  EXPECT_NEAR(tf32_slow.step_s / tf32_fast.step_s, 160 / sustained, 0.02 * 160 / sustained);
  EXPECT_DOUBLE_EQ(estimate_step_time(w, sgd_config(8, Precision::fp32), limited).step_s,
                   estimate_step_time(w, sgd_config(8, Precision::fp32), free_running).step_s);
  // A card at or below its flagship's FLOPs per watt runs at its datasheet rate.
  limited.power_flagship_fp16_tflops_per_watt = 1.0;
  EXPECT_DOUBLE_EQ(estimate_step_time(w, sgd_config(8, Precision::fp16), limited).step_s, fast.step_s);
}

// One GEMM of reduction depth `depth` per output element (forward) and per input element (input
// gradient), the FLOPs held at 2^34 per sample, on a GPU with bandwidth to spare.
workload::Workload gemm_of_depth(double depth) {
  workload::Workload w;
  w.id = "gemm";
  workload::Layer l;
  l.op = workload::OpClass::matmul;
  const double outputs = 17179869184.0 / 2 / depth;
  l.output_shape = {static_cast<std::int64_t>(outputs)};
  l.forward_flops = 2 * depth * outputs;
  l.backward_flops = 2 * l.forward_flops;
  l.input_elements = outputs;
  l.forward_io_elements = 2 * outputs;
  w.layers.push_back(l);
  return w;
}

// Each output tile spends gemm_tile_fixed_cycles outside its K loop, which takes 2 x 128^2 x K /
// (FLOPs per SM per cycle) cycles: a shallow GEMM loses more, and more on SMs that do more per cycle.
TEST(StepTime, ShallowGemmsLoseTheTileFixedCyclesMoreOnFasterSms) {
  const ModelConstants& k = default_constants();
  auto gpu = toy::gpu(80);
  gpu.memory_bandwidth_gbs = 1e7;  // keep both compute-bound
  auto slow_sms = gpu;             // a quarter of the tensor FLOPs per SM per cycle
  slow_sms.fp16_tflops = 40;
  auto ratio = [&](const catalog::Gpu& g) {
    const auto shallow = estimate_step_time(gemm_of_depth(64), sgd_config(8, Precision::fp16), g);
    const auto deep = estimate_step_time(gemm_of_depth(8192), sgd_config(8, Precision::fp16), g);
    return shallow.compute_s / deep.compute_s;
  };
  // Forward pays the overhead on all its FLOPs, backward on its input-gradient half: 3F + 2F x o.
  auto expected = [&](const catalog::Gpu& g, double depth) {
    const double flops_per_sm_cycle = *g.fp16_tflops * 2 * g.cuda_cores / (g.sm_count * g.fp32_tflops);
    const double o = k.gemm_tile_fixed_cycles * flops_per_sm_cycle / (2 * k.tile_elements * depth);
    return 3 + 2 * o;
  };
  EXPECT_NEAR(ratio(gpu), expected(gpu, 64) / expected(gpu, 8192), 1e-6);
  EXPECT_NEAR(ratio(slow_sms), expected(slow_sms, 64) / expected(slow_sms, 8192), 1e-6);
  EXPECT_GT(ratio(gpu), ratio(slow_sms));
  EXPECT_GT(ratio(slow_sms), 1.0);
}

// NCHW convolutions under tensor cores pay nchw_transpose_passes extra passes over their input and
// output, priced per element (4 bytes) at every tensor precision; --channels-last pays none.
TEST(StepTime, NchwTransposesCostTheSameAtEveryTensorPrecision) {
  const ModelConstants& k = default_constants();
  workload::Workload w;
  w.id = "conv";
  w.domain = workload::Domain::vision;
  workload::Layer conv;
  conv.op = workload::OpClass::conv;
  conv.output_shape = {64, 56, 56};
  conv.forward_flops = 2.0 * 576 * 64 * 56 * 56;
  conv.backward_flops = 2 * conv.forward_flops;
  conv.input_elements = 64 * 56 * 56;
  conv.forward_io_elements = 2 * 64 * 56 * 56;
  w.layers.push_back(conv);
  const auto gpu = toy::gpu(80);
  const double batch = 32;
  const double expected_s =
      3 * k.nchw_transpose_passes * batch * conv.forward_io_elements * 4 / memory_bound_bandwidth(k, toy::gpu(80));
  for (Precision precision : {Precision::fp16, Precision::tf32}) {
    auto nhwc = sgd_config(32, precision);
    nhwc.channels_last = true;
    const double nchw_s = estimate_step_time(w, sgd_config(32, precision), gpu).step_s;
    EXPECT_NEAR(nchw_s - estimate_step_time(w, nhwc, gpu).step_s, expected_s, 1e-6 * expected_s)
        << catalog::to_string(precision);
  }
  auto fp32_nhwc = sgd_config(32, Precision::fp32);
  fp32_nhwc.channels_last = true;
  EXPECT_DOUBLE_EQ(estimate_step_time(w, sgd_config(32, Precision::fp32), gpu).step_s,
                   estimate_step_time(w, fp32_nhwc, gpu).step_s);
}

// GeForce boards run their math above the rated boost clock their catalog rates are quoted at.
TEST(StepTime, GeForceMathRunsAtTheBoostClockRatio) {
  auto w = big_gemm();
  auto datacenter = toy::gpu(80);
  auto geforce = datacenter;
  geforce.family = catalog::Family::rtx40;
  const auto config = sgd_config(8, Precision::fp16);
  const double ratio = estimate_step_time(w, config, datacenter).compute_s / estimate_step_time(w, config, geforce).compute_s;
  EXPECT_NEAR(ratio, default_constants().geforce_boost_clock_ratio, 1e-9);
}

// TF32 kernels fall short of their own peak (tf32_relative_efficiency) only where the tensor cores do TF32
// faster than the CUDA cores do FP32; a GeForce card's TF32 tensor rate is its FP32 rate, and its TF32
// GEMM runs at the 16-bit efficiency of that rate.
TEST(StepTime, Tf32LosesItsShortfallOnlyWhereTensorCoresOutrunTheCudaCores) {
  const ModelConstants& k = default_constants();
  auto w = big_gemm();
  auto fast = toy::gpu(80);  // TF32 80 TFLOPS against FP32 40
  auto geforce_like = fast;
  geforce_like.tf32_tflops = geforce_like.fp32_tflops;
  const auto config = sgd_config(8, Precision::tf32);
  const double flops = 8 * 3 * w.layers[0].forward_flops;
  const double fast_s = flops / (80e12 * k.matmul_tensor_efficiency * k.tf32_relative_efficiency);
  const double slow_s = flops / (40e12 * k.matmul_tensor_efficiency);
  EXPECT_NEAR(estimate_step_time(w, config, fast).compute_s, fast_s, 0.02 * fast_s);
  EXPECT_NEAR(estimate_step_time(w, config, geforce_like).compute_s, slow_s, 0.02 * slow_s);
}

// A memory-bound layer reads what the layer before it wrote; the part of it still in L2, exp(-S / L2) of
// S bytes, does not cross the DRAM bus: forward its input, backward its output gradient.
TEST(StepTime, AnL2KeepsPartOfWhatAMemoryBoundLayerReads) {
  const ModelConstants& k = default_constants();
  workload::Workload w;
  w.id = "relu";
  workload::Layer relu;
  relu.op = workload::OpClass::elementwise;
  relu.output_shape = {64, 56, 56};
  relu.input_elements = 64 * 56 * 56;
  relu.forward_io_elements = 2 * 64 * 56 * 56;
  relu.forward_flops = 64 * 56 * 56;
  w.layers.push_back(relu);
  auto no_l2 = toy::gpu(80);
  auto with_l2 = no_l2;
  with_l2.l2_cache_mb = 72;
  const auto config = sgd_config(32, Precision::fp16);
  const double tensor = 32.0 * 64 * 56 * 56 * 2;  // bytes of the input, and of the output gradient
  const double resident = tensor * std::exp(-tensor / (72e6 * k.l2_reuse_fraction));
  const double expected_s = 2 * resident / memory_bound_bandwidth(k, toy::gpu(80));
  const double saved_s =
      estimate_step_time(w, config, no_l2).step_s - estimate_step_time(w, config, with_l2).step_s;
  EXPECT_NEAR(saved_s, expected_s, 1e-6 * expected_s);
  EXPECT_GT(saved_s, 0);
}

// Hugging Face's eager RMSNorm moves what its Python ops add beyond the fused kernel: forward once, backward
// twice over, and one more forward when the block is recomputed; each extra kernel adds its fixed time.
TEST(StepTime, EagerKernelsAddTheirTrafficForwardBackwardAndRecompute) {
  workload::Workload w = one_norm("layers.0.input_layernorm", 4096, 4096, workload::Domain::language);
  workload::Layer& norm = w.layers[0];
  norm.segment = 0;
  norm.eager_extra_elements = 2 * norm.input_elements;
  norm.eager_extra_fp32_elements = 7 * norm.input_elements;
  norm.eager_extra_kernels = 7;
  const ModelConstants& k = default_constants();
  auto c = sgd_config(8, Precision::bf16);
  c.eager_kernels = false;
  const double fused = estimate_step_time(w, c, toy::gpu(80)).step_s;
  c.eager_kernels = true;
  const double eager = estimate_step_time(w, c, toy::gpu(80)).step_s;
  const double bytes = 8 * (2 * norm.input_elements * 2 + 7 * norm.input_elements * 4);
  const double bandwidth = memory_bound_bandwidth(k, toy::gpu(80));
  EXPECT_NEAR(eager - fused, 3 * bytes / bandwidth + 2 * 7 * k.kernel_fixed_s, 1e-9);
  c.checkpointing = true;
  const double recomputed = estimate_step_time(w, c, toy::gpu(80)).step_s;
  c.eager_kernels = false;
  const double recomputed_fused = estimate_step_time(w, c, toy::gpu(80)).step_s;
  EXPECT_NEAR(recomputed - recomputed_fused, 4 * bytes / bandwidth + 3 * 7 * k.kernel_fixed_s, 1e-9);
}

// Under autocast a norm and an add on the fp32 residual stream move autocast_extra_io_bytes more (twice in
// backward) in autocast_extra_kernels more kernels each way; pure 16-bit training moves none of it.
TEST(StepTime, AutocastsFp32ResidualStreamAddsItsTrafficOnlyUnderAutocast) {
  const workload::Workload w = one_norm("blocks.0.norm1", 1024, 768, workload::Domain::vision);
  const workload::Layer& norm = w.layers[0];
  workload::Workload streamed = w;
  streamed.layers[0].autocast_extra_io_bytes = 10 * norm.input_elements;
  streamed.layers[0].autocast_extra_kernels = 1;
  const ModelConstants& k = default_constants();
  auto c = sgd_config(8, Precision::fp16);
  const double bandwidth = memory_bound_bandwidth(k, toy::gpu(80));
  const double extra = estimate_step_time(streamed, c, toy::gpu(80)).step_s - estimate_step_time(w, c, toy::gpu(80)).step_s;
  EXPECT_NEAR(extra, 3 * 8 * 10 * norm.input_elements / bandwidth + 2 * k.kernel_fixed_s, 1e-9);
  c.pure_16bit = true;
  EXPECT_DOUBLE_EQ(estimate_step_time(streamed, c, toy::gpu(80)).step_s, estimate_step_time(w, c, toy::gpu(80)).step_s);
}

// Before PyTorch 2.8 a LayerNorm's weight gradients were reduced by one block per 32 columns: the pass that reads
// the input and the output gradient again (4-byte elements under autocast) streams from columns / 32 SMs at half an
// SM's in-flight rate each, not from the whole GPU. 192 columns on the toy's 100 SMs: 6 SMs.
TEST(StepTime, ColumnBlockLayerNormBackwardStreamsFromOneSmPer32Columns) {
  workload::Workload w = one_norm("blocks.0.norm1", 197, 192, workload::Domain::vision);
  w.layers[0].layer_norm_columns = 192;
  const workload::Layer& norm = w.layers[0];
  const ModelConstants& k = default_constants();
  auto c = sgd_config(512, Precision::fp16);
  const double today = estimate_step_time(w, c, toy::gpu(80)).step_s;
  c.column_block_layer_norm_backward = true;
  const double before_2_8 = estimate_step_time(w, c, toy::gpu(80)).step_s;
  const double bytes = 2 * 512 * norm.input_elements * 4;
  const double bandwidth = memory_bound_bandwidth(k, toy::gpu(80));
  const double column_rate = 6 * k.sm_memory_gbs * 1e9 * 0.5;
  ASSERT_LT(column_rate, bandwidth);
  EXPECT_NEAR(before_2_8 - today, bytes / column_rate - bytes / bandwidth, 1e-9);
}

// A memory-bound kernel's bytes take the DRAM's time plus the SMs' time to keep them in flight: with the same
// DRAM, a GPU of fewer SMs streams slower, and a memory-bound step takes longer in proportion.
TEST(StepTime, MemoryBoundKernelsSlowWhereEachSmHasMoreBandwidthToCover) {
  const ModelConstants& k = default_constants();
  auto wide = toy::gpu(80);
  auto narrow = toy::gpu(80);
  narrow.sm_count = 25;
  const double dram = 1000e9 * k.memory_efficiency;
  EXPECT_NEAR(memory_bound_bandwidth(k, wide), 1 / (1 / dram + 1 / (100 * k.sm_memory_gbs * 1e9)), 1);
  EXPECT_NEAR(memory_bound_bandwidth(k, narrow), 1 / (1 / dram + 1 / (25 * k.sm_memory_gbs * 1e9)), 1);
  EXPECT_LT(memory_bound_bandwidth(k, narrow), memory_bound_bandwidth(k, wide));
  ModelConstants off = k;
  off.sm_memory_gbs = 0;
  EXPECT_DOUBLE_EQ(memory_bound_bandwidth(off, narrow), dram);
  workload::Layer relu;
  relu.name = "relu";
  relu.op = workload::OpClass::elementwise;
  relu.output_shape = {1 << 20};
  relu.input_elements = 1 << 20;
  relu.forward_io_elements = 2.0 * (1 << 20);
  workload::Workload w;
  w.layers = {relu};
  const auto c = sgd_config(64, Precision::fp32);
  EXPECT_NEAR(estimate_step_time(w, c, narrow).memory_s / estimate_step_time(w, c, wide).memory_s,
              memory_bound_bandwidth(k, wide) / memory_bound_bandwidth(k, narrow), 1e-9);
}

// clip_grad_norm_ reads every gradient for the norm and reads and writes it to scale it, once per optimizer
// step: 3 x the gradient bytes (fp32 master gradients here) on the rank's shard, whatever the accumulation.
TEST(StepTime, GradientClippingSweepsTheGradientsThreeTimesPerOptimizerStep) {
  const auto w = toy::two_block_model();
  const ModelConstants& k = default_constants();
  auto c = sgd_config(8, Precision::bf16);
  c.optimizer = Optimizer::adamw;
  const StepTime plain = estimate_step_time(w, c, toy::gpu(80));
  c.clip_grad_norm = true;
  const StepTime clipped = estimate_step_time(w, c, toy::gpu(80));
  const double bandwidth = memory_bound_bandwidth(k, toy::gpu(80));
  const double bytes = 3 * 4.0 * static_cast<double>(w.params());
  EXPECT_NEAR(clipped.optimizer_s - plain.optimizer_s, bytes / bandwidth + 2 * k.kernel_fixed_s, 1e-12);
  EXPECT_GT(clipped.step_s, plain.step_s);
  c.accumulation_steps = 4;
  const double accumulated = estimate_step_time(w, c, toy::gpu(80)).optimizer_s;
  EXPECT_DOUBLE_EQ(accumulated, clipped.optimizer_s);
  c.accumulation_steps = 1;
  c.gpus_per_node = 4;
  c.parallel = Parallel::fsdp;
  c.clip_grad_norm = false;
  const double sharded_plain = estimate_step_time(w, c, toy::gpu(80)).optimizer_s;
  c.clip_grad_norm = true;
  const double sharded = estimate_step_time(w, c, toy::gpu(80)).optimizer_s;
  EXPECT_NEAR(sharded - sharded_plain, bytes / 4 / bandwidth + 2 * k.kernel_fixed_s, 1e-12);
}

// torch.optim's foreach and loop AdamW run each op of the update as a pass of its own: 14 state-sized accesses, 2
// of the gradient and 2 of the parameter (72 B per parameter with fp32 masters and states) where a fused step makes
// 4, 1 and 2 (28 B). The loop launches its eight ops per tensor, foreach per chunk of tensors. A step on the host
// (offload) is priced by the host's rate whatever the implementation.
TEST(StepTime, UnfusedAdamWSweepsTheStatesOnceForEachOpOfTheUpdate) {
  const auto w = toy::two_block_model();
  const ModelConstants& k = default_constants();
  auto c = sgd_config(8, Precision::bf16);
  c.optimizer = Optimizer::adamw;
  c.optimizer_impl = OptimizerImpl::fused;
  const StepTime fused = estimate_step_time(w, c, toy::gpu(80));
  c.optimizer_impl = OptimizerImpl::foreach;
  const StepTime foreach = estimate_step_time(w, c, toy::gpu(80));
  c.optimizer_impl = OptimizerImpl::loop;
  const StepTime loop = estimate_step_time(w, c, toy::gpu(80));
  const double bandwidth = memory_bound_bandwidth(k, toy::gpu(80));
  const double params = static_cast<double>(w.params());
  EXPECT_NEAR(fused.optimizer_s, 28 * params / bandwidth + 4 * k.kernel_fixed_s, 1e-12);
  EXPECT_NEAR(foreach.optimizer_s, 72 * params / bandwidth + 8 * k.kernel_fixed_s, 1e-12);
  const double tensors = 2 * 2;  // two layers with parameters, a weight and a bias each
  EXPECT_NEAR(loop.optimizer_s, 72 * params / bandwidth + 8 * tensors * k.kernel_fixed_s, 1e-12);
  EXPECT_GT(foreach.step_s, fused.step_s);
  // Pure bf16: 2-byte masters and states, 36 B against 14.
  c.master_weights = MasterWeights::bf16;
  c.optimizer_impl = OptimizerImpl::foreach;
  EXPECT_NEAR(estimate_step_time(w, c, toy::gpu(80)).optimizer_s, 36 * params / bandwidth + 8 * k.kernel_fixed_s,
              1e-12);
  // SGD with momentum and the bitsandbytes optimizers are priced as one pass whatever the implementation.
  c.optimizer = Optimizer::momentum;
  const double momentum_foreach = estimate_step_time(w, c, toy::gpu(80)).optimizer_s;
  c.optimizer_impl = OptimizerImpl::fused;
  EXPECT_DOUBLE_EQ(estimate_step_time(w, c, toy::gpu(80)).optimizer_s, momentum_foreach);
  c.optimizer = Optimizer::adamw;
  c.master_weights = MasterWeights::fp32;
  c.offload.optimizer = true;
  const double host_fused = estimate_step_time(w, c, toy::gpu(80)).optimizer_s;
  c.optimizer_impl = OptimizerImpl::foreach;
  EXPECT_DOUBLE_EQ(estimate_step_time(w, c, toy::gpu(80)).optimizer_s, host_fused);
}

// FSDP frees each gathered unit after use, so every accumulated micro-batch gathers the weights again (forward and
// backward); the gradients are reduce-scattered once per optimizer step. DDP communicates once per step. Each of
// the 3 units (two blocks and the root) pays NCCL's latency per collective: 8.4 us + 3 ring steps x 5.7 us.
TEST(StepTime, FsdpGathersTheWeightsAgainForEveryAccumulatedMicroBatch) {
  const auto w = toy::two_block_model();
  const ModelConstants& k = default_constants();
  auto c = sgd_config(1, Precision::bf16);
  c.optimizer = Optimizer::adamw;
  c.gpus_per_node = 4;
  c.parallel = Parallel::fsdp;
  ModelConstants no_overlap = k;
  no_overlap.allreduce_overlap_fraction = 0;
  Calibration calibration;
  calibration.constants = no_overlap;
  const double params = static_cast<double>(w.params());
  const auto gpu = toy::gpu(80);
  const double bus = 1.969 * 16 * 1e9 * k.link_efficiency;  // the toy card lists no link: PCIe 4.0 x16
  const double one = estimate_step_time(w, c, gpu, &calibration).communication_s;
  const double latency_s = 8.4e-6 + 3 * 5.7e-6;
  EXPECT_NEAR(one, 0.75 * (2 * params + params) * 2 / bus + 3 * 3 * latency_s, 1e-15);
  c.accumulation_steps = 4;
  const double four = estimate_step_time(w, c, gpu, &calibration).communication_s;
  EXPECT_NEAR(four, 0.75 * (2 * params * 4 + params) * 2 / bus + 3 * (2 * 4 + 1) * latency_s, 1e-15);
  c.parallel = Parallel::ddp;
  const double ddp_four = estimate_step_time(w, c, gpu, &calibration).communication_s;
  c.accumulation_steps = 1;
  EXPECT_DOUBLE_EQ(estimate_step_time(w, c, gpu, &calibration).communication_s, ddp_four);
}

// One non-causal attention core over 4,096 tokens whose output is 4,096 wide: `heads` heads of 4096 / heads.
// Flash keeps no scores; unfused attention runs scale and softmax between its matmuls (serial_io_elements).
workload::Workload attention_core(bool flash, int heads) {
  const double seq = 4096, head_dim = 4096.0 / heads;
  workload::Layer a;
  a.name = "attention";
  a.op = workload::OpClass::attention;
  a.output_shape = {4096, 4096};
  a.score_elements = heads * seq * seq;
  a.forward_flops = 4 * a.score_elements * head_dim;
  a.backward_flops = (flash ? 2.5 : 2.0) * a.forward_flops;
  a.forward_io_elements = 4 * seq * 4096;
  if (!flash) {
    a.serial_io_elements = 4 * a.score_elements;
    a.serial_kernels = 3;
  }
  workload::Workload w;
  w.id = "attention";
  w.domain = workload::Domain::language;
  w.layers = {a};
  return w;
}

// Flash attention's softmax: one exponential per score and pass on the SFUs (16 per SM per cycle) and three FP32
// operations on the CUDA cores. At the same FLOPs, head dimension 64 computes twice the scores of 128, and each
// extra score costs, forward and backward, 1 / (100 SMs x 16 x 2 GHz) + 3 / (40 TFLOPS / 2).
TEST(StepTime, FlashAttentionPaysItsSoftmaxPerScoreOnTheSpecialFunctionUnits) {
  const auto c = sgd_config(1, Precision::fp16);
  const StepTime head_dim_128 = estimate_step_time(attention_core(true, 32), c, toy::gpu(80));
  const StepTime head_dim_64 = estimate_step_time(attention_core(true, 64), c, toy::gpu(80));
  EXPECT_EQ(head_dim_64.bound, Bound::compute);
  const double per_score_s = 1 / (100 * 16 * 2e9) + 3 / 20e12;
  const double extra_scores = 32 * 4096.0 * 4096;
  EXPECT_NEAR(head_dim_64.compute_s - head_dim_128.compute_s, 2 * extra_scores * per_score_s,
              1e-6 * head_dim_64.compute_s);
  // A GeForce board's FP32-accumulate tensor rate is low next to its SFUs: the same softmax is a smaller share.
  auto geforce = toy::gpu(80);
  geforce.family = catalog::Family::rtx40;
  geforce.fp16_tflops = geforce.bf16_tflops = 80;
  const StepTime g128 = estimate_step_time(attention_core(true, 32), c, geforce);
  const StepTime g64 = estimate_step_time(attention_core(true, 64), c, geforce);
  EXPECT_LT(g64.compute_s / g128.compute_s, head_dim_64.compute_s / head_dim_128.compute_s);
}

// Unfused attention's matmuls are batched GEMMs: the GEMM efficiency, not the fused kernel's, and the tile cost of
// their reduction depths (forward: QK^T over head_dim, PV over the keys; backward: one of four over head_dim).
TEST(StepTime, UnfusedAttentionRunsBatchedGemmsWithTheTileCostOfTheirDepths) {
  const ModelConstants& k = default_constants();
  const auto w = attention_core(false, 64);
  const StepTime t = estimate_step_time(w, sgd_config(1, Precision::fp16), toy::gpu(80));
  const double flops = w.layers[0].forward_flops;
  const double rate = 160e12 * k.matmul_tensor_efficiency;
  // Tensor FLOPs per SM per cycle on the toy: 160 TFLOPS x 2 x 10,000 cores / (100 SMs x 40 TFLOPS) = 800.
  auto tile = [&](double depth) { return k.gemm_tile_fixed_cycles * 800 / (2 * k.tile_elements * depth); };
  const double forward_s = flops / rate * (1 + 0.5 * tile(64) + 0.5 * tile(4096));
  const double backward_s = 2 * flops / rate * (1 + 0.25 * tile(64) + 0.75 * tile(4096));
  EXPECT_NEAR(t.compute_s, forward_s + backward_s, 1e-6 * t.compute_s);
  EXPECT_LT(t.compute_s, estimate_step_time(attention_core(true, 64), sgd_config(1, Precision::fp16), toy::gpu(80))
                             .compute_s);
}

}  // namespace
}  // namespace gpusage::estimate
