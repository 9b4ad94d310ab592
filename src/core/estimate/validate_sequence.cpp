// validate's language-model rows by sequence-length band (issue 56): attention's share of a step grows with the
// sequence, and so can the model's error, so the report gives the LLM throughput rows band by band.
#include <iterator>
#include <string>
#include <vector>

#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {

namespace {

// The bands' upper edges in tokens per sample, the last one open. 1K: GPT-2's context and most fine-tuning
// recipes; 4K: Llama 2's; 16K: where attention's FLOPs pass the linear layers' for a 7B model (4 x seq x hidden
// against 24 x hidden^2 per token and layer: seq > 6 x hidden = 24,576 for hidden 4,096, earlier for smaller
// models).
constexpr int kBandEdges[] = {1024, 4096, 16384};

bool is_language_model_row(const Measurement& m) {
  return m.seq_len && *m.seq_len > 0 && model_family(m.model) != "bert";
}

}  // namespace

std::string sequence_band_name(int tokens) {
  int lower = 0;
  for (const int edge : kBandEdges) {
    if (tokens <= edge)
      return lower == 0 ? "<=" + std::to_string(edge) : std::to_string(lower + 1) + "-" + std::to_string(edge);
    lower = edge;
  }
  return ">" + std::to_string(lower);
}

namespace detail {

void summarize_sequence_bands(ValidationReport& report) {
  constexpr int kBands = static_cast<int>(std::size(kBandEdges)) + 1;
  std::vector<double> errors[kBands];
  for (const ValidationRow& row : report.rows) {
    const Measurement& m = row.measurement;
    if (!row.error || m.metric != Metric::train_throughput || m.legacy() || m.superlinear) continue;
    if (!is_language_model_row(m)) continue;
    const int tokens = m.tokens.value_or(*m.seq_len);  // the length each sample computes, as step time predicts it
    int band = 0;
    while (band < kBands - 1 && tokens > kBandEdges[band]) ++band;
    errors[band].push_back(*row.error);
  }
  report.llm_sequence_bands.clear();
  for (int band = 0; band < kBands; ++band) {
    if (errors[band].empty()) continue;
    const int representative = band < kBands - 1 ? kBandEdges[band] : kBandEdges[kBands - 2] + 1;
    report.llm_sequence_bands.push_back({sequence_band_name(representative), summarize(errors[band])});
  }
}

}  // namespace detail

}  // namespace gpusage::estimate
