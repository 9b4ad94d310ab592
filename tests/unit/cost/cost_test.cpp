// core/cost/cost: the arithmetic of what a job costs, on fixed prices, with plan's interval carried through.
#include "core/cost/cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/common/error.hpp"

namespace gpusage::cost {
namespace {

// 10 samples/s per GPU (80% range 8 to 12.5) at 500 W, rented at $2/GPU-h or bought for $2,000 spread over
// 1,000 h, electricity at $0.20/kWh. A job of 36,000 samples is one hour on one GPU.
CostInputs fixed_inputs() {
  CostInputs in;
  in.throughput = 10;
  in.throughput_low = 8;
  in.throughput_high = 12.5;
  in.board_power_w = 500;
  in.rent_usd_per_gpu_hour = 2.0;
  in.purchase_usd_per_gpu = 2000;
  in.electricity_usd_per_kwh = 0.20;
  in.amortize_hours = 1000;
  return in;
}

constexpr JobSize kOneHourJob{JobUnit::samples, 36000};

TEST(CostOfJob, WallTimeIsTheSamplesOverThroughputWithTheIntervalEndsSwapped) {
  const JobCost c = cost_of_job(fixed_inputs(), kOneHourJob);
  EXPECT_DOUBLE_EQ(c.samples, 36000);
  EXPECT_DOUBLE_EQ(c.hours.estimate, 1.0);
  EXPECT_DOUBLE_EQ(c.hours.low, 0.8);    // at the high end of throughput
  EXPECT_DOUBLE_EQ(c.hours.high, 1.25);  // at the low end
}

TEST(CostOfJob, EnergyIsBoardPowerTimesTime) {
  const JobCost c = cost_of_job(fixed_inputs(), kOneHourJob);
  EXPECT_DOUBLE_EQ(c.energy_kwh.estimate, 0.5);
  EXPECT_DOUBLE_EQ(c.energy_kwh.low, 0.4);
  EXPECT_DOUBLE_EQ(c.energy_kwh.high, 0.625);
}

TEST(CostOfJob, RentalBillIsRateTimesHoursWithTheInterval) {
  const JobCost c = cost_of_job(fixed_inputs(), kOneHourJob);
  ASSERT_TRUE(c.rent_usd);
  EXPECT_DOUBLE_EQ(c.rent_usd->estimate, 2.0);
  EXPECT_DOUBLE_EQ(c.rent_usd->low, 1.6);
  EXPECT_DOUBLE_EQ(c.rent_usd->high, 2.5);
}

TEST(CostOfJob, OwnedCostIsElectricityPlusThePurchaseSpreadOverItsHours) {
  const JobCost c = cost_of_job(fixed_inputs(), kOneHourJob);
  ASSERT_TRUE(c.electricity_usd && c.owned_usd);
  EXPECT_DOUBLE_EQ(c.electricity_usd->estimate, 0.10);
  // $2,000 over 1,000 h is $2 an hour of use, plus $0.10 of electricity.
  EXPECT_DOUBLE_EQ(c.owned_usd->estimate, 2.10);
  EXPECT_DOUBLE_EQ(c.owned_usd->low, 0.08 + 1.6);
  EXPECT_DOUBLE_EQ(c.owned_usd->high, 0.125 + 2.5);
}

TEST(CostOfJob, BreakEvenIsThePurchaseOverRentLessElectricity) {
  const JobCost c = cost_of_job(fixed_inputs(), kOneHourJob);
  ASSERT_TRUE(c.break_even_hours && c.break_even_jobs);
  EXPECT_DOUBLE_EQ(*c.break_even_hours, 2000 / (2.0 - 0.5 * 0.20));
  EXPECT_DOUBLE_EQ(c.break_even_jobs->estimate, 2000 / 1.9);
  EXPECT_DOUBLE_EQ(c.break_even_jobs->low, 2000 / 1.9 / 1.25);  // a slower card than predicted: fewer jobs
  EXPECT_DOUBLE_EQ(c.break_even_jobs->high, 2000 / 1.9 / 0.8);
}

TEST(CostOfJob, EightGpusFinishEightTimesSoonerForTheSameGpuHours) {
  CostInputs in = fixed_inputs();
  in.gpus = 8;
  const JobCost c = cost_of_job(in, kOneHourJob);
  EXPECT_DOUBLE_EQ(c.hours.estimate, 0.125);
  EXPECT_DOUBLE_EQ(c.rent_usd->estimate, 2.0);
  EXPECT_DOUBLE_EQ(c.energy_kwh.estimate, 0.5);
  // Eight cards bought: the purchase is eight times larger, and so is what renting them costs an hour.
  EXPECT_DOUBLE_EQ(*c.break_even_hours, 2000 / 1.9);
  EXPECT_DOUBLE_EQ(c.break_even_jobs->estimate, 2000 / 1.9 / 0.125);
}

TEST(CostOfJob, TokensAndStepsBecomeSamples) {
  CostInputs in = fixed_inputs();
  in.tokens_per_sample = 4096;
  in.samples_per_step = 64;
  EXPECT_DOUBLE_EQ(samples_in_job({JobUnit::tokens, 4096.0 * 36000}, in), 36000);
  EXPECT_DOUBLE_EQ(samples_in_job({JobUnit::steps, 100}, in), 6400);
  EXPECT_DOUBLE_EQ(cost_of_job(in, {JobUnit::tokens, 4096.0 * 36000}).hours.estimate, 1.0);
}

TEST(CostOfJob, TokensOnAVisionModelAreAnInputError) {
  EXPECT_THROW(samples_in_job({JobUnit::tokens, 1e9}, fixed_inputs()), InputError);
}

TEST(CostOfJob, MissingPricesLeaveTheirFiguresEmpty) {
  CostInputs in = fixed_inputs();
  in.rent_usd_per_gpu_hour.reset();
  in.purchase_usd_per_gpu.reset();
  const JobCost c = cost_of_job(in, kOneHourJob);
  EXPECT_FALSE(c.rent_usd);
  EXPECT_FALSE(c.owned_usd);
  EXPECT_FALSE(c.break_even_hours);
  ASSERT_TRUE(c.electricity_usd);
  EXPECT_DOUBLE_EQ(c.electricity_usd->estimate, 0.10);
}

TEST(CostOfJob, RentingCheaperThanTheElectricityNeverPaysOff) {
  CostInputs in = fixed_inputs();
  in.rent_usd_per_gpu_hour = 0.05;  // below 0.5 kW x $0.20
  EXPECT_FALSE(cost_of_job(in, kOneHourJob).break_even_hours);
}

TEST(CostOfJob, AJobWithoutThroughputIsRefused) {
  CostInputs in = fixed_inputs();
  in.throughput = 0;
  EXPECT_THROW(cost_of_job(in, kOneHourJob), InputError);
}

TEST(BreakEvenAgainstAnotherRental, PairsTheIntervalEndsThatMakeTheSavingSmallestAndLargest) {
  const auto jobs = break_even_jobs_against(1000, {10, 8, 12.5}, {1, 0.8, 1.25});
  ASSERT_TRUE(jobs);
  EXPECT_DOUBLE_EQ(jobs->estimate, 1000 / 9.0);
  EXPECT_DOUBLE_EQ(jobs->low, 1000 / (12.5 - 0.8));
  EXPECT_DOUBLE_EQ(jobs->high, 1000 / (8 - 1.25));
}

TEST(BreakEvenAgainstAnotherRental, AnEndThatSavesNothingIsInfinite) {
  const auto jobs = break_even_jobs_against(1000, {2, 1, 3}, {1, 0.5, 1.5});
  ASSERT_TRUE(jobs);
  EXPECT_DOUBLE_EQ(jobs->estimate, 1000);
  EXPECT_TRUE(std::isinf(jobs->high));
  EXPECT_FALSE(break_even_jobs_against(1000, {1, 1, 1}, {2, 2, 2}));
}

}  // namespace
}  // namespace gpusage::cost
