// Validation: predictions against measured training runs (data/validation/published.csv, or a user's
// own file), and fitting the model constants on a calibration split of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/calibration.hpp"

namespace gpusage::estimate {

enum class Metric { train_throughput, peak_memory };

struct Measurement {
  int line = 0;  // in the CSV file, for messages
  std::string model;
  std::string gpu;
  std::string precision;
  int batch_per_gpu = 0;
  int num_gpus = 1;
  std::optional<int> resolution;
  std::optional<int> seq_len;
  Metric metric = Metric::train_throughput;
  double value = 0;  // samples/s per GPU, or bytes
  bool flash_attention = true;  // column `attention`: flash (default) or eager (unfused softmax)
  bool fsdp = false;            // column `parallel`: ddp (default) or fsdp
  std::string source;
  // Rows are split deterministically (a hash of model, gpu, precision, batch, sequence length and
  // source): about two thirds calibrate the constants, one third is held out to report the error.
  bool holdout = false;
};

// Parses CSV with a header that has at least model,gpu,precision,batch_per_gpu,metric,value (optional:
// num_gpus, resolution, seq_len, source, anything else ignored). Throws InputError naming the line.
std::vector<Measurement> parse_measurements(const std::string& csv_text, const std::string& origin);

struct ValidationRow {
  Measurement measurement;
  std::optional<double> predicted;  // empty when the row could not be predicted
  std::optional<double> error;      // (predicted - measured) / measured
  std::string skipped;              // why it was not predicted
};

struct ErrorSummary {
  int count = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  ErrorSummary all, calibration_split, holdout_split;  // over predicted rows (throughput + memory)
  ErrorSummary throughput_holdout;                     // the headline number: held-out throughput rows
};

ValidationReport validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                          const Calibration& calibration);

// Fits the speed constants (efficiencies, overheads) to the calibration split's throughput rows by
// minimising the median absolute log error with coordinate search. Returns the fitted constants.
ModelConstants fit_constants(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                             const ModelConstants& start);

}  // namespace gpusage::estimate
