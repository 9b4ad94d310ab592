// gpusage monitor end to end: the built CLI against the scripted NVML library (loaded through the real
// dlopen path), checked against the scripts in tests/fixtures/nvml_stub.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "core/common/text.hpp"
#include "e2e/process.hpp"
#include "e2e/run_cli.hpp"


namespace gpusage::testing {
namespace {

namespace fs = std::filesystem;

const std::string kStub = GPUSAGE_NVML_STUB_MODERN;

std::string stub_env(const std::string& script) {
  return "GPUSAGE_NVML_LIBRARY=" + kStub + " GPUSAGE_NVML_STUB_SCRIPT=" + fixture("nvml_stub/" + script);
}

std::string temp_file(const std::string& name) {
  return (fs::path(GPUSAGE_BINARY_DIR) / ("e2e-monitor-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  auto lines = text::split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Polls `ready` every 50 ms for up to `limit_s` seconds (a generous bound on a loaded machine, not a timing
// assertion: the condition is what is checked).
bool wait_for(const std::function<bool()>& ready, double limit_s = 30) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

// Starts `gpusage monitor ARGS` in the background on the NVML stub with `script`, stdout and stderr to files.
class Background : public Process {
 public:
  Background(const std::vector<std::string>& args, const std::string& script, const std::string& out,
             const std::string& err)
      : Process(monitor_argv(args),
                {"GPUSAGE_NVML_LIBRARY=" + kStub, "GPUSAGE_NVML_STUB_SCRIPT=" + fixture("nvml_stub/" + script)}, out,
                err) {}

 private:
  static std::vector<std::string> monitor_argv(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {GPUSAGE_CLI, "monitor"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
};

TEST(MonitorE2E, OnceJsonReproducesTheScriptedValues) {
  CliResult r = run_cli("monitor --once --format json", stub_env("two_gpus.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("backend"), "nvml");
  EXPECT_EQ(j.at("driver_version"), "550.54.15");
  EXPECT_EQ(j.at("cuda_driver_version"), "12.4");
  ASSERT_EQ(j.at("gpus").size(), 2u);
  const auto& h100 = j["gpus"][0];
  EXPECT_EQ(h100.at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.at("uuid"), "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(h100.at("utilization_gpu_percent"), 87);
  EXPECT_EQ(h100.at("utilization_memory_percent"), 41);
  EXPECT_EQ(h100.at("memory_used_bytes"), 61203283968LL);
  EXPECT_EQ(h100.at("memory_total_bytes"), 85520809984LL);
  EXPECT_EQ(h100.at("temperature_c"), 64);
  EXPECT_EQ(h100.at("power_w"), 512.345);
  EXPECT_EQ(h100.at("power_limit_w"), 700.0);
  EXPECT_EQ(h100.at("sm_clock_mhz"), 1755);
  EXPECT_EQ(h100.at("sm_clock_max_mhz"), 1980);
  EXPECT_EQ(h100.at("memory_clock_mhz"), 2619);
  EXPECT_EQ(h100.at("pstate"), 0);
  EXPECT_EQ(h100.at("throttle_reasons"), nlohmann::json({"sw_power_cap"}));
  EXPECT_EQ(h100.at("pcie_gen"), 5);
  EXPECT_EQ(h100.at("pcie_width"), 16);
  EXPECT_EQ(h100.at("pcie_tx_bytes_per_s"), 123456LL * 1024);
  EXPECT_EQ(h100.at("ecc_uncorrected_volatile"), 0);
  EXPECT_TRUE(h100.at("fan_percent").is_null());  // not supported: null, never 0
  ASSERT_EQ(h100.at("processes").size(), 1u);
  EXPECT_EQ(h100["processes"][0].at("pid"), 1);
  EXPECT_EQ(h100["processes"][0].at("name"), "python3");
  EXPECT_EQ(h100["processes"][0].at("used_memory_bytes"), 61203283968LL);
  EXPECT_TRUE(h100["processes"][0].at("cpu_percent").is_number());  // pid 1 is real: measured
  const auto& rtx = j["gpus"][1];
  EXPECT_EQ(rtx.at("name"), "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(rtx.at("fan_percent"), 30);
  EXPECT_EQ(rtx.at("pstate"), 8);
  EXPECT_EQ(rtx.at("power_w"), 35.123);
  EXPECT_EQ(rtx.at("throttle_reasons"), nlohmann::json({"gpu_idle"}));
  EXPECT_TRUE(rtx.at("temperature_c").is_null());         // the read fails (scripted error)
  EXPECT_TRUE(rtx.at("pcie_rx_bytes_per_s").is_null());   // not supported
  EXPECT_TRUE(rtx.at("ecc_corrected_volatile").is_null());  // ECC off
  EXPECT_TRUE(rtx.at("processes").empty());
  EXPECT_TRUE(j.at("host").at("memory_total_bytes").is_number());
  ASSERT_EQ(j.at("alerts").size(), 1u);  // the H100 is power-capped
  EXPECT_EQ(j["alerts"][0].at("kind"), "power_throttle");
}

TEST(MonitorE2E, OnceSummaryIsReadable) {
  CliResult r = run_cli("monitor --once", stub_env("two_gpus.json") + " COLUMNS=120");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "driver 550.54.15  CUDA 12.4")) << r.out;
  EXPECT_TRUE(contains(r.out, "NVIDIA GeForce RTX 4090")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU 0: power cap")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU 1: idle")) << r.out;
  EXPECT_TRUE(contains(r.out, "57.0 GiB / 79.6 GiB (72%)")) << r.out;
  EXPECT_TRUE(contains(r.out, "gen 1 x16")) << r.out;
  EXPECT_TRUE(contains(r.out, "python3")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(MonitorE2E, WithoutADriverItSaysSoAndShowsTheHost) {
  CliResult r = run_cli("monitor --once", "GPUSAGE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Host: CPU ")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU: cannot load NVML from GPUSAGE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1")) << r.out;
  r = run_cli("monitor --once --format json", "GPUSAGE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "showing host CPU and memory only")) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("gpu_available"), false);
  EXPECT_TRUE(j.at("gpus").empty());
  EXPECT_TRUE(j.at("host").at("memory_used_bytes").is_number());
}

TEST(MonitorE2E, AnIntervalOutOfRangeIsAUsageError) {
  CliResult r = run_cli("monitor --interval 0.05 --format json --count 1", stub_env("two_gpus.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpusage: --interval 0.05: accepted values are 0.1 to 3600 seconds\n");
  r = run_cli("monitor --once --log run.txt", stub_env("two_gpus.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--log 'run.txt': cannot tell the format from the extension")) << r.err;
}

TEST(MonitorE2E, StreamsJsonLinesAndCsv) {
  CliResult r = run_cli("monitor --format json --interval 0.1 --count 3", stub_env("two_gpus.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  double previous = 0;
  for (const auto& line : lines) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("gpus").size(), 2u);
    EXPECT_GT(j.at("unix_time_s").get<double>(), previous);
    previous = j.at("unix_time_s").get<double>();
  }
  r = run_cli("monitor --format csv --interval 0.1 --count 2", stub_env("two_gpus.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u + 2 * 2) << r.out;
  EXPECT_TRUE(lines[0].starts_with("time_utc,unix_time_s,gpu,name,uuid,utilization_gpu_percent")) << lines[0];
  EXPECT_TRUE(contains(lines[1], ",0,NVIDIA H100 80GB HBM3,GPU-11111111-2222-3333-4444-555555555555,87,41,")) << lines[1];
}

TEST(MonitorE2E, AlertsFollowTheScriptedTrouble) {
  CliResult r = run_cli("monitor --format json --interval 0.1 --count 6 --idle-alert-after 0.2", stub_env("alerts.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6u);
  auto first = nlohmann::json::parse(lines.front());
  EXPECT_TRUE(first.at("alerts").empty()) << first.at("alerts");  // nothing is sustained or scripted yet
  std::set<std::string> kinds;
  auto last = nlohmann::json::parse(lines.back());
  for (const auto& a : last.at("alerts")) kinds.insert(a.at("kind"));
  EXPECT_EQ(kinds, (std::set<std::string>{"input_bottleneck", "thermal_throttle", "memory_nearly_full", "ecc_errors"}));
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0: utilization 10% for at least 0.2 s while python3 (pid 1) holds "))
      << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0: 2 uncorrected ECC memory errors")) << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0: memory 97% full")) << r.err;
}

TEST(MonitorE2E, GpuHealthAlertsCarryTheXidAndTheMemoryCounters) {
  // gpu_health.json: the A100 reports XIDs 79 and 48 at the second read (the first is the priming one) and its
  // row remapper goes pending at the third; the GeForce card reports none of it.
  CliResult r = run_cli("monitor --format json --interval 0.1 --count 3", stub_env("gpu_health.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u);
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first.at("gpus").at(0).at("xid_events"), nlohmann::json::array({79, 48}));
  std::vector<unsigned> xids;
  for (const auto& a : first.at("alerts"))
    if (a.at("kind") == "xid_error") xids.push_back(a.at("xid").get<unsigned>());
  EXPECT_EQ(xids, (std::vector<unsigned>{79, 48}));
  const auto& geforce = first.at("gpus").at(2);
  EXPECT_TRUE(geforce.at("remapped_rows_pending").is_null());
  EXPECT_TRUE(geforce.at("retired_pages_pending").is_null());
  auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second.at("gpus").at(0).at("remapped_rows_pending"), 1);
  std::set<std::string> kinds;
  for (const auto& a : second.at("alerts")) kinds.insert(a.at("kind"));
  EXPECT_TRUE(kinds.count("remapped_rows")) << second.at("alerts");
  EXPECT_TRUE(kinds.count("retired_pages")) << second.at("alerts");  // the V100 retired a page, pending
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 0 at ")) << r.err;
  EXPECT_TRUE(contains(r.err, ": XID 48 (Double Bit ECC Error): ")) << r.err;
  EXPECT_TRUE(contains(r.err, "gpusage: alert: GPU 1: 2 memory pages retired while gpusage watched")) << r.err;
}

// Each line complete: ends with a newline and has the header's number of fields (no field holds a comma here).
void expect_complete_csv(const std::string& text, std::size_t expected_rows_at_least) {
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "the last line is cut";
  auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 1 + expected_rows_at_least);
  std::size_t columns = text::split(lines[0], ',').size();
  EXPECT_TRUE(lines[0].starts_with("time_utc,"));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(text::split(lines[i], ',').size(), columns) << "line " << i + 1 << ": " << lines[i];
    EXPECT_FALSE(lines[i].starts_with("time_utc,")) << "header repeated at line " << i + 1;
  }
}

TEST(MonitorE2E, TheCsvLogSurvivesAKillAndAppendsWithoutANewHeader) {
  std::string log = temp_file("kill.csv");
  fs::remove(log);
  {
    Background monitor({"--interval", "0.1", "--format", "csv", "--log", log}, "two_gpus.json", "/dev/null",
                       temp_file("kill.err"));
    ASSERT_TRUE(monitor.started());
    ASSERT_TRUE(wait_for([&] { return lines_of(read_text(log)).size() >= 1 + 2 * 5; })) << read_text(log);
    int status = monitor.stop(SIGKILL);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  std::string after_kill = read_text(log);
  expect_complete_csv(after_kill, 2 * 5);
  CliResult r = run_cli("monitor --format json --count 1 --log " + log + " >/dev/null", stub_env("two_gpus.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string appended = read_text(log);
  EXPECT_TRUE(appended.starts_with(after_kill));
  EXPECT_EQ(lines_of(appended).size(), lines_of(after_kill).size() + 2);
  expect_complete_csv(appended, 2 * 5 + 2);
  fs::remove(log);
}

TEST(MonitorE2E, TheJsonLinesLogSurvivesAKill) {
  std::string log = temp_file("kill.jsonl");
  fs::remove(log);
  Background monitor({"--interval", "0.1", "--format", "json", "--log", log}, "two_gpus.json", "/dev/null",
                     temp_file("kill-json.err"));
  ASSERT_TRUE(monitor.started());
  ASSERT_TRUE(wait_for([&] { return lines_of(read_text(log)).size() >= 5; }));
  monitor.stop(SIGKILL);
  std::string text = read_text(log);
  ASSERT_EQ(text.back(), '\n');
  for (const auto& line : lines_of(text)) EXPECT_EQ(nlohmann::json::parse(line).at("gpus").size(), 2u) << line;
  fs::remove(log);
}

TEST(MonitorE2E, PrometheusEndpointServesTheScriptedValues) {
  std::string err = temp_file("prom.err");
  Background monitor({"--prometheus", "127.0.0.1:0", "--format", "json", "--interval", "0.2"}, "two_gpus.json",
                     "/dev/null", err);
  ASSERT_TRUE(monitor.started());
  std::smatch match;
  std::string err_text;
  const std::regex address(R"(metrics at http://127\.0\.0\.1:(\d+)/metrics)");
  ASSERT_TRUE(wait_for([&] {
    err_text = read_text(err);
    return std::regex_search(err_text, match, address);
  })) << err_text;
  int port = std::stoi(match[1]);
  httplib::Client client("127.0.0.1", port);
  std::string body;
  ASSERT_TRUE(wait_for([&] {
    auto response = client.Get("/metrics");
    if (response && response->status == 200) body = response->body;
    return contains(body, "DCGM_FI_DEV_GPU_UTIL{");
  })) << body;
  const std::string h100 = R"({gpu="0",uuid="GPU-11111111-2222-3333-4444-555555555555",name="NVIDIA H100 80GB HBM3"})";
  const std::string rtx = R"({gpu="1",uuid="GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",name="NVIDIA GeForce RTX 4090"})";
  EXPECT_TRUE(contains(body, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"));
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_GPU_UTIL" + h100 + " 87\n")) << body;
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_GPU_UTIL" + rtx + " 3\n")) << body;
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_POWER_USAGE" + h100 + " 512.345\n")) << body;
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_FB_USED" + h100 + " 58368\n")) << body;  // 61203283968 B in MiB
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_GPU_TEMP" + h100 + " 64\n")) << body;
  EXPECT_FALSE(contains(body, "DCGM_FI_DEV_GPU_TEMP" + rtx)) << body;      // failed read: absent, not 0
  EXPECT_FALSE(contains(body, "DCGM_FI_DEV_FAN_SPEED" + h100)) << body;    // no fan: absent
  EXPECT_TRUE(contains(body, "DCGM_FI_DEV_FAN_SPEED" + rtx + " 30\n")) << body;
  int status = monitor.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(MonitorE2E, SimulateReplaysARecordedTrace) {
  std::string trace = temp_file("trace.jsonl");
  CliResult r = run_cli("monitor --format json --interval 0.1 --count 3 > " + trace, stub_env("alerts.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // No NVML at all: the replay is the only source.
  r = run_cli("monitor --simulate " + trace + " --format json --interval 0.1", "GPUSAGE_NVML_LIBRARY=/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recorded = lines_of(read_text(trace));
  auto replayed = lines_of(r.out);
  ASSERT_EQ(replayed.size(), recorded.size());  // stops at the end of the trace
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    auto a = nlohmann::json::parse(recorded[i]), b = nlohmann::json::parse(replayed[i]);
    EXPECT_EQ(a.at("gpus"), b.at("gpus")) << "sample " << i;
    EXPECT_EQ(a.at("host"), b.at("host")) << "sample " << i;
    EXPECT_EQ(b.at("backend"), "replay");
  }
  fs::remove(trace);
}

// ---- the interactive view, in a detached tmux session ----

std::string shell(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    ::pclose(pipe);
  }
  return out;
}

class TmuxSession {
 public:
  TmuxSession() : socket_("gpusage-e2e-" + std::to_string(::getpid())) {}
  ~TmuxSession() { shell(tmux("kill-server") + " 2>/dev/null"); }
  std::string tmux(const std::string& args) const { return "tmux -L " + socket_ + " " + args; }
  std::string pane() const { return shell(tmux("capture-pane -p -t gpusage") + " 2>/dev/null"); }

 private:
  std::string socket_;
};

// Runs the view in a 120x50 pane, waits for it to draw, sends `keys`, and checks it exits 0 with the terminal
// modes (stty -g) as they were before.
void run_interactive_and_quit_with(const std::string& keys) {
  if (shell("tmux -V 2>/dev/null").empty()) GTEST_SKIP() << "tmux is not installed";
  TmuxSession session;
  std::string before = temp_file("stty-before"), after = temp_file("stty-after"), rc = temp_file("rc");
  for (const auto& f : {before, after, rc}) fs::remove(f);
  std::string inner = "stty -g > " + before + "; " + stub_env("two_gpus.json") + " " + GPUSAGE_CLI +
                      " monitor --interval 0.2; echo \\$? > " + rc + "; stty -g > " + after + "; sleep 60";
  shell(session.tmux("new-session -d -s gpusage -x 120 -y 50 \"" + inner + "\""));
  std::string screen;
  ASSERT_TRUE(wait_for([&] {
    screen = session.pane();
    return contains(screen, "gpusage monitor") && contains(screen, "python3");
  })) << screen;
  EXPECT_TRUE(contains(screen, "GPU 0  NVIDIA H100 80GB HBM3")) << screen;
  EXPECT_TRUE(contains(screen, "GPU 1  NVIDIA GeForce RTX 4090")) << screen;
  EXPECT_TRUE(contains(screen, "util  |")) << screen;  // the history rows
  EXPECT_TRUE(contains(screen, "throttle: power cap")) << screen;
  EXPECT_TRUE(contains(screen, "Alerts:")) << screen;
  shell(session.tmux("send-keys -t gpusage " + keys));
  ASSERT_TRUE(wait_for([&] { return !read_text(after).empty(); })) << session.pane();
  EXPECT_EQ(text::trim(read_text(rc)), "0");
  EXPECT_EQ(read_text(before), read_text(after));  // echo, canonical mode … all restored
  EXPECT_FALSE(contains(session.pane(), "GPU 0  NVIDIA H100")) << session.pane();  // back from the alternate screen
  for (const auto& f : {before, after, rc}) fs::remove(f);
}

TEST(MonitorE2E, InteractiveViewQuitsOnQAndRestoresTheTerminal) { run_interactive_and_quit_with("q"); }

TEST(MonitorE2E, InteractiveViewRestoresTheTerminalOnCtrlC) { run_interactive_and_quit_with("C-c"); }

// ---- a full or failing disk under --log (tests/fixtures/write_fault: write(2) fails past a size) ----

struct FaultRun {
  CliResult result;
  std::vector<std::string> log_lines;
  std::string log_text;
};

// `gpusage monitor --format json --count 30 --interval 0.1 --log LOG` on the stub, with LOG's disk holding
// `limit_bytes`; `extra_env` adds variables of the shim.
FaultRun monitor_on_a_full_disk(const std::string& log_name, long limit_bytes, const std::string& extra_env) {
  const std::string log = temp_file(log_name);
  fs::remove(log);
  { std::ofstream create(log); }
  const std::string path = fs::canonical(log).string();  // the shim compares the descriptor's real path
  FaultRun run;
  run.result = run_cli("monitor --format json --count 30 --interval 0.1 --log " + path,
                       stub_env("two_gpus.json") + " LD_PRELOAD=" + std::string(GPUSAGE_WRITE_FAULT) +
                           " GPUSAGE_FAULT_PATH=" + path + " GPUSAGE_FAULT_LIMIT_BYTES=" +
                           std::to_string(limit_bytes) + " " + extra_env);
  run.log_text = read_text(path);
  run.log_lines = lines_of(run.log_text);
  fs::remove(path);
  return run;
}

long count_of(const std::string& text, const std::string& needle) {
  long n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(MonitorE2E, AFullDiskCutsTheLogBackToWholeLinesAndTheMonitorKeepsSampling) {
  // A JSON sample of two_gpus.json is about 1,950 bytes: 5,000 bytes hold two, and the third is cut short.
  FaultRun run = monitor_on_a_full_disk("full.jsonl", 5000, "");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(lines_of(run.result.out).size(), 30u);  // every sample still reached stdout
  EXPECT_EQ(count_of(run.result.err, "gpusage: warning: --log"), 1) << run.result.err;
  EXPECT_TRUE(contains(run.result.err, "write failed (No space left on device)")) << run.result.err;
  ASSERT_EQ(run.log_lines.size(), 2u) << run.log_text;
  EXPECT_TRUE(run.log_text.ends_with("}\n"));
  for (const auto& line : run.log_lines) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
}

TEST(MonitorE2E, AfterAnIoErrorTheLogResumesAtTheRetryTimeWithWholeLines) {
  // CSV: a 498-byte header and rows of about 480 bytes (two GPUs); the disk frees up after one refusal, so
  // the first retry, one second of sample time after the fault, succeeds.
  FaultRun run = monitor_on_a_full_disk("eio.csv", 1700, "GPUSAGE_FAULT_ERRNO=EIO GPUSAGE_FAULT_REFUSALS=1");
  const CliResult& r = run.result;
  const std::vector<std::string>& lines = run.log_lines;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 30u);
  EXPECT_EQ(count_of(r.err, "gpusage: warning: --log"), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "write failed (Input/output error)")) << r.err;
  ASSERT_GE(lines.size(), 6u);
  EXPECT_TRUE(lines[0].starts_with("time_utc,unix_time_s,")) << lines[0];  // the header, once
  // Rows: one per GPU per sample, each with the header's field count; the sample times jump by at least
  // the first backoff (1 s) where the log was down, and by the interval elsewhere.
  const std::size_t fields = text::split(lines[0], ',').size();
  std::vector<double> times;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    ASSERT_EQ(text::split(lines[i], ',').size(), fields) << lines[i];
    EXPECT_FALSE(lines[i].starts_with("time_utc")) << i;
    times.push_back(std::stod(text::split(lines[i], ',')[1]));
  }
  double largest_gap = 0;
  for (std::size_t i = 1; i < times.size(); ++i) largest_gap = std::max(largest_gap, times[i] - times[i - 1]);
  EXPECT_GE(largest_gap, 1.0);
  EXPECT_LT(lines.size(), 1u + 2 * 30u);  // the samples taken while the log was down are not in it
}

}  // namespace
}  // namespace gpusage::testing
