// Calibration from measurements: `gpusage bench --format json` results (or any file of the same shape)
// set a step-time scale for the GPU they ran on: measured step time / predicted step time, the median
// over the measured batch sizes. Expected shape (extra keys are ignored):
//   { "environment": { "device_name": "NVIDIA GeForce RTX 5090", ... },
//     "model": "resnet50", "precision": "bf16", "resolution": 224, "seq_len": null,
//     "runs": [ { "batch": 64, "status": "ok", "throughput": 1234.5 }, ... ] }
#pragma once

#include <string>

#include "core/catalog/catalog.hpp"
#include "core/estimate/calibration.hpp"

namespace gpusage::estimate {

// Throws InputError naming the file and the field when the results cannot be used (CPU runs included:
// there is no catalog GPU to calibrate).
void apply_bench_results(Calibration& calibration, const std::string& json_text, const std::string& origin,
                         const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
