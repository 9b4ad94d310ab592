// Tensor rates for the planner. A catalog figure is used as it is: sourced, or derived by the catalog from
// NVIDIA's published AI TOPS and its architecture's ratio rule (data/gpus.toml [[derivation]]); a note
// names each derived figure the plan uses. Only where the catalog has neither is a rate modelled, from a
// sibling card with a figure: every card of one architecture and product line has the same tensor
// throughput per SM per clock (the SM is the same design), so
//   rate = (rate / (SMs x boost MHz)) of the sibling x this card's SMs x boost MHz.
// Regional variants (a `market` in the catalog: the RTX 5090 D, H20, L20) have their AI rates cut below
// the SM's, so they are never modelled that way.
#pragma once

#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"

namespace gpusage::estimate {

struct CompletedGpu {
  catalog::Gpu gpu;                // with the missing tensor rates filled where a sibling allows it
  std::vector<std::string> notes;  // one line per derived or modelled figure set, naming its origin
};

CompletedGpu complete_tensor_rates(const catalog::Gpu& gpu, const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
