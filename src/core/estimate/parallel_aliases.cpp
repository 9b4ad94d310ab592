#include "core/estimate/parallel_aliases.hpp"

#include "core/common/text.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

// DeepSpeed's ZeRO stages (deepspeed.ai/docs/config-json, zero_optimization.stage 0-3) under the names of
// the config files fine-tuners pass: LLaMA-Factory's examples/deepspeed/ds_z{0,2,3}_config.json, axolotl's
// deepspeed_configs/zero{1,2,3}.json. PyTorch FSDP's ShardingStrategy values (FULL_SHARD, SHARD_GRAD_OP,
// NO_SHARD, HYBRID_SHARD; Accelerate's fsdp_sharding_strategy takes the same), and FSDP2's fully_shard,
// which shards like FULL_SHARD (torch.distributed.fsdp.fully_shard docs).
const std::vector<ParallelAlias>& parallel_aliases() {
  static const std::vector<ParallelAlias> aliases = {
      {"zero0", "ddp", "DeepSpeed stage 0 (ZeRO off)"},
      {"ds_z0", "ddp", "LLaMA-Factory ds_z0_config.json"},
      {"no_shard", "ddp", "FSDP NO_SHARD"},
      {"ds_z1", "zero1", "DeepSpeed stage 1"},
      {"stage1", "zero1", "DeepSpeed stage 1"},
      {"ds_z2", "zero2", "LLaMA-Factory ds_z2_config.json"},
      {"stage2", "zero2", "DeepSpeed stage 2"},
      {"shard_grad_op", "zero2", "FSDP SHARD_GRAD_OP"},
      {"zero3", "fsdp", "DeepSpeed stage 3"},
      {"ds_z3", "fsdp", "LLaMA-Factory ds_z3_config.json"},
      {"stage3", "fsdp", "DeepSpeed stage 3"},
      {"full_shard", "fsdp", "FSDP FULL_SHARD"},
      {"fsdp1", "fsdp", "FSDP FULL_SHARD"},
      {"fsdp2", "fsdp", "FSDP2 fully_shard"},
      {"fully_shard", "fsdp", "FSDP2 fully_shard"},
      {"hybrid_shard", "hsdp", "FSDP HYBRID_SHARD"},
  };
  return aliases;
}

std::optional<std::string> canonical_parallel_name(std::string_view name) {
  const std::string wanted = text::squash(name);
  if (const auto p = parse_parallel(wanted)) return std::string(to_string(*p));
  for (const ParallelAlias& a : parallel_aliases()) {
    if (text::squash(a.alias) == wanted) return std::string(a.canonical);
  }
  return std::nullopt;
}

}  // namespace gpusage::estimate
