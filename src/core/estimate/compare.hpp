// Measured against predicted: each run of a bench result beside what `plan` predicts for the same GPU,
// model, shape, precision, optimizer and batch, through the same sweep as plan (core/estimate/sweep.hpp:
// tensor rates completed, calibration applied). `gpusage bench` and `gpusage report` render this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/bench_file.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::estimate {

struct RunComparison {
  const Prediction* prediction = nullptr;  // null when there is none (BenchComparison::reason says why)
  std::optional<double> throughput_error;  // (measured - predicted) / predicted
};

struct BenchComparison {
  std::string model_name;             // the zoo's display name, or the file's id when the zoo lacks it
  std::string unit = "samples/s";     // "img/s" or "seq/s" once the model is known
  const catalog::Gpu* gpu = nullptr;  // the catalog card the device resolved to (completed rates)
  std::string reason;                 // why there are no predictions; empty when there are
  std::vector<RunComparison> runs;    // one per file.runs, in order
  Sweep sweep;                        // owns the predictions the runs point at
};

// The catalog card a device is (catalog::identify): by its PCI device id where known, then its name and memory.
// Throws InputError when nothing in the catalog fits; `note`, when given, receives what identify had to
// guess (empty when the card is certain).
const catalog::Gpu& resolve_device_name(const std::string& device_name, const catalog::Catalog& catalog,
                                        std::optional<std::uint64_t> memory_bytes = std::nullopt,
                                        std::optional<std::string> pci_device_id = std::nullopt,
                                        std::string* note = nullptr);

// Never throws for a model, shape or GPU plan cannot predict: that is a reason, and the runs have no prediction.
BenchComparison compare_bench(const BenchFile& file, const Calibration& calibration, const catalog::Catalog& catalog);

}  // namespace gpusage::estimate
