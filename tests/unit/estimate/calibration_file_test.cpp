#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.hpp"
#include "core/estimate/calibration_file.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::estimate {
namespace {

using ::testing::HasSubstr;

// The shape gpusage bench writes, cut to the keys calibration reads (the numbers are made up).
std::string results(const std::string& device, const std::string& device_name, const std::string& runs) {
  return R"({"environment": {"device": ")" + device + R"(", "device_type": ")" + device + R"(", "device_name": ")" +
         device_name + R"("}, "model": "resnet50", "precision": "fp16", "optimizer": "momentum", "resolution": 224,
         "seq_len": null, "runs": [)" + runs + "]}";
}

std::string error_of(const std::string& json_text) {
  Calibration calibration;
  try {
    apply_bench_results(calibration, json_text, "r.json", catalog::Catalog::active());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CalibrationFile, ScalesTheMeasuredGpuByMeasuredOverPredictedStepTimeSkippingFailedRuns) {
  Calibration calibration;
  apply_bench_results(calibration,
                      results("cuda", "NVIDIA GeForce RTX 5090",
                              R"({"batch": 64, "status": "ok", "throughput": 1480.0},
                                 {"batch": 4096, "status": "failed", "failure": "out_of_memory", "throughput": null})"),
                      "r.json", catalog::Catalog::active());
  ASSERT_EQ(calibration.step_time_scale.size(), 1u);
  ASSERT_TRUE(calibration.step_time_scale.count("rtx5090"));

  // The ratio for the one successful run, worked out from the model directly.
  const catalog::Catalog& catalog = catalog::Catalog::active();
  const CompletedGpu gpu = complete_tensor_rates(catalog.resolve("rtx5090"), catalog);
  TrainingConfig config;
  config.batch_per_gpu = 64;
  config.precision = catalog::Precision::fp16;
  config.optimizer = Optimizer::momentum;
  const double predicted_step_s = estimate_step_time(workload::build("resnet50"), config, gpu.gpu, nullptr).step_s;
  EXPECT_NEAR(calibration.step_time_scale.at("rtx5090"), (64 / 1480.0) / predicted_step_s, 1e-12);
  ASSERT_EQ(calibration.notes.size(), 1u);
  EXPECT_THAT(calibration.notes[0], HasSubstr("from 1 measured runs of resnet50 (r.json)"));
}

// A language model's bench run stepped LibTorch's C++ AdamW, a loop of per-parameter ops: its prediction is the
// loop's (kLibTorchOptimizerImpl), not plan's foreach default.
TEST(CalibrationFile, ALanguageModelsBenchRunIsPredictedWithLibTorchsLoopOptimizer) {
  std::string text = results("cuda", "NVIDIA GeForce RTX 5090", R"({"batch": 8, "status": "ok", "throughput": 40.0})");
  text.replace(text.find("\"resnet50\""), 10, "\"gpt2\"");
  text.replace(text.find("\"momentum\""), 10, "\"adamw\"");
  text.replace(text.find("\"resolution\": 224"), 17, "\"resolution\": null");
  text.replace(text.find("\"seq_len\": null"), 15, "\"seq_len\": 1024");
  Calibration calibration;
  apply_bench_results(calibration, text, "r.json", catalog::Catalog::active());
  const catalog::Catalog& catalog = catalog::Catalog::active();
  const CompletedGpu gpu = complete_tensor_rates(catalog.resolve("rtx5090"), catalog);
  workload::WorkloadOptions options;
  options.seq_len = 1024;
  TrainingConfig config;
  config.batch_per_gpu = 8;
  config.precision = catalog::Precision::fp16;
  config.optimizer = Optimizer::adamw;
  config.optimizer_impl = OptimizerImpl::loop;
  const double loop_s = estimate_step_time(workload::build("gpt2", options), config, gpu.gpu, nullptr).step_s;
  EXPECT_NEAR(calibration.step_time_scale.at("rtx5090"), (8 / 40.0) / loop_s, 1e-12);
  config.optimizer_impl = OptimizerImpl::foreach;
  EXPECT_NE(estimate_step_time(workload::build("gpt2", options), config, gpu.gpu, nullptr).step_s, loop_s);
}

TEST(CalibrationFile, RefusesCpuRunsFilesWithoutASuccessfulRunAndBadJsonNamingTheOption) {
  EXPECT_THAT(error_of(results("cpu", "AMD EPYC", R"({"batch": 8, "status": "ok", "throughput": 5.0})")),
              HasSubstr("--calibration 'r.json': measured on 'AMD EPYC' (cpu), not an NVIDIA GPU"));
  EXPECT_THAT(error_of(results("cuda", "NVIDIA GeForce RTX 5090",
                               R"({"batch": 8, "status": "failed", "failure": "out_of_memory"})")),
              HasSubstr("--calibration 'r.json': no successful runs with a throughput"));
  EXPECT_THAT(error_of("{not json"), HasSubstr("--calibration 'r.json': not valid JSON"));
  // Found by fuzz/bench_json: a number beyond a double escaped as nlohmann's out_of_range (exit 1).
  EXPECT_THAT(error_of("{\"runs\": 1e999}"), HasSubstr("--calibration 'r.json': not valid JSON"));
  EXPECT_THAT(error_of(R"({"environment": {"device_name": "x"}})"), HasSubstr("--calibration 'r.json': missing 'model'"));
}

}  // namespace
}  // namespace gpusage::estimate
