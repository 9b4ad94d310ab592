// Fused attention by kernel generation (issue 56; docs/MODEL.md, "fused attention by kernel generation"):
// FlashAttention 1's generation runs its matmuls at 0.53 of FlashAttention 2's speed, Hopper-native kernels (cuDNN
// fused attention, FlashAttention 3) the whole kernel at 1.75x on sm90 and newer; on sm90 FlashAttention 2's own
// matmuls (Ampere's mma.sync) reach 2/3 of the tensor peak.
#include "core/estimate/attention_kernel.hpp"

#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/estimate/constants.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {
namespace {

using catalog::Precision;
using Generation = AttentionKernelGeneration;

const catalog::Gpu& attention_card(const char* id) { return *catalog::Catalog::active().find(id); }

TEST(AttentionKernel, EachGenerationRunsAtItsPublishedSpeed) {
  const auto& h100 = attention_card("h100-sxm5-80gb");
  const auto& a100 = attention_card("a100-sxm4-80gb");
  const auto& v100 = attention_card("v100-sxm2-32gb");
  const auto& b200 = attention_card("b200");
  EXPECT_DOUBLE_EQ(fused_attention_speed(h100, Generation::flash2).matmul, 2.0 / 3);  // mma.sync on sm90
  EXPECT_DOUBLE_EQ(fused_attention_speed(h100, Generation::flash2).kernel, 1);
  EXPECT_DOUBLE_EQ(fused_attention_speed(h100, Generation::cudnn).kernel, 1.75);  // FA3: 1.5-2.0x FA2 on H100
  EXPECT_DOUBLE_EQ(fused_attention_speed(h100, Generation::cudnn).matmul, 2.0 / 3);
  EXPECT_DOUBLE_EQ(fused_attention_speed(h100, Generation::flash1).matmul, 0.53 * 2.0 / 3);
  EXPECT_DOUBLE_EQ(fused_attention_speed(a100, Generation::flash2).matmul, 1);     // mma.sync is Ampere's own
  EXPECT_DOUBLE_EQ(fused_attention_speed(b200, Generation::flash2).matmul, 1);     // no published sm100 rate
  EXPECT_DOUBLE_EQ(fused_attention_speed(a100, Generation::cudnn).kernel, 1);      // no Hopper instructions
  EXPECT_DOUBLE_EQ(fused_attention_speed(a100, Generation::flash1).matmul, 0.53);  // FA1 25-40%, FA2 50-73%
  EXPECT_DOUBLE_EQ(fused_attention_speed(v100, Generation::flash2).matmul, 0.53);  // memory-efficient below sm80
  EXPECT_DOUBLE_EQ(fused_attention_speed(v100, Generation::cudnn).kernel, 1);
  for (const char* name : {"flash2", "flash1", "cudnn"}) {
    ASSERT_TRUE(parse_attention_kernel_generation(name)) << name;
    EXPECT_STREQ(to_string(*parse_attention_kernel_generation(name)), name);
  }
  EXPECT_FALSE(parse_attention_kernel_generation("flash3"));
}

// One causal attention core of a Llama-sized model at 32,768 tokens: 32 heads of 128, s (s + 1) / 2 query-key pairs
// a head (the kernels skip the masked tiles). Forward: QK^T and PV, 4 x 128 FLOPs a pair; backward 2.5x that.
workload::Workload causal_attention_core(double seq) {
  workload::Layer a;
  a.name = "attention";
  a.op = workload::OpClass::attention;
  a.output_shape = {static_cast<std::int64_t>(seq), 4096};
  a.score_elements = 32 * seq * (seq + 1) / 2;
  a.forward_flops = 4 * a.score_elements * 128;
  a.backward_flops = 2.5 * a.forward_flops;
  a.forward_io_elements = 4 * seq * 4096;
  workload::Workload w;
  w.id = "attention";
  w.domain = workload::Domain::language;
  w.layers = {a};
  return w;
}

// By hand, on the H100 SXM: the matmuls at bf16's 989.4 TFLOPS x the GEMM efficiency x the fused kernel's share of
// it, and per pair and pass one exponential on 132 SMs x 16 SFU results a cycle and three FP32 operations at 66.9
// TFLOPS, at the 1.98 GHz the FP32 peak is quoted at (66.9 T / (2 x 16,896 cores)).
TEST(AttentionKernel, HopperNativeKernelRunsTheCausalCoreAtFlashAttention3sRate) {
  const ModelConstants& k = default_constants();
  const auto& h100 = attention_card("h100-sxm5-80gb");
  const double seq = 32768;
  const auto w = causal_attention_core(seq);
  const double pairs = w.layers[0].score_elements;
  const double flops = w.layers[0].forward_flops;
  const double peak = *h100.bf16_tflops * 1e12;
  const double rate = peak * k.matmul_tensor_efficiency * k.attention_relative_efficiency * 2 / 3;  // mma.sync
  const double clock = h100.fp32_tflops * 1e12 / (2.0 * h100.cuda_cores);
  const double per_pair_s = 1 / (h100.sm_count * k.sfu_results_per_sm_cycle * clock) +
                            k.attention_softmax_fp32_ops * 2 / (h100.fp32_tflops * 1e12);
  const double forward_s = flops / rate + pairs * per_pair_s;
  const double flash2_s = forward_s + 2.5 * flops / rate + pairs * per_pair_s;

  TrainingConfig c;
  c.batch_per_gpu = 1;
  c.precision = Precision::bf16;
  c.optimizer = Optimizer::sgd;
  const double flash2 = estimate_step_time(w, c, h100).compute_s;
  EXPECT_NEAR(flash2, flash2_s, 1e-6 * flash2_s);
  c.attention_kernel = Generation::cudnn;
  const double cudnn = estimate_step_time(w, c, h100).compute_s;
  EXPECT_NEAR(cudnn, flash2_s / 1.75, 1e-6 * flash2_s);
  // The forward pass's achieved share of the bf16 peak (causal FLOPs counted once): 35% as FlashAttention 2 and 61% as
  // a Hopper-native kernel. Published: FlashAttention 2 about 35% on the H100 (350 TFLOPS forward, FlashAttention-3's
  // blog), FlashAttention 3 540-740 TFLOPS forward (55-75%). Without mma.sync's 2/3 they were 47% and 82%.
  EXPECT_NEAR(flops / forward_s / peak, 0.35, 0.01);
  EXPECT_NEAR(flops / (forward_s / 1.75) / peak, 0.61, 0.01);
  c.attention_kernel = Generation::flash1;
  EXPECT_GT(estimate_step_time(w, c, h100).compute_s, 1.5 * flash2);
}

}  // namespace
}  // namespace gpusage::estimate
