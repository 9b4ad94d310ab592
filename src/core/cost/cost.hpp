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

// Buying one configuration (a card on N GPUs) against renting another for the same jobs: after how many jobs,
// and after how many hours of training on the bought cards, the purchase has cost less than the rental bills
// it replaced (the purchase over what a job costs rented less its electricity owned). The formulas:
// docs/MODEL.md, "Buy one card or rent another".
struct BuyOrRent {
  std::optional<Range> jobs;   // empty: renting costs no more than the owned card's electricity (never pays off)
  std::optional<Range> hours;  // the same point in hours of training on the bought cards
};

// `owned` and `owned_job`: the configuration bought (its purchase price, its electricity and wall time per
// job); `rented_job`: the other configuration's cost of the same job (its rental bill). Empty when a price is
// missing (no purchase price, no electricity price or no rental price). `same_configuration`: the two are one
// card on one GPU count, whose throughput error is one error, so the range's ends move together; otherwise the
// two cards' errors are taken as independent and the range pairs the ends that make the saving per job
// smallest and largest (`high` is +infinity when the smallest saving is not positive).
std::optional<BuyOrRent> buy_or_rent(const CostInputs& owned, const JobCost& owned_job, const JobCost& rented_job,
                                     bool same_configuration);

}  // namespace gpusage::cost
