#include <gtest/gtest.h>

#include "bench/batch_search.hpp"
#include "bench/bench_options.hpp"
#include "bench/model_catalog.hpp"
#include "bench/result.hpp"
#include "core/common/error.hpp"

namespace gpusage::bench {
namespace {

// ---- OOM batch search, driven by an injected allocator limit ----

// Runs the search against a device on which a batch fits when batch * bytes_per_sample <= limit.
BatchSearch search_with_limit(std::int64_t limit_bytes, std::int64_t bytes_per_sample, int cap = 65536) {
  BatchSearch search(1, cap);
  while (const auto batch = search.next()) {
    const bool fits = *batch * bytes_per_sample <= limit_bytes;
    search.record(*batch, fits, fits ? "" : "CUDA out of memory (injected limit)");
  }
  return search;
}

TEST(BenchBatchSearch, FindsTheLargestBatchUnderTheInjectedLimit) {
  for (int expected : {1, 2, 3, 7, 8, 48, 100, 1000}) {
    const BatchSearch s = search_with_limit(expected * 1000LL + 999, 1000);
    EXPECT_EQ(s.best(), expected) << "limit for " << expected;
    EXPECT_FALSE(s.reached_limit());
  }
}

TEST(BenchBatchSearch, DoublesThenBisectsBetweenLastSuccessAndFirstFailure) {
  const BatchSearch s = search_with_limit(48, 1);
  std::vector<int> tried;
  for (const auto& t : s.trials()) tried.push_back(t.batch);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 48, 56, 52, 50, 49}));
  EXPECT_EQ(s.best(), 48);
  EXPECT_EQ(s.trials()[6].reason, "CUDA out of memory (injected limit)");
  EXPECT_TRUE(s.trials()[0].reason.empty());
}

TEST(BenchBatchSearch, ReportsZeroWhenBatchOneDoesNotFit) {
  const BatchSearch s = search_with_limit(10, 100);
  EXPECT_EQ(s.best(), 0);
  EXPECT_EQ(s.trials().size(), 1u);
}

TEST(BenchBatchSearch, StopsAtTheCapAndSaysSo) {
  const BatchSearch s = search_with_limit(1'000'000, 1, 100);
  EXPECT_EQ(s.best(), 100);
  EXPECT_TRUE(s.reached_limit());
  EXPECT_EQ(s.trials().back().batch, 100);
}

TEST(BenchBatchSearch, RefusesAnOutcomeForABatchItDidNotAskFor) {
  BatchSearch s;
  EXPECT_THROW(s.record(5, true), std::logic_error);
}

// ---- options ----

BenchOptions parse(const std::vector<std::string>& args) {
  CLI::App app;
  BenchOptions o;
  add_bench_options(app, o);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  validate(o);
  return o;
}

std::string input_error(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BenchOptions, ParsesACommaSeparatedBatchListAndAuto) {
  const BenchOptions o = parse({"resnet18", "--batch", "2,4,8", "--steps", "5"});
  EXPECT_EQ(o.model, "resnet18");
  EXPECT_EQ(o.batches, (std::vector<int>{2, 4, 8}));
  EXPECT_FALSE(o.batch_auto);
  EXPECT_TRUE(parse({"--batch", "auto"}).batch_auto);
}

TEST(BenchOptions, RejectsBadValuesNamingThem) {
  EXPECT_EQ(input_error({"--batch", "2,x"}),
            "--batch '2,x': 'x' is not a batch size; give auto, or whole numbers from 1 to 1048576 separated by commas");
  EXPECT_EQ(input_error({"--batch", "0"}),
            "--batch '0': '0' is not a batch size; give auto, or whole numbers from 1 to 1048576 separated by commas");
  EXPECT_EQ(input_error({"--accumulate", "0"}), "--accumulate 0: must be at least 1");
  EXPECT_EQ(input_error({"--clip", "-1"}), "--clip -1: the norm threshold must be a positive number");
  EXPECT_EQ(input_error({"vit_b_16", "--resolution", "100"}),
            "--resolution 100: vit_b_16 needs a multiple of its patch size 16");
  EXPECT_EQ(input_error({"--data", "/no/such/images"}),
            "--data '/no/such/images': not a directory; give an ImageFolder directory (one sub-folder of images per "
            "class) or synthetic");
  EXPECT_EQ(input_error({"gpt2", "--data", GPUSAGE_SOURCE_DIR}),
            std::string("--data '") + GPUSAGE_SOURCE_DIR +
                "': gpt2 is a language model; an ImageFolder feeds vision models (use --data synthetic)");
  EXPECT_EQ(input_error({"--workers", "-1"}), "--workers -1: must be 0 or more");
  EXPECT_NE(input_error({"resnet9000"}).find("unknown model 'resnet9000'; gpusage bench trains: resnet18,"),
            std::string::npos);
}

TEST(BenchOptions, CpuRefusesFp16AndTf32AndGetsCpuDefaults) {
  BenchOptions o = parse({"--precision", "fp16"});
  try {
    resolve_for_device(o, DeviceKind::cpu);
    FAIL() << "fp16 on CPU accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--precision fp16 needs --device cuda; on CPU use fp32 or bf16");
  }
  BenchOptions cpu = parse({"resnet18"});
  resolve_for_device(cpu, DeviceKind::cpu);
  EXPECT_EQ(cpu.batches, (std::vector<int>{8}));
  EXPECT_EQ(*cpu.steps, 10);
  EXPECT_EQ(*cpu.warmup, 2);
  BenchOptions gpu = parse({"resnet18"});
  resolve_for_device(gpu, DeviceKind::cuda);
  EXPECT_EQ(*gpu.warmup, 10);
}

TEST(BenchOptions, ArgumentsRoundTripThroughTheParser) {
  const BenchOptions o = parse({"gpt2", "--device", "cpu", "--batch", "1,2", "--precision", "bf16", "--optimizer",
                                "adamw", "--seq-len", "64", "--accumulate", "3", "--clip", "1.5", "--seed", "7"});
  const BenchOptions again = parse(to_arguments(o));
  EXPECT_EQ(again.model, "gpt2");
  EXPECT_EQ(again.device, DeviceKind::cpu);
  EXPECT_EQ(again.batches, (std::vector<int>{1, 2}));
  EXPECT_EQ(again.precision, Precision::bf16);
  EXPECT_EQ(again.optimizer, OptimizerKind::adamw);
  EXPECT_EQ(again.seq_len, 64);
  EXPECT_EQ(again.accumulate, 3);
  EXPECT_EQ(again.clip_norm, 1.5);
  EXPECT_EQ(again.seed, 7u);
}

// ---- result model and JSON ----

TrialResult measured(int batch) {
  TrialResult r;
  r.batch = batch;
  r.warmup_steps = 1;
  r.step_time_s = {0.5, 0.5, 1.0, 0.5};
  r.data_wait_s = {0.05, 0.0, 0.1, 0.1};
  r.loss = {6.9, 6.9, 6.8, 6.8};
  r.samples = 4 * batch;
  r.timed_wall_s = 2.5;
  r.peak_rss_growth_bytes = 1e6;
  return r;
}

TEST(BenchResultJson, ReportsThroughputAsSamplesOverTimedWallTime) {
  const nlohmann::json j = to_json(measured(8));
  EXPECT_EQ(j["status"], "ok");
  EXPECT_DOUBLE_EQ(j["throughput"].get<double>(), 32 / 2.5);  // not the mean of per-step rates
  EXPECT_DOUBLE_EQ(j["step_time_s"]["p50"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["step_time_s"]["p99"].get<double>(), 0.985);
  EXPECT_DOUBLE_EQ(j["data_wait_fraction"].get<double>(), 0.25 / 2.5);
  EXPECT_DOUBLE_EQ(j["peak_memory_bytes"].get<double>(), 1e6);
  EXPECT_TRUE(j["average_power_w"].is_null());
  EXPECT_EQ(j["timed_steps"], 4);
}

TEST(BenchResultJson, AFailedCaseIsFailedWithItsReasonNeverZero) {
  TrialResult r;
  r.batch = 512;
  r.failure = FailureKind::out_of_memory;
  r.reason = "CUDA out of memory. Tried to allocate 2.00 GiB";
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["failure"], "out_of_memory");
  EXPECT_EQ(j["reason"], "CUDA out of memory. Tried to allocate 2.00 GiB");
  EXPECT_TRUE(j["throughput"].is_null());
  EXPECT_TRUE(j["step_time_s"].is_null());
}

TEST(BenchResultJson, ReportCarriesEnvironmentConfigSearchAndScaling) {
  BenchReport report;
  report.environment.device = "cpu";
  report.environment.libtorch_version = "1.13.0";
  report.environment.cpu_threads = 2;
  report.options.model = "resnet18";
  report.options.resolution = 64;
  report.model_params = 11'689'512;
  report.results = {measured(2)};
  BatchSearch search(1, 8);
  search.record(1, true);
  search.record(2, false, "out of memory");
  report.search = search;
  DistributedResult d;
  d.processes = 2;
  d.backend = "gloo";
  d.baseline = measured(2);                    // 4 samples / 2.5 s
  d.ranks = {measured(2), measured(2)};        // each the same: perfect scaling
  d.ranks[1].timed_wall_s = 5.0;               // rank 1 at half speed
  report.distributed = d;
  const nlohmann::json j = to_json(report);
  EXPECT_EQ(j["environment"]["libtorch_version"], "1.13.0");
  EXPECT_EQ(j["config"]["model_params"], 11'689'512);
  EXPECT_EQ(j["model"], "resnet18");
  EXPECT_EQ(j["resolution"], 64);
  EXPECT_TRUE(j["seq_len"].is_null());
  EXPECT_EQ(j["environment"]["device_type"], "cpu");
  EXPECT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["batch_search"]["max_batch"], 1);
  EXPECT_EQ(j["batch_search"]["trials"][1]["reason"], "out of memory");
  EXPECT_EQ(j["distributed"]["backend"], "gloo");
  EXPECT_DOUBLE_EQ(j["distributed"]["total_throughput"].get<double>(), 8 / 2.5 + 8 / 5.0);
  EXPECT_DOUBLE_EQ(j["distributed"]["scaling_efficiency"].get<double>(), (8 / 2.5 + 8 / 5.0) / (2 * 8 / 2.5));
}

TEST(BenchOptions, ImageFolderWorkersDefaultToOnePerLogicalCpu) {
  BenchOptions folder = parse({"--data", GPUSAGE_SOURCE_DIR});
  resolve_for_device(folder, DeviceKind::cpu);
  EXPECT_GE(folder.workers, 1);
  BenchOptions chosen = parse({"--data", GPUSAGE_SOURCE_DIR, "--workers", "3"});
  resolve_for_device(chosen, DeviceKind::cpu);
  EXPECT_EQ(chosen.workers, 3);
  BenchOptions synthetic = parse({});
  resolve_for_device(synthetic, DeviceKind::cpu);
  EXPECT_EQ(synthetic.workers, 0);  // no loader
}

TEST(BenchResultJson, WorkersNeededIsTheModelsRateOverOneWorkersRateRoundedUp) {
  TrialResult r = measured(8);  // 32 samples; steps 2.5 s of which 0.25 s waiting: the model takes 32 / 2.25
  LoaderResult l;
  l.workers = 2;
  l.images_per_s = 9.0;
  l.per_worker_images_per_s = 5.0;
  l.failed_files = 1;
  l.failed = {"a/b.jpg: not a JPEG or PNG file"};
  r.loader = l;
  EXPECT_DOUBLE_EQ(*r.model_images_per_s(), 32 / 2.25);  // 14.2 images/s
  EXPECT_EQ(r.workers_needed(), 3);                      // ceil(14.2 / 5)
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["loader"]["workers_needed"], 3);
  EXPECT_DOUBLE_EQ(j["loader"]["images_per_s"].get<double>(), 9.0);
  EXPECT_EQ(j["loader"]["failed"][0], "a/b.jpg: not a JPEG or PNG file");
  const TrialResult back = trial_from_json(j);  // what a distributed rank hands back
  ASSERT_TRUE(back.loader);
  EXPECT_EQ(back.loader->failed_files, 1);
  EXPECT_EQ(back.workers_needed(), 3);
  EXPECT_TRUE(to_json(measured(8))["loader"].is_null());  // synthetic data: no loader
}

TEST(BenchResultJson, TrialSurvivesTheRoundTripThroughJson) {
  TrialResult r = measured(4);
  r.grad_norm = {1.0, 2.0, 3.0, 4.0};
  r.nonfinite_steps = 1;
  r.first_nonfinite_step = 2;
  const TrialResult back = trial_from_json(to_json(r));
  EXPECT_EQ(back.batch, 4);
  EXPECT_EQ(back.step_time_s, r.step_time_s);
  EXPECT_EQ(back.grad_norm, r.grad_norm);
  EXPECT_EQ(back.first_nonfinite_step, 2);
  EXPECT_EQ(back.throughput(), r.throughput());
  EXPECT_EQ(back.peak_rss_growth_bytes, 1e6);
}

TEST(BenchModelCatalog, ReferenceCountsAreTorchvisionAndHuggingFaceFigures) {
  EXPECT_EQ(model_info("resnet50").reference_params, 25'557'032);
  EXPECT_EQ(model_info("gpt2").reference_params, 124'439'808);
  EXPECT_TRUE(model_info("mobilenet_v2").convolutional());
  EXPECT_TRUE(model_info("gpt2-xl").language());
}

}  // namespace
}  // namespace gpusage::bench
