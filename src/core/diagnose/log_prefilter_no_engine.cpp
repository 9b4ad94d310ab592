// No block engine (gpusage-portable, and builds without Hyperscan): the automaton scans line by line.
#include "core/diagnose/log_prefilter_engine.hpp"

namespace gpusage::diagnose {

std::unique_ptr<BlockEngine> make_block_engine(const std::vector<std::string>& /*words*/,
                                               const std::vector<std::uint64_t>& /*groups*/) {
  return nullptr;
}

}  // namespace gpusage::diagnose
