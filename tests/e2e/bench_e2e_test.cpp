// `gpusage bench` end to end on the CPU: the CI-sized version of
// `gpusage bench resnet18 --device cpu --resolution 64 --batch 2,4,8 --steps 5`, and of --data DIR on a
// JPEG folder made in the test.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/run_cli.hpp"
#include "pipeline/synthetic_images.hpp"

namespace gpusage::testing {
namespace {

using nlohmann::json;

TEST(BenchE2E, CpuSweepReportsEveryBatchWithItsDistributionAndNoPrediction) {
  // Batch 2 and up: at 32 px the last BatchNorm sees a 1x1 map, and PyTorch refuses batch 1 in training.
  const CliResult r = run_cli("bench resnet18 --device cpu --resolution 32 --batch 2,4 --steps 2 --warmup 1 "
                              "--threads 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["model"], "resnet18");
  EXPECT_EQ(j["environment"]["device"], "cpu");
  EXPECT_FALSE(j["environment"]["libtorch_version"].get<std::string>().empty());
  EXPECT_EQ(j["config"]["model_params"], 11'689'512);
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["status"], "ok");
    EXPECT_GT(run["throughput"].get<double>(), 0);
    EXPECT_EQ(run["step_time_s"]["count"], 2);
    EXPECT_LE(run["step_time_s"]["p50"].get<double>(), run["step_time_s"]["p99"].get<double>());
    EXPECT_GE(run["data_wait_fraction"].get<double>(), 0);
    EXPECT_LT(run["data_wait_fraction"].get<double>(), 1);
    EXPECT_TRUE(run["prediction"]["throughput"].is_null());
    EXPECT_NE(run["prediction"]["reason"].get<std::string>().find("CPU"), std::string::npos);
  }
  EXPECT_EQ(j["runs"][1]["batch"], 4);
}

TEST(BenchE2E, TableShowsMeasuredBesidePredicted) {
  const CliResult r = run_cli("bench mobilenet_v2 --device cpu --resolution 32 --batch 2 --steps 1 --warmup 2 "
                              "--threads 1",
                              "COLUMNS=200");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measured (samples/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted (samples/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: timed steps (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("mobilenet_v2 batch 2"), std::string::npos) << r.err;  // the progress line
}

TEST(BenchE2E, DistributedTwoProcessesAllReduceOverGlooAndReportScaling) {
  const CliResult r = run_cli("bench resnet18 --device cpu --resolution 32 --batch 2 --steps 2 --warmup 1 "
                              "--distributed 2 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const json& d = j["distributed"];
  EXPECT_EQ(d["backend"], "gloo");
  ASSERT_EQ(d["ranks"].size(), 2u);
  for (const auto& rank : d["ranks"]) EXPECT_EQ(rank["status"], "ok") << rank.dump();
  EXPECT_EQ(d["baseline"]["status"], "ok");
  EXPECT_GT(d["scaling_efficiency"].get<double>(), 0);
  // Data parallel: every rank applies the same averaged gradients, so their losses stay identical.
  EXPECT_EQ(d["ranks"][0]["per_step"]["loss"].size(), 2u);
}

TEST(BenchE2E, AutoBatchUnderAnInjectedLimitReportsTheSearch) {
  const CliResult r = run_cli("bench resnet18 --device cpu --resolution 64 --batch auto --memory-limit 1000 "
                              "--steps 1 --warmup 0 --threads 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["batch_search"]["max_batch"], 0);
  EXPECT_EQ(j["runs"][0]["status"], "failed");
  EXPECT_EQ(j["runs"][0]["failure"], "out_of_memory");
  EXPECT_TRUE(j["runs"][0]["throughput"].is_null());
}

// A recorded CUDA result (a fixture, not a measurement) through the real CLI: the prediction comes from
// the catalog GPU the device name resolves to, and the error is (measured - predicted) / predicted.
TEST(BenchE2E, CudaRunGetsPlansPredictionBesideItWithTheError) {
  const std::string fake = std::string(GPUSAGE_SOURCE_DIR) + "/tests/unit/bench/fixtures/fake-gpusage-bench";
  const CliResult r = run_cli("bench resnet50 --device cuda --precision bf16 --batch 32,64,128 --format json",
                              "GPUSAGE_BENCH_BINARY=" + fake);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 3u);
  for (const auto& run : j["runs"]) {
    const json& p = run["prediction"];
    EXPECT_EQ(p["gpu"], "rtx4090");
    ASSERT_TRUE(p["throughput"].is_number()) << p.dump();
    EXPECT_GT(p["max_batch"].get<int>(), 0);
    const double predicted = p["throughput"].get<double>();
    EXPECT_DOUBLE_EQ(run["throughput_error"].get<double>(), (1000.0 - predicted) / predicted);
  }
  EXPECT_NE(r.err.find("(fake)"), std::string::npos);  // the child's progress reaches the user
}

TEST(BenchE2E, BadInputIsOneLineAndExitTwo) {
  const CliResult model = run_cli("bench resnet9000 --device cpu");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("unknown model 'resnet9000'"), std::string::npos) << model.err;
  const CliResult data = run_cli("bench resnet18 --device cpu --data /no/such/dir");
  EXPECT_EQ(data.exit_code, 2);
  EXPECT_EQ(data.err, "gpusage: --data '/no/such/dir': not a directory; give an ImageFolder directory (one "
                      "sub-folder of images per class) or synthetic\n");
  const CliResult fp16 = run_cli("bench resnet18 --device cpu --precision fp16");
  EXPECT_EQ(fp16.exit_code, 2);
  EXPECT_EQ(fp16.err, "gpusage: --precision fp16 needs --device cuda; on CPU use fp32 or bf16\n");
}

// ---- --data DIR: the input pipeline ----

// A tiny ImageFolder of photo-like JPEGs (64 x 48, 2 classes) and one corrupt file, made in the test.
class DataFolder {
 public:
  explicit DataFolder(int images) {
    root_ = std::filesystem::temp_directory_path() / ("gpusage-e2e-data-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    pipeline::JpegFolderSpec spec;
    spec.images = images;
    spec.classes = 2;
    spec.width = 64;
    spec.height = 48;
    pipeline::write_jpeg_folder(root_.string(), spec);
    std::ofstream(root_ / "class_001" / "corrupt.jpg") << "not a JPEG";
  }
  ~DataFolder() { std::filesystem::remove_all(root_); }
  std::string str() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(BenchE2E, ImageFolderRunReportsLoaderRateDataWaitWorkersNeededAndTheCorruptFile) {
  const DataFolder folder(24);
  const CliResult r = run_cli("bench resnet18 --device cpu --data " + folder.str() +
                              " --resolution 32 --batch 2 --steps 2 --warmup 1 --workers 2 --threads 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["config"]["data_images"], 25);
  EXPECT_EQ(j["config"]["data_classes"], 2);
  EXPECT_EQ(j["config"]["workers"], 2);
  EXPECT_NE(j["config"]["data_mode"].get<std::string>().find("ImageFolder from disk, 2 workers"), std::string::npos);
  const json& run = j["runs"][0];
  ASSERT_EQ(run["status"], "ok") << run.dump();
  const json& loader = run["loader"];
  EXPECT_EQ(loader["workers"], 2);
  EXPECT_GT(loader["images_per_s"].get<double>(), 0);
  EXPECT_GT(loader["per_worker_images_per_s"].get<double>(), 0);
  EXPECT_GE(loader["workers_needed"].get<int>(), 1);
  EXPECT_GE(run["data_wait_fraction"].get<double>(), 0);
  EXPECT_LT(run["data_wait_fraction"].get<double>(), 1);
  EXPECT_EQ(loader["failed_files"], 1);
  ASSERT_EQ(loader["failed"].size(), 1u);
  EXPECT_NE(loader["failed"][0].get<std::string>().find("corrupt.jpg: not a JPEG or PNG file"), std::string::npos);
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || w.get<std::string>().find("corrupt.jpg") != std::string::npos;
  EXPECT_TRUE(warned) << j["warnings"].dump();
}

TEST(BenchE2E, ImageFolderTableHasLoaderColumns) {
  const DataFolder folder(8);
  const CliResult r = run_cli("bench resnet18 --device cpu --data " + folder.str() +
                                  " --resolution 32 --batch 2 --steps 1 --warmup 1 --workers 1 --threads 1",
                              "COLUMNS=250");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("loader (images/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workers needed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--data: 9 images in 2 classes"), std::string::npos) << r.out;
}

TEST(BenchE2E, ImageFolderWithoutClassFoldersIsBadInput) {
  const std::filesystem::path empty = std::filesystem::temp_directory_path() / ("gpusage-e2e-empty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty);
  const CliResult r = run_cli("bench resnet18 --device cpu --data " + empty.string());
  std::filesystem::remove_all(empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --data '" + empty.string() +
                       "': no class folder in it; ImageFolder wants one sub-folder of images per class\n");
}

}  // namespace
}  // namespace gpusage::testing
