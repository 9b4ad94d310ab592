// Data-parallel communication (collectives.cpp): NCCL's ring collectives over the hops a run's GPUs reach each
// other by, and what of them backward (and forward, for FSDP's gathers) cannot hide. See docs/MODEL.md, "Data
// parallel".
#pragma once

#include "core/catalog/gpu.hpp"
#include "core/estimate/planner.hpp"
#include "core/estimate/step_time_detail.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate::detail {

// Per-direction bandwidth of the card's PCIe link by generation and lanes, GB/s.
double pcie_gbs(const catalog::Gpu& gpu);

// The links one GPU's share of a collective crosses, per direction, GB/s.
struct Fabric {
  double intra_node_gbs = 0;  // the slowest hop of a ring over the node's GPUs
  double ring_gbs = 0;        // the slowest hop of a ring over every rank
  double network_gbs = 0;     // the node's NICs together
  bool nvlink_ring = false;   // the node's ring runs over NVLink end to end
};
Fabric fabric(const ModelConstants& k, const TrainingConfig& config, const catalog::Gpu& gpu);

// NCCL's ring latency (its tuning model, Ring/Simple): a base cost per collective plus one hop latency per ring
// step; an all-reduce takes 2(n-1) steps, an all-gather or a reduce-scatter n-1.
double ring_latency_s(const ModelConstants& k, const TrainingConfig& config, int ranks, int steps_per_rank);

// Time of one ring collective that moves `factor` x `bytes` through each rank's slowest hop (all-reduce
// 2(n-1)/n, all-gather and reduce-scatter (n-1)/n), at `bus_gbs` per direction times the links' efficiency.
double ring_collective_s(const ModelConstants& k, double factor, double bytes, double bus_gbs);

// Data-parallel communication that backward (and forward, for FSDP's gathers) cannot hide, per optimizer step.
double communication_s(const StepRates& r, const workload::Workload& w, const TrainingConfig& config,
                       const MicroBatch& mb, double params, double trainable);

}  // namespace gpusage::estimate::detail
