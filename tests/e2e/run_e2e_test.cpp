// gpusage run end to end: the built CLI supervising scripted children (tests/fixtures/run), with the scripted
// NVML library (tests/fixtures/nvml_stub) loaded through the real dlopen path. The children wait for samples
// in gpu.jsonl instead of sleeping, so nothing here depends on timing.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <fmt/format.h>
#include <fstream>
#include <regex>

#include "e2e/run_harness.hpp"

namespace gpusage::testing {
namespace {

// ---- a PyTorch OOM: exit 1, the traceback passed through, the fix from doctor's OOM path ----

TEST(RunE2E, OomTracebackKeepsTheExitCodeAndTheOutput) {
  const RunResult r = run_gpusage("oom", {}, {child("oom.sh"), "{dir}"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "batch_size=64\nstep 1 loss 2.4113\n");  // stdout untouched: gpusage's lines go to stderr
  EXPECT_TRUE(contains(r.err,
                       "Traceback (most recent call last):\n  File \"train.py\", line 41, in <module>\n"
                       "    loss.backward()\n"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."));
  const std::string log = read_text(r.dir + "/train.log");
  EXPECT_TRUE(contains(log, r.out));
  EXPECT_TRUE(contains(log, "torch.OutOfMemoryError: CUDA out of memory."));
}

TEST(RunE2E, OomFindingCarriesTheFixAndTheMeasuredPeak) {
  const RunResult r = run_gpusage("oom-fix", {"--model", "gpt2"}, {child("oom.sh"), "{dir}"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(
      contains(r.err, "gpusage: error [log-cuda-oom]: CUDA out of memory (1x): tried to allocate 2.00 GiB"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["exit"]["code"], 1);
  EXPECT_TRUE(summary["exit"]["signal"].is_null());
  const json* oom = nullptr;
  for (const auto& f : summary["findings"])
    if (f["id"] == "log-cuda-oom") oom = &f;
  ASSERT_TRUE(oom) << summary.dump(2);
  // The stub's memory peaks at 20,000,000,000 bytes = 18.63 GiB of 34,190,917,632 = 31.84 GiB.
  EXPECT_TRUE(contains((*oom)["evidence"],
                       "gpusage run measured a peak of 18.63 GiB on GPU 0 (NVIDIA GeForce RTX "
                       "5090) of 31.84 GiB."))
      << (*oom)["evidence"];
  EXPECT_TRUE(contains((*oom)["fix"], "GPT-2 at batch 64"))
      << (*oom)["fix"];  // --model, the log's batch_size=64
  EXPECT_TRUE(contains(r.err, "gpusage:   seen: gpusage run measured a peak of 18.63 GiB"));
}

// A bare --checkpointing just before `--` takes its bare value (full): CLI11 alone ends it at `--` and eats the
// `--`, and the child's own options (sh's -c) were then refused as gpusage's.
TEST(RunE2E, ABareCheckpointingBeforeTheDoubleDashLeavesTheCommandAlone) {
  const RunResult r = run_gpusage("bare-checkpointing", {"--model", "gpt2", "--batch", "8", "--checkpointing"},
                                  {"/bin/sh", "-c", "echo child-ran"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child-ran\n");
  const std::string plan = read_json(r.dir + "/summary.json")["expectation"]["plan_command"];
  EXPECT_TRUE(contains(plan, "--checkpointing full")) << plan;
}

TEST(RunE2E, SummaryHoldsTheFiguresTheStubScripted) {
  const RunResult r = run_gpusage("figures", {}, {child("oom.sh"), "{dir}"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  ASSERT_EQ(summary["gpus"].size(), 1u) << summary.dump(2);
  const json& g = summary["gpus"][0];
  EXPECT_EQ(g["name"], "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(g["uuid"], "GPU-5090aaaa-0000-0000-0000-000000000001");
  EXPECT_EQ(g["utilization_median_percent"], 97.0);
  EXPECT_EQ(g["utilization_p10_percent"], 97.0);
  EXPECT_EQ(g["memory_peak_bytes"], 20000000000LL);
  EXPECT_EQ(g["memory_total_bytes"], 34190917632LL);
  EXPECT_EQ(g["power_mean_w"], 300.0);
  // NVML's energy counter: read 0 (the sampler's baseline) is 5,000,000 mJ, the first recorded sample reads
  // 5,100,000 and from the fifth read on it stays at 6,000,000: 900 J over the run.
  const auto samples = read_jsonl(r.dir + "/gpu.jsonl");
  ASSERT_GE(samples.size(), 4u);
  EXPECT_EQ(g["samples"], samples.size());
  EXPECT_EQ(g["energy_method"], "nvml-counter");
  EXPECT_DOUBLE_EQ(g["energy_j"].get<double>(), 900);
  EXPECT_EQ(summary["gpu_available"], true);
  EXPECT_EQ(summary["gpus_of_run"], "all");  // the stub lists pid 1, not a process of the run
  // The thermal throttle the stub scripts from its fourth read, raised live and kept in the summary.
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0: clocks throttled (thermal (software)) at 71 C"))
      << r.err;
  ASSERT_FALSE(summary["alerts"].empty());
  EXPECT_EQ(summary["alerts"][0]["kind"], "thermal_throttle");
  EXPECT_GT(summary["wall_s"].get<double>(), 0);
}

TEST(RunE2E, GpuLogReadsBackWithReportAndMonitorSimulate) {
  const RunResult r = run_gpusage("readback", {}, {child("oom.sh"), "{dir}"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string page = temp_path("readback.html");
  CliResult report = run_cli("report --monitor-log " + r.dir + "/gpu.jsonl --out " + page);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(contains(read_text(page), "NVIDIA GeForce RTX 5090"));
  CliResult replay = run_cli("monitor --simulate " + r.dir + "/gpu.jsonl --once --format json");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(json::parse(replay.out)["gpus"][0]["utilization_gpu_percent"], 97);
  // The run's own page: its timeline, the alert and the finding.
  const std::string own = read_text(r.dir + "/report.html");
  EXPECT_TRUE(contains(own, "gpusage run: ")) << own.substr(0, 400);
  EXPECT_TRUE(contains(own, "thermal_throttle"));
  EXPECT_TRUE(contains(own, "log-cuda-oom"));
}

// ---- NaN loss: announced while the child still runs ----

TEST(RunE2E, NanLossIsAnnouncedWhileTheRunLasts) {
  const RunResult r = run_gpusage("nan", {}, {child("nan.sh"), "{dir}", "{err}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The child waited for the finding in gpusage's stderr before it ended: it was printed live.
  EXPECT_TRUE(contains(r.out, "child saw the live finding\n")) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: error [log-non-finite]")) << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["findings"][0]["id"], "log-non-finite");
}

// ---- progress bars: a pseudo-terminal when stdout is a terminal (under tmux), pipes otherwise ----

TEST(RunE2E, ProgressBarRendersOnAPseudoTerminalUnderTmux) {
  if (resolve_tmux().empty()) GTEST_SKIP() << "tmux is not installed";
  const std::string dir = fresh_dir("tmux");
  const std::string done = temp_path("tmux.exit");
  fs::remove(done);
  const std::string socket = "gpusage-e2e-run-" + std::to_string(::getpid());
  const std::string inner = "GPUSAGE_NVML_LIBRARY=" + kStub +
                            " GPUSAGE_NVML_STUB_SCRIPT=" + child("gpu_busy.json") + " " + GPUSAGE_CLI +
                            " run --interval 0.1 --log-dir " + dir + " -- python3 " + child("progress.py") +
                            "; echo exit=$? > " + done + "; sleep 60";
  ASSERT_EQ(std::system(("tmux -L " + socket + " new-session -d -x 120 -y 30 '" + inner + "'").c_str()), 0);
  const bool finished = wait_for([&] { return fs::exists(done) && !read_text(done).empty(); });
  const std::string pane = temp_path("tmux.pane");
  std::system(("tmux -L " + socket + " capture-pane -p > " + pane).c_str());
  std::system(("tmux -L " + socket + " kill-server").c_str());
  ASSERT_TRUE(finished);
  EXPECT_EQ(read_text(done), "exit=0\n");
  const std::string screen = read_text(pane);
  EXPECT_TRUE(contains(screen, "stdout is a terminal: True")) << screen;
  // The bar was redrawn in place: one line on the screen, at its final state.
  EXPECT_TRUE(contains(screen, "train: 100%|##########| 20/20 [00:01<00:00, 12.50it/s]")) << screen;
  EXPECT_EQ(screen.find("train:"), screen.rfind("train:")) << screen;
  EXPECT_TRUE(contains(screen, "\ndone\n")) << screen;
  // train.log has what the terminal received: the redraws, the colour and the pty's "\r\n".
  const std::string log = read_text(dir + "/train.log");
  EXPECT_TRUE(contains(log, "\r\x1b[32mtrain\x1b[0m:  50%|#####     | 10/20")) << log;
  EXPECT_TRUE(contains(log, "done\r\n"));
  const json summary = read_json(dir + "/summary.json");
  ASSERT_FALSE(summary["throughput"].empty());
  EXPECT_EQ(summary["throughput"][0]["unit"], "it/s");
  EXPECT_EQ(summary["throughput"][0]["median_per_s"], 12.5);
  EXPECT_EQ(summary["throughput"][0]["readings"], 21);
}

TEST(RunE2E, ProgressBarThroughPipesWhenStdoutIsNotATerminal) {
  const RunResult r = run_gpusage("pipes", {}, {"python3", child("progress.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "stdout is a terminal: False\ndone\n");
  EXPECT_TRUE(contains(r.err, "\r\x1b[32mtrain\x1b[0m: 100%|##########| 20/20 [00:01<00:00, 12.50it/s]\n"));
  const json summary = read_json(r.dir + "/summary.json");
  ASSERT_FALSE(summary["throughput"].empty());
  EXPECT_EQ(summary["throughput"][0]["source"], "tqdm");
  EXPECT_EQ(summary["throughput"][0]["last_per_s"], 12.5);
}

// ---- signals ----

TEST(RunE2E, SigtermIsForwardedAndASecondCtrlCKillsTheGroup) {
  const std::string dir = fresh_dir("signals");
  const std::string out = temp_path("signals.out"), err = temp_path("signals.err");
  Process p({GPUSAGE_CLI, "run", "--log-dir", dir, "--", child("ignore_signals.sh")}, stub_env(child("gpu_busy.json")),
            out, err);
  ASSERT_TRUE(wait_for([&] { return contains(read_text(out), "child ready\n"); })) << read_text(err);
  ::kill(p.pid(), SIGTERM);
  ASSERT_TRUE(wait_for([&] { return contains(read_text(out), "child ignored SIGTERM\n"); }))
      << read_text(err);
  EXPECT_TRUE(p.running());  // gpusage waits for its child; it did not exit on SIGTERM itself
  ::kill(p.pid(), SIGINT);
  ASSERT_TRUE(wait_for([&] { return contains(read_text(out), "child ignored SIGINT\n"); })) << read_text(err);
  ::kill(p.pid(), SIGINT);  // the second within 3 s
  EXPECT_EQ(p.wait(), 128 + SIGKILL);
  EXPECT_TRUE(contains(read_text(err), "gpusage: second Ctrl-C within 3 s: killed the run's process group"));
  const json summary = read_json(dir + "/summary.json");
  EXPECT_EQ(summary["exit"]["code"], 137);
  EXPECT_EQ(summary["exit"]["signal"], 9);
}

TEST(RunE2E, CtrlCTypedOnThePseudoTerminalReachesTheChildAndTwiceKillsIt) {
  if (resolve_tmux().empty()) GTEST_SKIP() << "tmux is not installed";
  const std::string dir = fresh_dir("tmux-ctrl-c");
  const std::string done = temp_path("tmux-ctrl-c.exit"), tty = temp_path("tmux-ctrl-c.stty");
  fs::remove(done);
  const std::string socket = "gpusage-e2e-run-c-" + std::to_string(::getpid());
  const std::string inner = "GPUSAGE_NVML_LIBRARY=/nonexistent " + std::string(GPUSAGE_CLI) +
                            " run --log-dir " + dir + " -- " + child("ignore_signals.sh") +
                            "; echo exit=$? > " + done + "; stty -a > " + tty + "; sleep 60";
  ASSERT_EQ(std::system(("tmux -L " + socket + " new-session -d -x 100 -y 20 '" + inner + "'").c_str()), 0);
  auto log_has = [&](const std::string& text) { return contains(read_text(dir + "/train.log"), text); };
  const bool ready = wait_for([&] { return log_has("child ready"); });
  if (ready) std::system(("tmux -L " + socket + " send-keys C-c").c_str());
  const bool first = ready && wait_for([&] { return log_has("child ignored SIGINT"); });
  if (first) std::system(("tmux -L " + socket + " send-keys C-c").c_str());
  const bool finished = first && wait_for([&] { return fs::exists(tty) && !read_text(tty).empty(); });
  std::system(("tmux -L " + socket + " kill-server").c_str());
  ASSERT_TRUE(ready && first && finished) << ready << first << finished;
  // The first Ctrl-C went through the pty's line discipline to the child's group; the second killed it.
  EXPECT_EQ(read_text(done), "exit=137\n");
  // The terminal is back in its cooked mode once gpusage exits.
  const std::string modes = read_text(tty);
  EXPECT_TRUE(contains(modes, " icanon") && !contains(modes, "-icanon")) << modes;
  EXPECT_TRUE(contains(modes, " echo ") && !contains(modes, "-echo ")) << modes;
}

TEST(RunE2E, TypedInputReachesTheChildThroughThePseudoTerminal) {
  if (resolve_tmux().empty()) GTEST_SKIP() << "tmux is not installed";
  const std::string dir = fresh_dir("tmux-input");
  const std::string done = temp_path("tmux-input.exit");
  fs::remove(done);
  const std::string socket = "gpusage-e2e-run-i-" + std::to_string(::getpid());
  const std::string inner =
      "GPUSAGE_NVML_LIBRARY=/nonexistent " + std::string(GPUSAGE_CLI) + " run --log-dir " + dir +
      " -- sh -c \"echo ask; read x; echo child read: \\$x\"; echo exit=$? > " + done + "; sleep 60";
  ASSERT_EQ(std::system(("tmux -L " + socket + " new-session -d -x 100 -y 20 '" + inner + "'").c_str()), 0);
  const bool asked = wait_for([&] { return contains(read_text(dir + "/train.log"), "ask"); });
  if (asked) std::system(("tmux -L " + socket + " send-keys hello Enter").c_str());
  const bool finished = asked && wait_for([&] { return fs::exists(done) && !read_text(done).empty(); });
  std::system(("tmux -L " + socket + " kill-server").c_str());
  ASSERT_TRUE(asked && finished);
  EXPECT_EQ(read_text(done), "exit=0\n");
  // The pty echoed the typed line and the child read it.
  EXPECT_TRUE(contains(read_text(dir + "/train.log"), "hello\r\nchild read: hello\r\n"))
      << read_text(dir + "/train.log");
}

TEST(RunE2E, StdinPassesStraightToTheChildThroughPipes) {
  const std::string dir = fresh_dir("stdin");
  CliResult r = run_cli("run --log-dir " + dir + " -- sh -c 'read x; echo \"child read: $x\"'",
                        "echo from-stdin | GPUSAGE_NVML_LIBRARY=/nonexistent");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child read: from-stdin\n");
}

TEST(RunE2E, PrometheusServesTheRunsMetricsWhileItLasts) {
  const std::string dir = fresh_dir("prometheus");
  const std::string out = temp_path("prometheus.out"), err = temp_path("prometheus.err"),
                    flag = temp_path("scraped");
  fs::remove(flag);
  Process p({GPUSAGE_CLI, "run", "--interval", "0.1", "--log-dir", dir, "--prometheus", "127.0.0.1:0", "--model",
             "resnet50", "--batch", "256", "--precision", "bf16", "--",
             "sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done", flag},
            stub_env(child("gpu_busy.json")), out, err);
  std::smatch port;
  const std::regex serving(R"(serving Prometheus metrics at http://127\.0\.0\.1:([0-9]+)/metrics)");
  std::string text;
  ASSERT_TRUE(wait_for([&] {
    text = read_text(err);
    return std::regex_search(text, port, serving);
  })) << text;
  ASSERT_TRUE(wait_for([&] { return read_jsonl(dir + "/gpu.jsonl").size() >= 2; }));
  httplib::Client client("127.0.0.1", std::stoi(port[1].str()));
  auto response = client.Get("/metrics");
  std::ofstream(flag) << "done";
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(contains(response->body, "DCGM_FI_DEV_GPU_UTIL{")) << response->body;
  EXPECT_TRUE(std::regex_search(response->body, std::regex(R"(DCGM_FI_DEV_GPU_UTIL\{[^}]*\} 97)")))
      << response->body;
  // plan's prediction for the run beside the monitor's metrics.
  EXPECT_TRUE(contains(response->body, "gpusage_run_predicted_samples_per_second{bound=\"predicted\"} "))
      << response->body;
  EXPECT_EQ(p.wait(), 0);
}

TEST(RunE2E, ChildKilledBySigkillGives137) {
  const RunResult r = run_gpusage("sigkill", {}, {child("sigkill.sh")});
  EXPECT_EQ(r.exit_code, 137) << r.err;
  EXPECT_EQ(r.out, "about to be killed\n");
  EXPECT_TRUE(contains(r.err, "gpusage: run ended after ")) << r.err;
  EXPECT_TRUE(contains(r.err, ": killed by signal 9 (exit status 137)\n")) << r.err;
  EXPECT_EQ(read_json(r.dir + "/summary.json")["exit"]["signal"], 9);
}

// ---- the output is never altered or lost ----

TEST(RunE2E, BinaryLongLinesAndFloodsPassThroughByteForByte) {
  const std::string direct_out = temp_path("direct.out"), direct_err = temp_path("direct.err");
  {
    Process direct({"python3", child("bytes.py")}, stub_env(""), direct_out, direct_err);
    ASSERT_EQ(direct.wait(), 0);
  }
  const std::string expected_out = read_text(direct_out), expected_err = read_text(direct_err);
  ASSERT_GT(expected_out.size(), 9u << 20);
  const RunResult r = run_gpusage("bytes", {}, {"python3", child("bytes.py")});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out == expected_out) << "stdout differs: " << r.out.size() << " bytes vs "
                                     << expected_out.size();
  // On stderr the child's bytes are whole; gpusage's own lines (an alert, the summary) are before or after
  // them.
  EXPECT_TRUE(contains(r.err, expected_err)) << r.err.substr(0, 2000);
  EXPECT_EQ(fs::file_size(r.dir + "/train.log"), expected_out.size() + expected_err.size());
}

TEST(RunE2E, FindingsNeverLandInsideALineOfTheChildsOutput) {
  // stdout and stderr share one file, as on a terminal; the child floods short lines right after a NaN loss,
  // so most of gpusage's reads end in the middle of a line.
  const std::string dir = fresh_dir("interleave");
  const std::string both = temp_path("interleave.both");
  const std::string program = temp_path("interleave.py");
  std::ofstream(program) << "import sys\nprint(\"{'loss': nan, 'epoch': 0.1}\")\n"
                            "for i in range(200000):\n    sys.stdout.write('line %06d ok\\n' % i)\n";
  const std::string command = "GPUSAGE_NVML_LIBRARY=/nonexistent " + std::string(GPUSAGE_CLI) +
                              " run --log-dir " + dir + " -- python3 " + program + " > " + both + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const auto lines = text::split(read_text(both), '\n');
  const std::regex allowed(R"(line \d{6} ok|gpusage: .*|\{'loss': nan, 'epoch': 0\.1\}|)");
  std::size_t child_lines = 0, ours = 0;
  for (const auto& line : lines) {
    EXPECT_TRUE(std::regex_match(line, allowed)) << "a line was split: '" << line.substr(0, 200) << "'";
    child_lines += line.starts_with("line ");
    ours += line.starts_with("gpusage: error [log-non-finite]");
  }
  EXPECT_EQ(child_lines, 200000u);
  EXPECT_GE(ours, 1u);
}

TEST(RunE2E, ASlowReaderMakesTheChildWaitNothingIsDropped) {
  const std::string direct_out = temp_path("slow-direct.out"), direct_err = temp_path("slow-direct.err");
  {
    Process direct({"python3", child("bytes.py")}, stub_env(""), direct_out, direct_err);
    ASSERT_EQ(direct.wait(), 0);
  }
  const std::string expected = read_text(direct_out);
  const std::string dir = fresh_dir("slow");
  const std::string command = "GPUSAGE_NVML_LIBRARY=/nonexistent " + std::string(GPUSAGE_CLI) +
                              " run --log-dir " + dir + " -- python3 " + child("bytes.py") + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_TRUE(pipe);
  std::string got;
  std::array<char, 4096> buffer{};
  std::size_t n, reads = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    got.append(buffer.data(), n);
    if (++reads < 200)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // slower than the child writes
  }
  EXPECT_EQ(WEXITSTATUS(::pclose(pipe)), 0);
  EXPECT_TRUE(got == expected) << "stdout differs: " << got.size() << " bytes vs " << expected.size();
  EXPECT_TRUE(got.ends_with("no final newline"));
}

// ---- the README's example: $GPUSAGE_RUN_DIR, throughput from tqdm lines, an OOM ----

TEST(RunE2E, ReadmeExampleReadsThroughputAndSeesItsRunDir) {
  const RunResult r = run_gpusage("readme", {"--model", "gpt2"}, {"python3", child("train.py")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  // train.py waited for 8 samples in $GPUSAGE_RUN_DIR/gpu.jsonl before its OOM.
  EXPECT_GE(summary["gpus"][0]["samples"].get<int>(), 8);
  ASSERT_EQ(summary["throughput"].size(), 1u);
  EXPECT_EQ(summary["throughput"][0]["readings"], 2);
  EXPECT_DOUBLE_EQ(summary["throughput"][0]["median_per_s"].get<double>(), (9.87 + 9.91) / 2);
  EXPECT_EQ(summary["throughput"][0]["last_per_s"], 9.91);
  EXPECT_TRUE(contains(r.err, "gpusage: throughput 9.89 it/s median, last 9.91 (tqdm, 2 readings)\n"))
      << r.err;
  EXPECT_TRUE(contains(read_text(r.dir + "/report.html"), "Throughput against GPU utilization"));
}

// ---- without a GPU, input-bound runs, and gpusage's own errors ----

TEST(RunE2E, WithoutADriverTheChildStillRunsAndTheHostIsSummarised) {
  const RunResult r = run_gpusage("nogpu", {}, {"sh", "-c", "echo trained; exit 4"}, "");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "trained\n");
  EXPECT_TRUE(contains(r.err, "; sampling host CPU and memory only\n")) << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_EQ(summary["gpu_available"], false);
  EXPECT_TRUE(summary["gpus"].empty());
  EXPECT_TRUE(summary["host"]["memory_total_bytes"].is_number()) << summary.dump(2);
  EXPECT_TRUE(fs::exists(r.dir + "/report.html"));
}

TEST(RunE2E, IdleGpuWithABusyProcessIsInputBound) {
  const RunResult r =
      run_gpusage("starved", {"--idle-alert-after", "0.2"},
                  {"sh", "-c", ". " + child("samples.sh") + "; wait_samples \"$0\" 8", "{dir}"},
                  child("gpu_starved.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      contains(r.err,
               "gpusage: alert: GPU 0: utilization 12% for at least 0.2 s while python3 (pid 1) holds "
               "18.6 GiB"))
      << r.err;
  const json summary = read_json(r.dir + "/summary.json");
  EXPECT_GT(summary["gpus"][0]["input_bound_fraction"].get<double>(), 0);
  EXPECT_LE(summary["gpus"][0]["input_bound_fraction"].get<double>(), 1);
  EXPECT_EQ(summary["alerts"][0]["kind"], "input_bottleneck");
  // No energy counter in this script: 120 W integrated over the span the recorded samples cover.
  const auto samples = read_jsonl(r.dir + "/gpu.jsonl");
  const double span =
      samples.back()["unix_time_s"].get<double>() - samples.front()["unix_time_s"].get<double>();
  EXPECT_EQ(summary["gpus"][0]["energy_method"], "power-integral");
  EXPECT_NEAR(summary["gpus"][0]["energy_j"].get<double>(), 120 * span, 1e-6);
}

TEST(RunE2E, BadOptionsExitTwoBeforeTheChildStarts) {
  const std::string marker = temp_path("started");
  fs::remove(marker);
  CliResult r = run_cli("run --interval 0 -- touch " + marker);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --interval 0: accepted values are 0.1 to 3600 seconds\n");
  const std::string file = temp_path("a-file");
  std::ofstream(file) << "x";
  r = run_cli("run --log-dir " + file + "/sub -- touch " + marker);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "gpusage: --log-dir " + file + "/sub: cannot create the directory")) << r.err;
  r = run_cli("run --kill-on-hang -- touch " + marker);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --kill-on-hang needs --hang-after SECONDS (how long a run may print nothing)\n");
  r = run_cli("run --notify-url ftp://example.org/x -- touch " + marker);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --notify-url 'ftp://example.org/x': give an http:// or https:// URL with a host, e.g. "
                   "https://ntfy.sh/my-training-runs\n");
  r = run_cli("run -- no-such-training-program-xyz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "gpusage: run: command 'no-such-training-program-xyz' not found (not an executable file on $PATH)\n");
  EXPECT_FALSE(fs::exists(marker));
}

// ---- a full disk under train.log (tests/fixtures/write_fault): the run and its output go on ----

TEST(RunE2E, AFullDiskCutsTrainLogBackToWholeLinesAndTheOutputPassesThrough) {
  const std::string dir = fresh_dir("full-disk");
  fs::create_directories(dir);
  const std::string train_log = fs::canonical(dir).string() + "/train.log";
  const std::string out = temp_path("full-disk.out"), err = temp_path("full-disk.err");
  // 2,000 lines of 32 bytes; the disk holds 10,000 bytes of train.log, which ends a line in its middle.
  Process p({GPUSAGE_CLI, "run", "--interval", "0.1", "--log-dir", dir, "--", "sh", "-c",
             "i=0; while [ $i -lt 2000 ]; do printf '%031d\\n' $i; i=$((i + 1)); done"},
            {"GPUSAGE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so", "LD_PRELOAD=" + std::string(GPUSAGE_WRITE_FAULT),
             "GPUSAGE_FAULT_PATH=" + train_log, "GPUSAGE_FAULT_LIMIT_BYTES=10000"},
            out, err);
  EXPECT_EQ(p.wait(), 0);
  const std::string printed = read_text(out), errors = read_text(err);
  std::string expected;
  for (int i = 0; i < 2000; ++i) expected += fmt::format("{:031d}\n", i);
  EXPECT_EQ(printed, expected);  // all of the child's output reached the terminal
  // How much is kept depends on how the child's bytes arrive in reads (one 64 KiB read can cross the limit,
  // leaving nothing), but what is kept is whole lines: a short write never stays behind.
  const std::string log = read_text(train_log);
  EXPECT_LE(log.size(), 10000u);
  EXPECT_EQ(log.size() % 32, 0u) << log.size();
  EXPECT_EQ(log, expected.substr(0, log.size()));  // whole lines, the first ones, in order
  std::size_t warnings = 0;
  for (const auto& line : text::split(errors, '\n'))
    if (contains(line, "gpusage: warning: --log-dir '" + train_log + "': write failed (No space left on device)"))
      ++warnings;
  EXPECT_EQ(warnings, 1u) << errors;
  EXPECT_TRUE(fs::exists(dir + "/summary.json"));  // the run finished its own files
}

}  // namespace
}  // namespace gpusage::testing
