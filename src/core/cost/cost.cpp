#include "core/cost/cost.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/common/error.hpp"

namespace gpusage::cost {

namespace {

// Every cost below is proportional to the job's hours, so one rate carries the interval through.
Range scaled(const Range& hours, double per_hour) {
  return {hours.estimate * per_hour, hours.low * per_hour, hours.high * per_hour};
}

Range sum(const Range& a, const Range& b) { return {a.estimate + b.estimate, a.low + b.low, a.high + b.high}; }

}  // namespace

double samples_in_job(const JobSize& job, const CostInputs& inputs) {
  switch (job.unit) {
    case JobUnit::samples: return job.amount;
    case JobUnit::tokens:
      if (!(inputs.tokens_per_sample > 0)) {
        throw InputError("--tokens applies to language models; give --dataset-size with --epochs for a vision model");
      }
      return job.amount / inputs.tokens_per_sample;
    case JobUnit::steps: return job.amount * inputs.samples_per_step;
  }
  return 0;
}

JobCost cost_of_job(const CostInputs& in, const JobSize& job) {
  if (!(in.throughput > 0) || !(in.throughput_low > 0) || !(in.throughput_high >= in.throughput_low) || in.gpus < 1) {
    throw InputError(fmt::format("a job needs a positive throughput on at least one GPU (got {} samples/s on {})",
                                 in.throughput, in.gpus));
  }
  if (!(in.amortize_hours > 0)) {
    throw InputError(fmt::format("--amortize-hours {} must be positive", in.amortize_hours));
  }
  if (!(job.amount > 0)) throw InputError(fmt::format("the job size {} must be positive", job.amount));
  JobCost out;
  out.samples = samples_in_job(job, in);
  const double cluster = in.gpus;  // every GPU trains at the per-GPU throughput (plan's data-parallel model)
  out.hours = {out.samples / (in.throughput * cluster) / 3600, out.samples / (in.throughput_high * cluster) / 3600,
               out.samples / (in.throughput_low * cluster) / 3600};
  // Energy = power x time: the boards' draw under training load, for every GPU.
  const double kw = in.board_power_w * cluster / 1000;
  out.energy_kwh = scaled(out.hours, kw);
  if (in.rent_usd_per_gpu_hour) out.rent_usd = scaled(out.hours, *in.rent_usd_per_gpu_hour * cluster);
  if (in.electricity_usd_per_kwh) out.electricity_usd = scaled(out.energy_kwh, *in.electricity_usd_per_kwh);
  if (in.purchase_usd_per_gpu && out.electricity_usd) {
    // The purchase, spread evenly over the hours of use it is expected to give: this job's share.
    out.owned_usd =
        sum(*out.electricity_usd, scaled(out.hours, *in.purchase_usd_per_gpu * cluster / in.amortize_hours));
  }
  // Buying these cards against renting the same ones: buy_or_rent with the job on both sides.
  if (const auto same = buy_or_rent(in, out, out, true); same && same->jobs) {
    out.break_even_hours = same->hours->estimate;
    out.break_even_jobs = same->jobs;
  }
  return out;
}

std::optional<BuyOrRent> buy_or_rent(const CostInputs& owned, const JobCost& owned_job, const JobCost& rented_job,
                                     bool same_configuration) {
  if (!owned.purchase_usd_per_gpu || !owned_job.electricity_usd || !rented_job.rent_usd) return std::nullopt;
  const double purchase = *owned.purchase_usd_per_gpu * owned.gpus;
  const Range& rent = *rented_job.rent_usd;
  const Range& power = *owned_job.electricity_usd;
  const Range& hours = owned_job.hours;
  BuyOrRent out;
  if (!(rent.estimate - power.estimate > 0) || !(purchase > 0)) return out;
  const double infinity = std::numeric_limits<double>::infinity();
  if (same_configuration) {
    // Rent and electricity are both proportional to the one wall time: the saving per hour is fixed, so the
    // break-even in hours is too, and only the number of jobs it takes moves with the range.
    const double hours_to_pay_off = purchase * hours.estimate / (rent.estimate - power.estimate);
    out.hours = Range{hours_to_pay_off, hours_to_pay_off, hours_to_pay_off};
    out.jobs = Range{hours_to_pay_off / hours.estimate, hours_to_pay_off / hours.high, hours_to_pay_off / hours.low};
    return out;
  }
  // Jobs = purchase / (rent per job - electricity per job), hours = jobs x owned wall time: both are smallest
  // when the owned card is fast (its electricity and hours low) and the rented one slow (its bill high).
  const double saving = rent.estimate - power.estimate;
  const double most_saved = rent.high - power.low;
  const double least_saved = rent.low - power.high;
  out.jobs = Range{purchase / saving, purchase / most_saved, least_saved > 0 ? purchase / least_saved : infinity};
  out.hours = Range{purchase * hours.estimate / saving, purchase * hours.low / most_saved,
                    least_saved > 0 ? purchase * hours.high / least_saved : infinity};
  return out;
}

}  // namespace gpusage::cost
