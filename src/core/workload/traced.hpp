// A workload traced from a PyTorch model by gpusage-trace (python/gpusage/trace.py): the JSON it writes,
// read into the same layer list the zoo builds, so that every estimator prices a traced model exactly
// as it prices a zoo model. The format is documented in docs/MODEL.md ("How traced workloads are priced").
//
// The core does no I/O: the caller reads the file and passes its text.
#pragma once

#include <string>

#include "core/workload/workload.hpp"

namespace gpusage::workload {

// The "format" a traced workload declares, and the one version this build reads. trace.py writes the same.
inline constexpr const char* kTracedFormat = "gpusage-workload";
inline constexpr int kTracedVersion = 1;

// Builds the workload the JSON text describes. `file` names it in messages. Throws InputError, one line
// naming the file, the field and the bad value, for text that is not JSON, another format or version, a
// missing field, or a value outside what the field accepts. Layers whose "op" is not one of the op
// classes workload.hpp lists are priced as memory-bound elementwise kernels and named, with their share
// of the forward FLOPs, in Workload::notes.
Workload from_traced_workload(const std::string& json_text, const std::string& file);

}  // namespace gpusage::workload
