// The defaults a plan took because its setup did not say (precision per card, sequence length or resolution,
// checkpointing, optimizer, kernels, attention), each with its reason: plan prints them as "assumed: ..." and
// lists them in its JSON.
#pragma once

#include <string>
#include <vector>

#include "core/estimate/sweep.hpp"
#include "core/setup/training_setup.hpp"

namespace gpusage::setup {

// One sentence per assumption, for the setup and the sweep run_plan made of it.
std::vector<std::string> assumptions(const TrainingSetup& setup, const estimate::Sweep& sweep);

}  // namespace gpusage::setup
