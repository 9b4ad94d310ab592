// gpusage run end to end, what it adds to watching: plan's prediction and MFU, the time bar, hangs,
// notifications (a local HTTP server: nothing leaves the machine), and fit-batch. Scripted children and the
// NVML stub, as in run_e2e_test.cpp.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <thread>

#include "core/catalog/catalog.hpp"
#include "core/workload/workload.hpp"
#include "e2e/run_harness.hpp"

namespace gpusage::testing {
namespace {

// ---- plan's prediction beside the measurement, and MFU ----

TEST(RunE2E, ThroughputBelowPlansIntervalIsAFindingAndTheSummaryHoldsMfu) {
  // steady_rate.sh prints 2.00 it/s at batch 256 (512 img/s) on the stub's RTX 5090 at 12% utilization; plan
  // predicts ResNet-50 bf16 batch 256 there at well over 1,000 img/s.
  const RunResult r = run_gpusage(
      "expect", {"--model", "resnet50", "--batch", "256", "--precision", "bf16", "--expect-window", "0.2"},
      {child("steady_rate.sh"), "{dir}"}, child("gpu_starved.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "trained\n");
  EXPECT_TRUE(contains(r.err, "gpusage: warning [run-throughput-below-prediction]: 2 it/s against "))
      << r.err;
  EXPECT_TRUE(contains(
      r.err,
      " predicted for ResNet-50 bf16 batch 256 on GeForce RTX 5090: the GPU is idle 88% of the time; "
      "input-bound Fix: Feed the GPU faster"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  const json& x = summary["expectation"];
  EXPECT_EQ(x["gpu"], "rtx5090");
  EXPECT_EQ(x["throughput"]["verdict"], "below");
  EXPECT_EQ(x["throughput"]["measured"], 512.0);  // 2 it/s x 256 samples per it
  EXPECT_LT(512.0, x["throughput"]["low"].get<double>());
  EXPECT_EQ(x["memory"]["measured_peak_bytes"], 20000000000.0);
  EXPECT_EQ(x["utilization"]["measured_median_percent"], 12.0);
  // MFU by hand: ResNet-50's forward + backward FLOPs per sample x 512 samples/s over the RTX 5090's dense
  // bf16 tensor rate, 209.5 TFLOPS in data/gpus.toml.
  const workload::Workload resnet = workload::build("resnet50");
  const double flops = resnet.forward_flops() + resnet.backward_flops();
  EXPECT_EQ(catalog::Catalog::builtin().resolve("rtx5090").matmul_tflops(catalog::Precision::bf16), 209.5);
  const json& f = summary["efficiency"];
  EXPECT_DOUBLE_EQ(f["model_flops_per_sample"].get<double>(), flops);
  EXPECT_DOUBLE_EQ(f["achieved_tflops"].get<double>(), flops * 512 / 1e12);
  EXPECT_DOUBLE_EQ(f["mfu"].get<double>(), flops * 512 / 1e12 / 209.5);
  EXPECT_EQ(f["peak_tflops"], 209.5);
  EXPECT_TRUE(contains(
      r.err, fmt::format("gpusage: MFU {:.1f}%: {:.1f} TFLOPS achieved of 209.5 dense bf16 TFLOPS on "
                         "GeForce RTX 5090",
                         flops * 512 / 1e12 / 209.5 * 100, flops * 512 / 1e12)))
      << r.err;
  EXPECT_TRUE(contains(r.err, "measured 2 it/s median = 512 samples/s per GPU: below the interval")) << r.err;
  EXPECT_EQ(summary["findings"][0]["id"], "run-throughput-below-prediction");
  // The time bar: the stub's card is 12% busy in every sample, so while the steps flowed 88% of the time was
  // input wait, whatever the shares of startup and pauses.
  const json& shares = summary["time_shares"];
  const double flowing = shares["input_wait_s"].get<double>() + shares["training_s"].get<double>();
  EXPECT_NEAR(shares["input_wait_s"].get<double>() / flowing, 0.88, 1e-9);
  EXPECT_NEAR(shares["startup_fraction"].get<double>() + shares["eval_checkpoint_fraction"].get<double>() +
                  shares["input_wait_fraction"].get<double>() + shares["training_fraction"].get<double>(),
              1, 1e-9);
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex(R"(gpusage: time \[[sie#]{40}\] startup [0-9]+%, input wait)")))
      << r.err;
  const std::string page = read_text(r.dir + "/report.html");
  EXPECT_TRUE(contains(page, "Predicted against measured"));
  EXPECT_TRUE(contains(page, "Where the time went"));
  EXPECT_TRUE(contains(page, "MFU (%)"));
}

TEST(RunE2E, AModelWithoutABatchRunsWithoutAPrediction) {
  const RunResult r = run_gpusage("no-batch", {"--model", "resnet50"}, {"sh", "-c", "echo trained"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(
      r.err, "gpusage: no prediction: give --batch (the per-GPU batch) with --model, --hf-config or --workload\n"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_TRUE(summary["expectation"].is_null());
  EXPECT_TRUE(summary["efficiency"].is_null());
}

// ---- hangs: no output for --hang-after seconds, whatever the GPUs do ----

TEST(RunE2E, ASilentIdleRunIsAHangAndKillOnHangEndsItsGroup) {
  const RunResult r =
      run_gpusage("hang-kill", {"--hang-after", "0.5", "--kill-on-hang"},
                  {"sh", "-c", "echo started; echo step 1 loss 2.3; exec sleep 600"}, child("gpu_idle.json"));
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_EQ(r.out, "started\nstep 1 loss 2.3\n");
  EXPECT_TRUE(contains(r.err, "gpusage: error [run-hang]: no output for ")) << r.err;
  EXPECT_TRUE(contains(r.err, " (--hang-after 0.5), GPUs ")) << r.err;
  EXPECT_TRUE(contains(r.err, ": gpusage ended the run's process group (--kill-on-hang)\n")) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(gpusage:   pid [0-9]+ sleep: S \(sleeping\))")))
      << r.err;
  EXPECT_TRUE(
      contains(r.err, "gpusage:   Its last lines:\ngpusage:   started\ngpusage:   step 1 loss 2.3\n"));
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["exit"]["signal"], SIGTERM);
  EXPECT_EQ(summary["findings"][0]["id"], "run-hang");
}

TEST(RunE2E, AHangIsAnnouncedAndTheRunGoesOnWithoutKillOnHang) {
  // The child waits until gpusage's stderr shows the finding, then prints again and ends by itself.
  const RunResult r = run_gpusage(
      "hang-report", {"--hang-after", "0.3"},
      {"sh", "-c", "echo waiting; while ! grep -q run-hang \"$0\"; do sleep 0.05; done; echo resumed",
       "{err}"},
      child("gpu_idle.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "waiting\nresumed\n");
  EXPECT_TRUE(contains(r.err, "gpusage: error [run-hang]: no output for ")) << r.err;
  EXPECT_FALSE(contains(r.err, "--kill-on-hang)"));
}

// A silent `sleep 45` under --hang-after 3 --kill-on-hang, once with the GPU at 100% utilization and little power
// (ranks spinning in a collective) and once idle: both are ended by gpusage (SIGTERM), long before the 45 s.
RunResult silent_sleep(const std::string& name, const std::string& nvml_script) {
  return run_gpusage(name, {"--hang-after", "3", "--kill-on-hang"}, {"sh", "-c", "echo step 1; exec sleep 45"},
                     child(nvml_script));
}

TEST(RunE2E, ASilentRunWithTheGpuBusyIsAHangThatPointsAtACollective) {
  const RunResult r = silent_sleep("hang-collective", "gpu_collective.json");
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(contains(r.err,
                       " (--hang-after 3), GPUs busy at low power (median 100% utilization at 12% of the power "
                       "limit): gpusage ended the run's process group (--kill-on-hang)\n"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["stopped_by"], "hang");
  EXPECT_LT(summary["wall_s"].get<double>(), 20) << "not ended within 20 s of a 45 s sleep";
  const std::string fix = summary["findings"][0]["fix"];
  EXPECT_TRUE(contains(fix, "Most likely a collective")) << fix;
  EXPECT_TRUE(contains(fix, "TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1")) << fix;
}

TEST(RunE2E, ASilentRunWithTheGpuIdleIsAHangOnTheHostSide) {
  const RunResult r = silent_sleep("hang-host", "gpu_idle.json");
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(contains(r.err,
                       " (--hang-after 3), GPUs idle (median 0% utilization at 21% of the power limit): gpusage "
                       "ended the run's process group (--kill-on-hang)\n"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["stopped_by"], "hang");
  EXPECT_LT(summary["wall_s"].get<double>(), 20) << "not ended within 20 s of a 45 s sleep";
  EXPECT_TRUE(contains(summary["findings"][0]["fix"].get<std::string>(), "A wait on the host side"));
}

// ---- a throughput no card can deliver ----

TEST(RunE2E, AThroughputAboveTheCardsPeakIsImplausibleAndGetsNoMfu) {
  // 100 it/s at batch 256 is 25,600 ResNet-50 samples/s: about three times the RTX 5090's bf16 tensor peak.
  const RunResult r = run_gpusage("implausible", {"--model", "resnet50", "--batch", "256", "--precision", "bf16"},
                                  {child("steady_rate.sh"), "{dir}", "100.00"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: warning [run-throughput-implausible]: 25600 samples/s per GPU would be "))
      << r.err;
  EXPECT_FALSE(contains(r.err, "gpusage: MFU")) << r.err;
  EXPECT_FALSE(contains(r.err, "run-throughput-above-prediction")) << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_TRUE(summary["efficiency"].is_null());
  bool flagged = false;
  for (const auto& f : summary["findings"]) flagged = flagged || f["id"] == "run-throughput-implausible";
  EXPECT_TRUE(flagged) << summary["findings"].dump(2);
}

// ---- notifications: a local HTTP server and a hook command; nothing leaves the machine ----

TEST(RunE2E, NotificationsReachALocalServerAndAHookWithTheFindingAndTheEnd) {
  httplib::Server server;
  std::mutex mutex;
  std::vector<json> posted;
  server.Post("/hook", [&](const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex);
    posted.push_back(json::parse(request.body));
    EXPECT_EQ(request.get_header_value("Content-Type"), "application/json");
    response.set_content("ok", "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string hooked = temp_path("notify.jsonl");
  fs::remove(hooked);
  const RunResult r = run_gpusage("notify",
                                  {"--notify-url", fmt::format("http://127.0.0.1:{}/hook", port), "--notify",
                                   "cat >> " + hooked + "; echo >> " + hooked, "--notify-level", "error"},
                                  {child("oom.sh"), "{dir}"});
  server.stop();
  serving.join();
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(contains(r.err, "notification not delivered")) << r.err;
  std::vector<json> hook;
  for (const auto& line : text::split(read_text(hooked), '\n'))
    if (!line.empty()) hook.push_back(json::parse(line));
  ASSERT_GE(posted.size(), 2u);
  EXPECT_EQ(hook, posted);           // the command and the URL get the same documents, in the same order
  const json& oom = posted.front();  // the live finding came before the end
  EXPECT_EQ(oom["source"], "gpusage run");
  EXPECT_EQ(oom["event"], "finding");
  EXPECT_EQ(oom["severity"], "error");
  EXPECT_EQ(oom["finding"]["id"], "log-cuda-oom");
  EXPECT_EQ(oom["log_dir"], r.dir);
  EXPECT_EQ(oom["command"], json::array({child("oom.sh"), r.dir}));
  EXPECT_TRUE(contains(oom["text"], ": error [log-cuda-oom]: CUDA out of memory")) << oom["text"];
  const json& end = posted.back();
  EXPECT_EQ(end["event"], "crashed");
  EXPECT_EQ(end["severity"], "error");
  EXPECT_EQ(end["summary"]["exit"]["code"], 1);
  EXPECT_EQ(end["summary"], read_json(r.dir + "/summary.json"));
  EXPECT_EQ(end["suppressed"], 0);
  EXPECT_TRUE(contains(end["text"], "crashed after ")) << end["text"];
  EXPECT_TRUE(contains(end["text"], ": exit status 1; log-cuda-oom: CUDA out of memory")) << end["text"];
  for (const auto& event : posted) EXPECT_NE(event["severity"], "warning");  // below --notify-level error
}

TEST(RunE2E, ANotificationThatCannotBeDeliveredIsSaidAndTheRunEndsNormally) {
  // A port that was free a moment ago, bound and closed again without listening: connections are refused.
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&address), size), 0);
  ASSERT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const int port = ntohs(address.sin_port);
  ::close(probe);
  const RunResult r = run_gpusage("notify-down", {"--notify-url", fmt::format("http://127.0.0.1:{}/x", port)},
                                  {"sh", "-c", "echo trained"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(
      r.err, fmt::format("gpusage: notification not delivered: --notify-url http://127.0.0.1:{}/x: ", port)))
      << r.err;
}

// ---- fit-batch: a scripted trainer that runs up to batch 37 and fails with a CUDA OOM above it ----

// Processes still running `sleep SECONDS` (oom_above.sh's stand-in for a training loop that goes on). Each test
// gives its trainer a duration of its own: ctest runs tests side by side, and another test's live trainer is not
// one left behind.
int left_behind(std::string_view seconds) {
  const std::string wanted = std::string("sleep") + '\0' + std::string(seconds) + '\0';
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    count += cmdline == wanted;
  }
  return count;
}

TEST(FitBatchE2E, FindsThirtySevenInTheFewestTriesTheSearchAllowsAndLeavesNoChild) {
  const std::string dir = fresh_dir("fit-batch");
  const std::string out = temp_path("fit-batch.out"), err = temp_path("fit-batch.err");
  Process p({GPUSAGE_CLI, "fit-batch", "--interval", "0.1", "--log-dir", dir, "--steps", "3",
             "--target-batch", "148", "--format", "json", "--", child("oom_above.sh"), "37", "{batch}", "987"},
            stub_env(child("gpu_busy.json")), out, err);
  ASSERT_EQ(p.wait(), 0) << read_text(err);
  const json report = json::parse(read_text(out));  // the child's stdout went to stderr: only the report here
  EXPECT_TRUE(contains(read_text(err), "training at batch 37\n"));
  EXPECT_EQ(report["largest_batch"], 37);
  std::vector<int> batches;
  for (const auto& t : report["tries"]) batches.push_back(t["batch"]);
  // Doubling from 1 until 64 fails, then bisecting between 32 and 64.
  EXPECT_EQ(batches, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
  EXPECT_EQ(report["tries"][6]["result"], "out of memory");
  EXPECT_EQ(report["tries"][11]["result"], "ran");
  EXPECT_EQ(report["tries"][11]["throughput_per_s"], 4.0);
  EXPECT_EQ(report["tries"][11]["throughput_unit"], "it/s");
  EXPECT_EQ(report["tries"][11]["memory_peak_bytes"].is_number(), true);
  EXPECT_EQ(report["accumulation"], "batch 37 x 4 accumulation steps = 148 per GPU (target 148)");
  EXPECT_TRUE(report["stopped"].is_null());
  // Each try has its run's logs; the stopped ones say why gpusage ended them.
  EXPECT_EQ(read_json(dir + "/try-12-batch-37/summary.json")["stopped_by"], "steps");
  EXPECT_EQ(left_behind("987"), 0);
}

TEST(FitBatchE2E, WithTheWorkloadTheSearchStartsFromPlansLargestBatch) {
  // plan's largest batch for ResNet-50 fp32 on the stub's RTX 5090 (the card NVML names), as `plan` says it.
  const CliResult plan = run_cli("plan resnet50 --gpu rtx5090 --precision fp32 --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const int predicted = json::parse(plan.out)["results"][0]["max_batch"];
  ASSERT_GT(predicted, 37);
  const std::string dir = fresh_dir("fit-batch-plan");
  const std::string out = temp_path("fit-batch-plan.out"), err = temp_path("fit-batch-plan.err");
  Process p({GPUSAGE_CLI, "fit-batch", "--interval", "0.1", "--log-dir", dir, "--steps", "3", "--model",
             "resnet50", "--format", "json", "--", child("oom_above.sh"), "37", "{batch}", "988"},
            stub_env(child("gpu_busy.json")), out, err);
  ASSERT_EQ(p.wait(), 0) << read_text(err);
  const json report = json::parse(read_text(out));
  EXPECT_EQ(report["predicted_largest_batch"], predicted);
  EXPECT_EQ(report["tries"][0]["batch"], predicted);
  EXPECT_EQ(report["tries"][0]["result"], "out of memory");
  EXPECT_EQ(report["largest_batch"], 37);
  EXPECT_EQ(left_behind("988"), 0);
}

TEST(FitBatchE2E, ACommandWithoutTheBatchPlaceholderIsAUserError) {
  CliResult r = run_cli("fit-batch -- python3 train.py --batch-size 32");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpusage: fit-batch: the command has no {batch}: write it where the batch size goes, e.g. -- "
            "python train.py --batch-size {batch}\n");
}

}  // namespace
}  // namespace gpusage::testing
