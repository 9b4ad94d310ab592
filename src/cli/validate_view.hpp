// `gpusage validate`'s output, rendered from a finished estimate::ValidationReport: every row with its
// prediction and error (table or CSV), the summaries (text), or the whole report as JSON. Nothing here
// predicts or fits: cmd_validate.cpp runs the validation and hands the result over.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/estimate/validate.hpp"

namespace gpusage::cli {

// How the report was made, printed beside it.
struct ValidateMethod {
  std::string text;                    // "leave-one-gpu-out: 30 groups, ..." or the in-sample note
  std::string cv;                      // the --cv group, empty for none
  bool fit = false;                    // --fit
  std::vector<std::string> changes;    // the constants --fit moved, as describe_changes words them
  estimate::ModelConstants constants;  // the constants the rows were predicted with (without --cv)
};

nlohmann::json validate_json(const estimate::ValidationReport& result, const ValidateMethod& method);
// Every row: line, model, GPU, precision, batch, GPUs, metric, measured, predicted, error, note.
std::string validate_csv(const estimate::ValidationReport& result);
// The rows' table (unless `summary_only`), then the summaries, the per-architecture and per-cell tables and the
// fine-tuning rows'.
std::string validate_text(const estimate::ValidationReport& result, const ValidateMethod& method, bool summary_only);

}  // namespace gpusage::cli
