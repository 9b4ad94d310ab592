// Advice that fits the run: a finding's fix never recommends what the run already does. doctor's log rules
// (data/doctor/rules.toml) are written for a log of unknown settings ("prefer bf16 to fp16", "use mixed
// precision or activation checkpointing"); `gpusage run` knows the settings it was given (--precision, and
// plan's options with --model and --batch), so it drops the clauses those settings already follow, live and
// in the summary. Pure.
#pragma once

#include <optional>
#include <vector>

#include "core/catalog/gpu.hpp"
#include "core/diagnose/finding.hpp"
#include "run/supervisor.hpp"

namespace gpusage::run {

// What the run is known to do already. Unknown (not given) is not the same as off: nothing is dropped for it.
struct RunPractice {
  std::optional<catalog::Precision> precision;  // --precision, when given
  bool checkpointing = false;                   // --checkpointing with a prediction (--model and --batch)
};

RunPractice practice_of(const RunRequest& request);

// `f` with the advice `practice` already follows taken out of its fix.
void drop_followed_advice(diagnose::Finding& f, const RunPractice& practice);
void drop_followed_advice(std::vector<diagnose::Finding>& findings, const RunPractice& practice);

}  // namespace gpusage::run
