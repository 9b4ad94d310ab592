// A throughput no card can deliver. The model's FLOPs per sample times the measured samples/s give the TFLOPS
// the run achieved; above the card's dense tensor peak at the run's precision (MFU over 100%), or, where the
// catalog lists no rate at that precision, above the fastest dense rate it lists at any precision, the reading
// is not a measurement of this model on this card: one "it" counts something else than --batch x
// --accumulate samples (a micro-batch, a sample, an inner loop), --batch is not the per-GPU batch (the global
// batch, or a per-GPU figure read as the world's), or the run is not on the card predicted. Such a reading is
// flagged (run-throughput-implausible) and neither compared with plan's interval nor turned into an MFU. Pure.
#pragma once

#include <optional>
#include <string>

#include "core/catalog/gpu.hpp"
#include "core/diagnose/finding.hpp"
#include "run/expectation.hpp"
#include "run/throughput.hpp"

namespace gpusage::run {

// The highest TFLOPS the card could reach for the run, and what that figure is ("209.5 dense bf16 tensor
// TFLOPS"); none when the card is not in the catalog.
struct Ceiling {
  double tflops = 0;
  std::string what;
};
std::optional<Ceiling> compute_ceiling(const Expectation& e, const catalog::Gpu* gpu);

// The finding when `samples_per_s` (per GPU, from `unit` at `per_unit` samples each) implies more than the
// ceiling; none otherwise.
std::optional<diagnose::Finding> implausible_throughput(const Expectation& e, const catalog::Gpu* gpu,
                                                        double samples_per_s, double per_unit, const std::string& unit);

// The same for one throughput line, as it arrives.
std::optional<diagnose::Finding> implausible_reading(const Expectation& e, const catalog::Gpu* gpu,
                                                     const Throughput& reading);

// At the end: when the run's median throughput is implausible, its MFU and achieved TFLOPS are withdrawn from
// `s` (the summary, summary.json and the report page print none) and the finding is returned.
std::optional<diagnose::Finding> withdraw_implausible(ExpectationSummary& s, const catalog::Gpu* gpu);

}  // namespace gpusage::run
