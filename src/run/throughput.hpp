// Training throughput as the program prints it. Each reading is a rate per second in the program's own unit:
//   tqdm (and Lightning's / Hugging Face's tqdm bars): "9.87it/s", "1.50s/it" (0.667 it/s), "1.2kimg/s";
//   Hugging Face Trainer's final metrics: 'train_samples_per_second': 39.2, 'train_steps_per_second': 4.9;
//   Lightning's ThroughputMonitor: train/samples_per_sec=…, train/batches_per_sec=…;
//   Keras: "40ms/step" (25 steps/s), "2s/step", "850us/step".
// Download bars ("12.3MB/s") and other byte rates are not training throughput and are ignored.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusage::run {

struct Throughput {
  double per_second = 0;
  std::string unit;    // what is counted: "it", "samples", "steps", "img", …
  std::string source;  // "tqdm", "hf-trainer", "lightning", "keras"
  std::string label() const { return unit + "/s"; }
};

// The readings of one (unit, source) over a run.
struct ThroughputSummary {
  std::string unit;
  std::string source;
  std::size_t readings = 0;
  double median_per_s = 0;
  double last_per_s = 0;
  std::string label_unit() const { return unit + "/s"; }
};

// The reading of one output line (escape sequences already removed), if it carries one.
std::optional<Throughput> parse_throughput(std::string_view line);

}  // namespace gpusage::run
