// Tensor rates for cards whose spec sheet the catalog has no figure for (NVIDIA's whitepapers list only
// some GeForce SKUs). Every card of one architecture and product line has the same tensor throughput per
// SM per clock (the SM is the same design), so a missing rate is modelled as
//   rate = (rate / (SMs x boost MHz)) of a sibling with a published figure x this card's SMs x boost MHz.
// The catalog itself keeps the figure empty; only the planner fills it, and says so in a note.
#pragma once

#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"

namespace gpusage::estimate {

struct CompletedGpu {
  catalog::Gpu gpu;                // with the missing tensor rates filled where a sibling allows it
  std::vector<std::string> notes;  // one line per modelled figure, naming the sibling it scaled
};

CompletedGpu complete_tensor_rates(const catalog::Gpu& gpu, const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
