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
  if (in.purchase_usd_per_gpu && in.rent_usd_per_gpu_hour && in.electricity_usd_per_kwh) {
    // Per GPU: an hour rented costs the rate; an hour owned costs its electricity (the purchase is sunk).
    const double saved_per_hour = *in.rent_usd_per_gpu_hour - in.board_power_w / 1000 * *in.electricity_usd_per_kwh;
    if (saved_per_hour > 0) {
      out.break_even_hours = *in.purchase_usd_per_gpu / saved_per_hour;
      const double h = *out.break_even_hours;
      out.break_even_jobs = Range{h / out.hours.estimate, h / out.hours.high, h / out.hours.low};
    }
  }
  return out;
}

std::optional<Range> break_even_jobs_against(double purchase_usd, const Range& other_rent_usd,
                                             const Range& own_electricity_usd) {
  const double saved = other_rent_usd.estimate - own_electricity_usd.estimate;
  if (!(saved > 0) || !(purchase_usd > 0)) return std::nullopt;
  const double most_saved = other_rent_usd.high - own_electricity_usd.low;
  const double least_saved = other_rent_usd.low - own_electricity_usd.high;
  return Range{purchase_usd / saved, purchase_usd / most_saved,
               least_saved > 0 ? purchase_usd / least_saved : std::numeric_limits<double>::infinity()};
}

}  // namespace gpusage::cost
