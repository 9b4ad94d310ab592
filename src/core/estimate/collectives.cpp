// Data-parallel communication: NCCL's ring collectives over the run's hops (NVLink, an NVLink bridge's pair,
// PCIe, the network between nodes), with NCCL's own latency model, and what DDP's bucketed all-reduce, ZeRO's
// reduce-scatter and all-gather, and FSDP's per-unit gathers and reduce-scatters leave exposed. See
// docs/MODEL.md, "Data parallel".
#include "core/estimate/collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"
#include "core/estimate/adapters.hpp"

namespace gpusage::estimate::detail {

namespace {

// NCCL's tuning model for the Ring algorithm with the Simple protocol, which carries the large messages of
// training (src/graph/tuning.cc, NCCL 2.7 on: baseLat 8.4 us; hwLat Ring/Simple 5.7 us over NVLink or PCIe,
// 6.6 us over the network). A collective costs the base once and one hop latency per ring step.
constexpr double kNcclBaseLatencyS = 8.4e-6;
constexpr double kNcclIntraHopLatencyS = 5.7e-6;
constexpr double kNcclNetworkHopLatencyS = 6.6e-6;

// An NVLink bridge on a PCIe card (A100 PCIe, H100 NVL, RTX A6000, RTX 3090) joins two cards: with more than
// two in a node, NCCL's ring crosses PCIe between the pairs, and that hop sets its bandwidth.
bool bridged_pairs_only(const catalog::Gpu& gpu) { return gpu.form_factor && *gpu.form_factor == "PCIe"; }

}  // namespace

// PCI-SIG: 8/16/32/64 GT/s per lane for gen 3/4/5/6, 128b/130b encoding: 0.985, 1.969, 3.938, 7.877 GB/s per
// lane and direction.
double pcie_gbs(const catalog::Gpu& gpu) {
  const int gen = gpu.pcie_gen.value_or(4);
  const int lanes = gpu.pcie_lanes.value_or(16);
  const double per_lane = gen <= 3 ? 0.985 : gen == 4 ? 1.969 : gen == 5 ? 3.938 : 7.877;
  return per_lane * lanes;
}

Fabric fabric(const ModelConstants& k, const TrainingConfig& config, const catalog::Gpu& gpu) {
  if (config.interconnect == Interconnect::nvlink && !gpu.nvlink_gbs) {
    throw InputError(fmt::format("--interconnect nvlink: {} has no NVLink (accepted for it: card or pcie)", gpu.name));
  }
  const bool nvlink = gpu.nvlink_gbs && config.interconnect != Interconnect::pcie &&
                      !(bridged_pairs_only(gpu) && config.gpus_per_node > 2);
  double link_gbs = nvlink ? *gpu.nvlink_gbs / 2 : pcie_gbs(gpu);  // per direction
  // GeForce cards have no peer-to-peer over PCIe (the driver disables it), so NCCL stages every
  // transfer through host memory (its SHM transport): each byte crosses PCIe twice.
  if (!nvlink && catalog::is_geforce(gpu.family)) link_gbs /= 2;
  Fabric f;
  f.nvlink_ring = nvlink;
  f.intra_node_gbs = link_gbs;
  if (config.gpus_per_node == 1) link_gbs = 1e18;  // no intra-node hop
  // The network: --network-gbps, else the card's reference server's NICs (DGX: one per GPU), else 100 Gb/s.
  f.network_gbs = config.network_gbs > 0  ? config.network_gbs
                  : gpu.node_network_gbps ? *gpu.node_network_gbps / 8
                                          : k.default_network_gbs;
  // NCCL runs one ring per NIC across the nodes, so the node's NICs together carry what one GPU's hop would.
  if (config.nodes > 1) link_gbs = std::min(link_gbs, f.network_gbs);
  f.ring_gbs = link_gbs;
  return f;
}

double ring_latency_s(const ModelConstants&, const TrainingConfig& config, int ranks, int steps_per_rank) {
  if (ranks <= 1) return 0;
  // Of the ring's hops, one per node crosses the network.
  const double network_hops = config.nodes > 1 && ranks > config.gpus_per_node ? config.nodes : 0;
  const double hops = ranks - network_hops;
  const double per_pass = hops * kNcclIntraHopLatencyS + network_hops * kNcclNetworkHopLatencyS;
  return kNcclBaseLatencyS + steps_per_rank * per_pass / ranks;
}

double ring_collective_s(const ModelConstants& k, double factor, double bytes, double bus_gbs) {
  return factor * bytes / (bus_gbs * 1e9 * k.link_efficiency);
}

namespace {

// DDP: the fp32 (or 16-bit) gradients all-reduced in 25 MiB buckets as backward produces them; all but the
// last bucket overlap with backward (allreduce_overlap_fraction of it), each bucket pays NCCL's latency.
double ddp_s(const StepRates& r, const TrainingConfig& config, const MicroBatch& mb, const Fabric& f,
             double trainable) {
  const ModelConstants& k = *r.k;
  const int world = config.world_size();
  const double ring = 2.0 * (world - 1) / world;
  const double gradient_bytes = master_element_bytes(config) * trainable;
  const double buckets = std::ceil(gradient_bytes / k.ddp_bucket_bytes);
  const double latency_s = ring_latency_s(k, config, world, 2 * (world - 1));
  const double total_s = ring_collective_s(k, ring, gradient_bytes, f.ring_gbs) + buckets * latency_s;
  const double last_bucket_s =
      ring_collective_s(k, ring, std::min(gradient_bytes, k.ddp_bucket_bytes), f.ring_gbs) + latency_s;
  return std::max(last_bucket_s, total_s - k.allreduce_overlap_fraction * mb.backward_s);
}

// ZeRO-1/2: the 16-bit gradients are reduce-scattered in buckets while backward runs, as DDP's all-reduce;
// after the step each rank all-gathers the updated 16-bit weights of the others' shards, with nothing left to
// hide behind. Together the bytes of one all-reduce.
double zero_s(const StepRates& r, const TrainingConfig& config, const MicroBatch& mb, const Fabric& f,
              double trainable) {
  const ModelConstants& k = *r.k;
  const int world = config.world_size();
  const double half_ring = (world - 1.0) / world;
  const double sixteen_bit = r.element < 4 ? 2 : 4;
  const double gradient_bytes = sixteen_bit * trainable;
  const double buckets = std::ceil(gradient_bytes / k.ddp_bucket_bytes);
  const double latency_s = ring_latency_s(k, config, world, world - 1);
  const double scatter_s = ring_collective_s(k, half_ring, gradient_bytes, f.ring_gbs) + buckets * latency_s;
  const double last_bucket_s =
      ring_collective_s(k, half_ring, std::min(gradient_bytes, k.ddp_bucket_bytes), f.ring_gbs) + latency_s;
  const double gather_s = ring_collective_s(k, half_ring, gradient_bytes, f.ring_gbs) + latency_s;
  return std::max(last_bucket_s, scatter_s - k.allreduce_overlap_fraction * mb.backward_s) + gather_s;
}

// FSDP (and HSDP within the node): every unit (a transformer block, and the root: embeddings, final norm,
// lm_head) all-gathers its 16-bit weights for forward and again for backward, and reduce-scatters its
// gradients once per optimizer step (accelerate and the Trainer accumulate under no_sync; the gathered units
// are freed after use, so every micro-batch gathers again). Prefetching overlaps each unit's collectives with
// its neighbour's compute, except the root's: its forward gather comes before any compute and its gradients'
// reduce-scatter after the last, so both are exposed. HSDP then all-reduces each rank's gradient shard across
// nodes over the network.
double fsdp_s(const StepRates& r, const workload::Workload& w, const TrainingConfig& config, const MicroBatch& mb,
              const Fabric& f, double params, double trainable) {
  const ModelConstants& k = *r.k;
  const bool hybrid = config.parallel == Parallel::hsdp && config.nodes > 1;
  const int ranks = hybrid ? config.gpus_per_node : config.world_size();
  const double gather_gbs = hybrid ? f.intra_node_gbs : f.ring_gbs;
  const double sixteen_bit = r.element < 4 ? 2 : 4;
  const double micro_batches = std::max(1, config.accumulation_steps);
  const double half_ring = (ranks - 1.0) / ranks;
  const double units = w.segment_count() + 1.0;
  double block_params = 0;
  for (const workload::Layer& layer : w.layers) {
    if (layer.segment >= 0) block_params += static_cast<double>(layer.params + layer.frozen_params);
  }
  const double all_params = static_cast<double>(w.params() + w.frozen_params());
  const double root_share = all_params > 0 ? std::clamp(1 - block_params / all_params, 0.0, 1.0) : 0;
  const double latency_s = ring_latency_s(k, config, ranks, ranks - 1);
  const double collectives = units * (2 * micro_batches + 1);
  double seconds = ring_collective_s(k, half_ring, (2 * params * micro_batches + trainable) * sixteen_bit, gather_gbs) +
                   collectives * latency_s;
  if (hybrid) {
    seconds +=
        ring_collective_s(k, 2.0 * (config.nodes - 1) / config.nodes, trainable * sixteen_bit / ranks, f.network_gbs);
  }
  const double root_s =
      ring_collective_s(k, half_ring, root_share * (params + trainable) * sixteen_bit, gather_gbs) + 2 * latency_s;
  const double hidden_s = k.allreduce_overlap_fraction * micro_batches * (mb.forward_s + mb.backward_s);
  return root_s + std::max(0.0, seconds - root_s - hidden_s);
}

}  // namespace

double communication_s(const StepRates& r, const workload::Workload& w, const TrainingConfig& config,
                       const MicroBatch& mb, double params, double trainable) {
  if (config.world_size() <= 1) return 0;
  const Fabric f = fabric(*r.k, config, *r.gpu);
  if (config.parallel == Parallel::ddp) return ddp_s(r, config, mb, f, trainable);
  if (!shards_weights(config)) return zero_s(r, config, mb, f, trainable);
  return fsdp_s(r, w, config, mb, f, params, trainable);
}

}  // namespace gpusage::estimate::detail
