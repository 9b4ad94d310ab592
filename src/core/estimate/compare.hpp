// Measured against predicted: each run of a bench result beside what `plan` predicts for the same GPU,
// model, shape, precision, optimizer and batch, through the same sweep as plan (core/estimate/sweep.hpp:
// tensor rates completed, calibration applied). `gpusage bench` and `gpusage report` render this.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/bench_file.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::estimate {

struct RunComparison {
  const Prediction* prediction = nullptr;   // null when there is none (BenchComparison::reason says why)
  std::optional<double> throughput_error;   // (measured - predicted) / predicted
};

struct BenchComparison {
  std::string model_name;  // the zoo's display name, or the file's id when the zoo lacks it
  std::string unit = "samples/s";  // "img/s" or "seq/s" once the model is known
  const catalog::Gpu* gpu = nullptr;  // the catalog card the device resolved to (completed rates)
  std::string reason;                 // why there are no predictions; empty when there are
  std::vector<RunComparison> runs;    // one per file.runs, in order
  Sweep sweep;                        // owns the predictions the runs point at
};

// The catalog card a CUDA device name is: "NVIDIA GeForce RTX 4090" is tried as it is, then without the
// vendor and brand words the catalog's names leave out. Throws InputError (with the catalog's suggestions)
// when none resolves.
const catalog::Gpu& resolve_device_name(const std::string& device_name, const catalog::Catalog& catalog);

// Never throws for a model, shape or GPU plan cannot predict: that is a reason, and the runs have no prediction.
BenchComparison compare_bench(const BenchFile& file, const Calibration& calibration, const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
