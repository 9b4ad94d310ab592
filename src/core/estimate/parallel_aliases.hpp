// The names people use for the data-parallel sharding modes (--parallel), beside gpusage's own
// (ddp, zero1, zero2, fsdp, hsdp; planner.hpp says what each holds).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::estimate {

struct ParallelAlias {
  std::string_view alias;      // as people write it: "zero3", "ds_z2", "full_shard", "fsdp2"
  std::string_view canonical;  // gpusage's name: "fsdp", "zero2", ...
  std::string_view where;      // whose name it is
};

const std::vector<ParallelAlias>& parallel_aliases();

// gpusage's name for `name`: itself when it is one, else the alias's, ignoring case and punctuation
// ("ZeRO-3", "ds_z3", "FULL_SHARD"); nullopt when neither.
std::optional<std::string> canonical_parallel_name(std::string_view name);

}  // namespace gpusage::estimate
