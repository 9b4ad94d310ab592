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

// A card three times as fast, rented at $6/GPU-h: the one-hour job takes 20 minutes on it and costs $2.
CostInputs rented_inputs() {
  CostInputs in = fixed_inputs();
  in.throughput = 30;
  in.throughput_low = 24;
  in.throughput_high = 37.5;
  in.rent_usd_per_gpu_hour = 6.0;
  in.purchase_usd_per_gpu.reset();
  return in;
}

TEST(BuyOrRent, ThePurchaseOverTheOtherCardsBillLessThisCardsElectricity) {
  const CostInputs owned = fixed_inputs();
  const JobCost own = cost_of_job(owned, kOneHourJob);
  const JobCost other = cost_of_job(rented_inputs(), kOneHourJob);
  ASSERT_TRUE(other.rent_usd);
  EXPECT_NEAR(other.rent_usd->estimate, 2.0, 1e-12);
  const auto answer = buy_or_rent(owned, own, other, false);
  ASSERT_TRUE(answer && answer->jobs && answer->hours);
  // $2 rented against $0.10 of electricity (500 W for an hour at $0.20/kWh) saves $1.90 a job.
  EXPECT_NEAR(answer->jobs->estimate, 2000 / 1.9, 1e-9);
  // Fastest owned card (0.8 h, $0.08) against the slowest rented one ($2.50), and the other way round.
  EXPECT_NEAR(answer->jobs->low, 2000 / (2.5 - 0.08), 1e-9);
  EXPECT_NEAR(answer->jobs->high, 2000 / (1.6 - 0.125), 1e-9);
  // In hours of training on the owned card: jobs x its wall time at the same ends.
  EXPECT_NEAR(answer->hours->estimate, 2000 / 1.9 * 1.0, 1e-9);
  EXPECT_NEAR(answer->hours->low, 2000 * 0.8 / (2.5 - 0.08), 1e-9);
  EXPECT_NEAR(answer->hours->high, 2000 * 1.25 / (1.6 - 0.125), 1e-9);
}

TEST(BuyOrRent, EightGpusCostEightPurchases) {
  CostInputs owned = fixed_inputs();
  owned.gpus = 8;
  const JobCost own = cost_of_job(owned, kOneHourJob);
  const JobCost other = cost_of_job(rented_inputs(), kOneHourJob);
  const auto answer = buy_or_rent(owned, own, other, false);
  ASSERT_TRUE(answer && answer->jobs);
  // Eight cards finish in an eighth of the time for the same electricity: $16,000 over ($2 - $0.10).
  EXPECT_NEAR(answer->jobs->estimate, 16000 / 1.9, 1e-9);
  EXPECT_NEAR(answer->hours->estimate, 16000 / 1.9 / 8, 1e-9);
}

TEST(BuyOrRent, TheSameCardBothWaysIsCostOfJobsBreakEven) {
  const CostInputs in = fixed_inputs();
  const JobCost job = cost_of_job(in, kOneHourJob);
  const auto answer = buy_or_rent(in, job, job, true);
  ASSERT_TRUE(answer && answer->jobs && answer->hours && job.break_even_hours);
  // One wall time on both sides: the hours do not move with the range, the jobs do.
  EXPECT_DOUBLE_EQ(answer->hours->low, answer->hours->high);
  EXPECT_NEAR(answer->hours->estimate, 2000 / (2.0 - 0.5 * 0.20), 1e-9);
  EXPECT_NEAR(answer->jobs->low, 2000 / 1.9 / 1.25, 1e-9);
  EXPECT_NEAR(answer->jobs->high, 2000 / 1.9 / 0.8, 1e-9);
}

TEST(BuyOrRent, AnEndThatSavesNothingIsInfinite) {
  CostInputs rented = rented_inputs();
  rented.rent_usd_per_gpu_hour = 0.36;  // $0.12 a job (0.10-0.15), against $0.08-0.125 of electricity
  const CostInputs owned = fixed_inputs();
  const auto answer =
      buy_or_rent(owned, cost_of_job(owned, kOneHourJob), cost_of_job(rented, kOneHourJob), false);
  ASSERT_TRUE(answer && answer->jobs);
  EXPECT_NEAR(answer->jobs->estimate, 2000 / 0.02, 1e-6);
  EXPECT_TRUE(std::isinf(answer->jobs->high));
  EXPECT_TRUE(std::isinf(answer->hours->high));
}

TEST(BuyOrRent, RentingForLessThanTheElectricityNeverPaysOff) {
  CostInputs rented = rented_inputs();
  rented.rent_usd_per_gpu_hour = 0.15;  // $0.05 a job against $0.10 of electricity
  const CostInputs owned = fixed_inputs();
  const auto answer =
      buy_or_rent(owned, cost_of_job(owned, kOneHourJob), cost_of_job(rented, kOneHourJob), false);
  ASSERT_TRUE(answer);
  EXPECT_FALSE(answer->jobs);
  EXPECT_FALSE(answer->hours);
}

TEST(BuyOrRent, AMissingPriceLeavesNothingToCompare) {
  const CostInputs owned = fixed_inputs();
  CostInputs unpriced = rented_inputs();
  unpriced.rent_usd_per_gpu_hour.reset();
  EXPECT_FALSE(buy_or_rent(owned, cost_of_job(owned, kOneHourJob), cost_of_job(unpriced, kOneHourJob), false));
  CostInputs no_purchase = fixed_inputs();
  no_purchase.purchase_usd_per_gpu.reset();
  const JobCost other = cost_of_job(rented_inputs(), kOneHourJob);
  EXPECT_FALSE(buy_or_rent(no_purchase, cost_of_job(no_purchase, kOneHourJob), other, false));
}

}  // namespace
}  // namespace gpusage::cost
