#include <gtest/gtest.h>

#include <algorithm>

#include "core/estimate/planner.hpp"
#include "toy.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;

TrainingConfig sgd_config(int batch, Precision precision) { return toy::config(batch, precision, Optimizer::sgd); }

// One huge GEMM layer: compute-bound at any precision, so step time follows the peak rate.
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
  const double ideal = flops / (160e12 * k.matmul_tensor_efficiency * k.architecture_compute_factor.at("8.0"));
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

TEST(StepTime, ArchitecturesWithoutMeasurementsGetTheMedianFactor) {
  auto w = big_gemm();
  auto known = toy::gpu(80);
  auto unknown = known;
  unknown.compute_capability = "12.0";
  const auto& factors = default_constants().architecture_compute_factor;
  ASSERT_EQ(factors.count("12.0"), 0u);
  std::vector<double> values;
  for (const auto& [cc, f] : factors) values.push_back(f);
  std::sort(values.begin(), values.end());
  const double median = values.size() % 2 ? values[values.size() / 2]
                                          : (values[values.size() / 2 - 1] + values[values.size() / 2]) / 2;
  const double ratio = estimate_step_time(w, sgd_config(8, Precision::fp16), known).compute_s /
                       estimate_step_time(w, sgd_config(8, Precision::fp16), unknown).compute_s;
  EXPECT_NEAR(ratio, median / factors.at("8.0"), 1e-6);
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

}  // namespace
}  // namespace gpusage::estimate
