// What a training job costs on a card, owned or rented: wall time, energy, rental bill, owned cost
// (electricity plus the purchase spread over its hours of use) and when buying pays off. Every figure
// carries plan's 80% interval on throughput, propagated. The formulas: docs/MODEL.md, "What a job costs".
// Pure arithmetic: the prices come from the caller (prices.hpp), so do the predictions.
#pragma once

#include <optional>

namespace gpusage::cost {

// A figure and its 80% range. `low` and `high` are the smaller and the larger value: a faster card than
// predicted gives the low end of every time and cost, and the high end of a break-even job count.
struct Range {
  double estimate = 0;
  double low = 0;
  double high = 0;
};

// The job: samples (a dataset x epochs), tokens (language models) or optimizer steps.
enum class JobUnit { samples, tokens, steps };
struct JobSize {
  JobUnit unit = JobUnit::samples;
  double amount = 0;
};

// One configuration (a card, on `gpus` of them) as plan predicts it, and the prices in force.
struct CostInputs {
  double throughput = 0;      // samples/s per GPU: plan's prediction
  double throughput_low = 0;  // and its 80% range
  double throughput_high = 0;
  int gpus = 1;                  // data-parallel GPUs, all rented or all bought
  double samples_per_step = 1;   // samples per optimizer step across the GPUs (the effective batch)
  double tokens_per_sample = 0;  // language models; 0 for vision models
  double board_power_w = 0;      // per GPU, under training load
  std::optional<double> rent_usd_per_gpu_hour;
  std::optional<double> purchase_usd_per_gpu;
  std::optional<double> electricity_usd_per_kwh;
  double amortize_hours = 8760;  // the hours of use the purchase is spread over
};

struct JobCost {
  double samples = 0;                    // what the job trains on, in samples
  Range hours;                           // wall time
  Range energy_kwh;                      // the GPU boards' energy (host, cooling and power-supply losses not counted)
  std::optional<Range> rent_usd;         // the rental bill: rate x GPUs x hours
  std::optional<Range> electricity_usd;  // the owned cards' electricity
  std::optional<Range> owned_usd;        // electricity + purchase x hours / amortize_hours
  // Hours of training after which buying the cards has cost less than renting the same cards: the purchase
  // divided by what an hour of renting costs beyond an hour of the owned cards' electricity. Independent of
  // the job; empty when a price is missing or renting costs no more than the electricity (never pays off).
  std::optional<double> break_even_hours;
  std::optional<Range> break_even_jobs;  // the same, in jobs of this size
};

// The job in samples. Throws InputError for tokens on a model without tokens per sample.
double samples_in_job(const JobSize& job, const CostInputs& inputs);

// Throws InputError when the inputs cannot describe a job (no throughput, no GPUs, amortize_hours <= 0).
JobCost cost_of_job(const CostInputs& inputs, const JobSize& job);

// Jobs after which buying this card pays off against renting another (the cheapest rental for the same
// job, when this card is not rented): the purchase over the difference between the other card's rental
// bill per job and this card's electricity per job. The range pairs the interval ends that make the
// difference smallest and largest (the cards' errors taken as independent). Empty when the estimate's
// difference is not positive; `high` is +infinity when only the range's end is not.
std::optional<Range> break_even_jobs_against(double purchase_usd, const Range& other_rent_usd,
                                             const Range& own_electricity_usd);

}  // namespace gpusage::cost
