// Reads what `gpusage bench --format json --out FILE` (or gpusage-bench) writes: where it ran, what it
// trained, and each measured batch size. The schema is src/bench/result.cpp's; extra keys are ignored.
// One reader for every consumer: plan --calibration and the report's measured-against-predicted section.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::estimate {

struct BenchRun {
  int batch = 0;
  bool ok = false;
  std::string failure;                     // "out_of_memory" … when not ok
  std::optional<double> throughput;        // samples/s
  std::optional<double> peak_memory_bytes;
};

struct BenchFile {
  std::string origin;
  std::string device;       // "cuda" or "cpu"
  std::string device_name;  // "NVIDIA GeForce RTX 4090"
  std::string model;        // a zoo id ("resnet50")
  std::string precision;
  std::string optimizer;    // may be empty
  std::optional<int> resolution;
  std::optional<int> seq_len;
  std::vector<BenchRun> runs;
};

// Throws InputError naming the option and `origin` ("--bench 'b.json': missing 'runs'") and the missing or
// malformed key.
BenchFile parse_bench_file(const std::string& json_text, const std::string& origin,
                           std::string_view option = "--bench");

}  // namespace gpusage::estimate
