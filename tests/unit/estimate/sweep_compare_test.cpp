// The plan sweep and the measured-against-predicted comparison: the one path plan, guide, report and bench take.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/estimate/compare.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/sweep.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

const catalog::Catalog& catalog_() { return catalog::Catalog::active(); }

TrainingConfig fp16() {
  TrainingConfig c;
  c.precision = catalog::Precision::fp16;
  return c;
}

TEST(Sweep, PredictsEachListedBatchOnEachGpuGpuMajor) {
  SweepRequest request;
  request.gpus = {&catalog_().resolve("RTX 5090"), &catalog_().resolve("RTX 5080")};
  request.batches = {32, 64};
  const Sweep sweep = run_sweep(workload::build("resnet50", {}), fp16(), Calibration{}, request, catalog_());
  ASSERT_EQ(sweep.predictions.size(), 4u);
  EXPECT_EQ(sweep.predictions[0].config.batch_per_gpu, 32);
  EXPECT_EQ(sweep.predictions[1].config.batch_per_gpu, 64);
  EXPECT_EQ(sweep.predictions[0].gpu, sweep.predictions[1].gpu);
  EXPECT_NE(sweep.predictions[1].gpu, sweep.predictions[2].gpu);
  EXPECT_EQ(sweep.predictions[0].gpu->id, request.gpus[0]->id);
  // max_batch is one figure per GPU, whatever batch it is shown beside.
  EXPECT_EQ(sweep.predictions[0].max_batch, sweep.predictions[1].max_batch);
}

TEST(Sweep, GivesTheSamePredictionAsPredictOnTheCompletedGpu) {
  const catalog::Gpu& listed = catalog_().resolve("RTX 5090");
  SweepRequest request;
  request.gpus = {&listed};
  request.batches = {128};
  const workload::Workload w = workload::build("resnet50", {});
  const Sweep sweep = run_sweep(w, fp16(), Calibration{}, request, catalog_());
  const catalog::Gpu completed = complete_tensor_rates(listed, catalog_()).gpu;
  TrainingConfig c = fp16();
  c.batch_per_gpu = 128;
  const Calibration calibration;
  const Prediction direct = predict(w, c, completed, &calibration);
  ASSERT_EQ(sweep.predictions.size(), 1u);
  EXPECT_DOUBLE_EQ(sweep.predictions[0].throughput, direct.throughput);
  EXPECT_EQ(sweep.predictions[0].max_batch, direct.max_batch);
  EXPECT_DOUBLE_EQ(sweep.predictions[0].memory.total_bytes(), direct.memory.total_bytes());
}

TEST(Sweep, AutoTakesEachGpusLargestBatch) {
  SweepRequest request;
  request.gpus = {&catalog_().resolve("RTX 5090")};
  const Sweep sweep = run_sweep(workload::build("resnet50", {}), fp16(), Calibration{}, request, catalog_());
  ASSERT_EQ(sweep.predictions.size(), 1u);
  EXPECT_EQ(sweep.predictions[0].config.batch_per_gpu, sweep.predictions[0].max_batch);
  EXPECT_TRUE(sweep.predictions[0].fits);
}

TEST(Sweep, TargetBatchIsReachedWithAccumulation) {
  SweepRequest request;
  request.gpus = {&catalog_().resolve("RTX 5080")};
  request.target_batch = 4096;
  const Sweep sweep = run_sweep(workload::build("resnet50", {}), fp16(), Calibration{}, request, catalog_());
  ASSERT_EQ(sweep.predictions.size(), 1u);
  const Prediction& p = sweep.predictions[0];
  EXPECT_GT(p.config.accumulation_steps, 1);
  EXPECT_LE(p.config.batch_per_gpu, p.max_batch);
  EXPECT_EQ(p.effective_batch, 4096);
}

BenchFile bench_fixture() {
  return read_bench_file(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/report/bench-rtx5090.json");
}

TEST(CompareBench, PredictsEveryRunOnTheCardTheDeviceNameResolvesTo) {
  const BenchFile file = bench_fixture();
  const BenchComparison c = compare_bench(file, Calibration{}, catalog_());
  EXPECT_EQ(c.reason, "");
  ASSERT_NE(c.gpu, nullptr);
  EXPECT_EQ(c.gpu->id, catalog_().resolve("RTX 5090").id);
  EXPECT_EQ(c.unit, "img/s");
  ASSERT_EQ(c.runs.size(), file.runs.size());
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    ASSERT_NE(c.runs[i].prediction, nullptr);
    EXPECT_EQ(c.runs[i].prediction->config.batch_per_gpu, file.runs[i].batch);
    EXPECT_EQ(c.runs[i].prediction->config.precision, catalog::Precision::fp16);
  }
  const double predicted = c.runs[0].prediction->throughput;
  ASSERT_TRUE(c.runs[0].throughput_error);
  EXPECT_DOUBLE_EQ(*c.runs[0].throughput_error, (1480.0 - predicted) / predicted);
  EXPECT_FALSE(c.runs[3].throughput_error);  // the run that ran out of memory has no measurement
}

TEST(CompareBench, PredictsWhatPlanPredictsForTheSameRun) {
  const BenchFile file = bench_fixture();
  const BenchComparison c = compare_bench(file, Calibration{}, catalog_());
  SweepRequest request;
  request.gpus = {&catalog_().resolve("RTX 5090")};
  request.batches = {64};
  TrainingConfig base = fp16();
  base.optimizer = Optimizer::momentum;
  const Sweep plan = run_sweep(workload::build("resnet50", {}), base, Calibration{}, request, catalog_());
  EXPECT_DOUBLE_EQ(c.runs[0].prediction->throughput, plan.predictions[0].throughput);
}

TEST(CompareBench, ACpuRunHasNoPredictionAndSaysWhy) {
  BenchFile file = bench_fixture();
  file.device = "cpu";
  const BenchComparison c = compare_bench(file, Calibration{}, catalog_());
  EXPECT_EQ(c.reason, "no prediction for a CPU run: plan models NVIDIA GPUs from the catalog");
  EXPECT_EQ(c.runs[0].prediction, nullptr);
}

TEST(CompareBench, ADeviceTheCatalogLacksIsNamed) {
  BenchFile file = bench_fixture();
  file.device_name = "NVIDIA Imaginary 9000";
  const BenchComparison c = compare_bench(file, Calibration{}, catalog_());
  EXPECT_THAT(c.reason, HasSubstr("'NVIDIA Imaginary 9000' is not a card of the GPU catalog"));
  EXPECT_EQ(c.gpu, nullptr);
}

TEST(CompareBench, AModelTheZooLacksIsAReasonNotAnError) {
  BenchFile file = bench_fixture();
  file.model = "no_such_model";
  const BenchComparison c = compare_bench(file, Calibration{}, catalog_());
  EXPECT_THAT(c.reason, HasSubstr("plan cannot predict this run:"));
  EXPECT_EQ(c.runs[0].prediction, nullptr);
}

TEST(ResolveDeviceName, DropsTheVendorAndBrandWordsCudaReports) {
  EXPECT_EQ(resolve_device_name("NVIDIA GeForce RTX 4090", catalog_()).id, catalog_().resolve("RTX 4090").id);
}

}  // namespace
}  // namespace gpusage::estimate
