// NCCL's ring collectives as collectives.cpp prices them, each figure worked out by hand.
#include "core/estimate/collectives.hpp"

#include <gtest/gtest.h>

#include "core/estimate/constants.hpp"
#include "toy.hpp"

namespace gpusage::estimate::detail {
namespace {

TrainingConfig data_parallel(int gpus_per_node, int nodes, Parallel parallel = Parallel::ddp) {
  TrainingConfig c = toy::config(1, catalog::Precision::fp16, Optimizer::adamw);
  c.gpus_per_node = gpus_per_node;
  c.nodes = nodes;
  c.parallel = parallel;
  return c;
}

catalog::Gpu a100_sxm() {
  catalog::Gpu g = toy::gpu(80);
  g.form_factor = "SXM";
  g.nvlink_gbs = 600;
  g.pcie_gen = 4;
  g.pcie_lanes = 16;
  g.node_network_gbps = 1600;  // DGX A100: 8 x 200 Gb/s HDR
  return g;
}

// 1 GB all-reduced by 8 A100s over NVSwitch: 2 x 7/8 of it through each GPU's 300 GB/s a direction at the
// links' 80%: 1.75e9 / 240e9 = 7.292 ms; NCCL's latency 8.4 us + 14 ring steps x 5.7 us = 88.2 us.
TEST(Collectives, AllReduceOfOneGigabyteOnEightA100s) {
  const ModelConstants& k = default_constants();
  const TrainingConfig c = data_parallel(8, 1);
  const Fabric f = fabric(k, c, a100_sxm());
  EXPECT_DOUBLE_EQ(f.ring_gbs, 300);
  EXPECT_TRUE(f.nvlink_ring);
  EXPECT_NEAR(ring_collective_s(k, 2.0 * 7 / 8, 1e9, f.ring_gbs), 7.2917e-3, 1e-7);
  EXPECT_NEAR(ring_latency_s(k, c, 8, 14), 88.2e-6, 1e-9);
}

// Two DGX A100 nodes: the ring's slowest hop is the nodes' 8 x 200 Gb/s = 200 GB/s (the card's reference
// server); without that figure the default 100 Gb/s (12.5 GB/s), and --network-gbps over both. A 16-rank
// all-reduce's 30 steps cross 14 NVLink hops at 5.7 us and 2 network hops at 6.6 us per pass of 16:
// 8.4 + 30 x 93 / 16 = 182.775 us.
TEST(Collectives, NodesTalkOverTheReferenceServersNetwork) {
  const ModelConstants& k = default_constants();
  const TrainingConfig c = data_parallel(8, 2);
  catalog::Gpu gpu = a100_sxm();
  EXPECT_DOUBLE_EQ(fabric(k, c, gpu).ring_gbs, 200);
  EXPECT_NEAR(ring_latency_s(k, c, 16, 30), 182.775e-6, 1e-9);
  gpu.node_network_gbps.reset();
  EXPECT_DOUBLE_EQ(fabric(k, c, gpu).ring_gbs, 12.5);
  TrainingConfig given = c;
  given.network_gbs = 50;
  EXPECT_DOUBLE_EQ(fabric(k, given, gpu).ring_gbs, 50);
}

// An NVLink bridge on a PCIe card joins two cards: two run over it (600 / 2 = 300 GB/s a direction), four or
// eight cross PCIe 4.0 x16 between the pairs (31.5 GB/s); a GeForce card's PCIe hop is staged through host
// memory (half of it).
TEST(Collectives, BridgedPcieCardsRingOverPcieBeyondAPair) {
  const ModelConstants& k = default_constants();
  catalog::Gpu gpu = a100_sxm();
  gpu.form_factor = "PCIe";
  EXPECT_DOUBLE_EQ(fabric(k, data_parallel(2, 1), gpu).ring_gbs, 300);
  const Fabric eight = fabric(k, data_parallel(8, 1), gpu);
  EXPECT_FALSE(eight.nvlink_ring);
  EXPECT_NEAR(eight.ring_gbs, 31.504, 1e-9);
  gpu.family = catalog::Family::rtx30;
  gpu.nvlink_gbs = 112.5;
  EXPECT_DOUBLE_EQ(fabric(k, data_parallel(2, 1), gpu).ring_gbs, 56.25);
  EXPECT_NEAR(fabric(k, data_parallel(4, 1), gpu).ring_gbs, 15.752, 1e-9);
}

// FSDP whose gathers hide behind long compute still exposes the root unit (here the embedding: half of the
// 4,000 parameters): its forward gather and its gradients' reduce-scatter, 7/8 x 0.5 x (4,000 + 4,000) x 2 B
// over 450 GB/s x 0.8, plus two collectives' latency, 2 x (8.4 + 7 x 5.7) us = 96.6 us.
TEST(Collectives, FsdpExposesTheRootUnitsGatherAndReduceScatter) {
  workload::Workload w = toy::two_block_model();
  for (workload::Layer& layer : w.layers) layer.forward_flops = layer.backward_flops = 1e15;
  workload::Layer embedding;
  embedding.name = "embed";
  embedding.op = workload::OpClass::embedding;
  embedding.output_shape = {50};
  embedding.params = 2000;
  w.layers.insert(w.layers.begin(), embedding);
  catalog::Gpu gpu = a100_sxm();
  gpu.nvlink_gbs = 900;
  const TrainingConfig c = data_parallel(8, 1, Parallel::fsdp);
  const double root_s = 7.0 / 8 * 0.5 * 8000 * 2 / (450e9 * 0.8) + 2 * (8.4e-6 + 7 * 5.7e-6);
  EXPECT_NEAR(estimate_step_time(w, c, gpu).communication_s, root_s, 1e-12);
}

}  // namespace
}  // namespace gpusage::estimate::detail
