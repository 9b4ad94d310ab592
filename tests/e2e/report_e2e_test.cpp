// gpusage report end to end: the built CLI writes the page from a bench result and a monitor log recorded
// against the scripted NVML, then headless Chromium opens it with the network blocked (web/check-report.mjs)
// and every chart must render without an error. Also: the page's numbers are plan's, --chart FILE.html on
// gpus and plan, and bad inputs leave no file behind.
//
// The browser test needs Debian's chromium and web/node_modules (scripts/install-deps installs both). It
// fails when they are missing, so that CI cannot pass without running it; GPUSAGE_NO_BROWSER=1 skips it on a
// machine that has no browser on purpose.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "e2e/run_cli.hpp"
#include "unit/report/count.hpp"

namespace gpusage::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using report::count;

const std::string kStub = GPUSAGE_NVML_STUB_MODERN;

std::string stub_env(const std::string& script) {
  return "GPUSAGE_NVML_LIBRARY=" + kStub + " GPUSAGE_NVML_STUB_SCRIPT=" + fixture("nvml_stub/" + script);
}

// The JSON inside <script type="application/json" id="spec-ID">.
Json spec_of(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"spec-" + id + "\">";
  const std::size_t start = html.find(open);
  if (start == std::string::npos) return nullptr;
  const std::size_t end = html.find("</script>", start);
  return Json::parse(html.substr(start + open.size(), end - start - open.size()));
}

// A fresh directory per test: "nothing was written" is checked by listing it.
class ReportDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(GPUSAGE_BINARY_DIR) / ("e2e-report-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // gpusage monitor against the scripted A100 that starves, overheats, fills its memory and reports ECC errors.
  std::string record_monitor_log(const std::string& name) const {
    const std::string log = path(name);
    CliResult r = run_cli("monitor --format json --interval 0.1 --count 6 --idle-alert-after 0.2 --log " + log +
                              " >/dev/null",
                          stub_env("alerts.json"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return log;
  }
  fs::path dir_;
};

// Skips on GPUSAGE_NO_BROWSER=1; otherwise a missing browser or node_modules fails the test.
bool browser_skipped() {
  const char* skip = std::getenv("GPUSAGE_NO_BROWSER");
  return skip && std::string(skip) == "1";
}

void require_browser() {
  const char* chromium = std::getenv("GPUSAGE_CHROMIUM");
  const std::string browser = chromium ? chromium : "/usr/bin/chromium";
  ASSERT_TRUE(fs::exists(browser)) << browser << " is missing: run scripts/install-deps (or GPUSAGE_NO_BROWSER=1)";
  ASSERT_TRUE(fs::exists(std::string(GPUSAGE_SOURCE_DIR) + "/web/node_modules/playwright-core"))
      << "web/node_modules is missing: run scripts/install-deps";
}

// web/check-report.mjs on `report`: its JSON result, and its exit status in "exit_status".
Json check_in_browser(const std::string& report, const std::string& screenshot = "", int width = 0) {
  std::string command = "node " + std::string(GPUSAGE_SOURCE_DIR) + "/web/check-report.mjs " + report;
  if (!screenshot.empty()) command += " --screenshot " + screenshot;
  if (width > 0) command += " --width " + std::to_string(width);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return nullptr;
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  Json result = Json::parse(out, nullptr, false);
  if (result.is_discarded()) return {{"unparsed_output", out}, {"exit_status", WEXITSTATUS(status)}};
  result["exit_status"] = WEXITSTATUS(status);
  return result;
}

// A chart's axes whose labels count time as report/time_axis.hpp writes them ("1.5 s", "0:30"), as drawn.
std::vector<std::vector<std::string>> time_axes(const Json& chart) {
  static const std::regex time_label(R"(^[0-9]+(\.[0-9])? s$|^[0-9]+:[0-9][0-9]$)");
  std::vector<std::vector<std::string>> axes;
  for (const auto& axis : chart.at("axes")) {
    const auto labels = axis.get<std::vector<std::string>>();
    if (!labels.empty() && std::regex_match(labels.front(), time_label)) axes.push_back(labels);
  }
  return axes;
}

// Every time axis of every chart reads: three labels or more, all different, none a bare fraction (".900").
void expect_readable_time_axes(const Json& result, std::size_t charts_with_time) {
  std::size_t found = 0;
  for (const auto& chart : result.at("charts_detail")) {
    const auto axes = time_axes(chart);
    found += axes.empty() ? 0 : 1;
    for (const auto& labels : axes) {
      SCOPED_TRACE(chart.at("id").get<std::string>() + ": " + Json(labels).dump());
      EXPECT_GE(labels.size(), 3u);
      EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size());
    }
    for (const auto& axis : chart.at("axes")) {
      for (const auto& label : axis) EXPECT_NE(label.get<std::string>().front(), '.') << chart.at("id");
    }
  }
  EXPECT_EQ(found, charts_with_time) << result.dump(1);
}

// Every table can be scrolled far enough to show its last column, `scrolled` of them are wider than the page
// (and so scroll), and the page itself is no wider than the window.
void expect_tables_scroll(const Json& result, std::size_t scrolled) {
  std::size_t wide = 0;
  for (const auto& table : result.at("tables_detail")) {
    SCOPED_TRACE(table.dump());
    EXPECT_EQ(table.at("overflow_x"), "auto");
    EXPECT_TRUE(table.at("last_column_reachable").get<bool>());
    wide += table.at("scrolled").get<int>() > 0 ? 1 : 0;
  }
  EXPECT_GE(wide, scrolled) << result.at("tables_detail").dump(1);
  EXPECT_FALSE(result.at("page_wider_than_window").get<bool>());
}

void expect_one_line_error(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpusage: " + message + "\n");
}

TEST_F(ReportDir, EveryChartRendersInHeadlessChromiumWithoutErrorsOrNetwork) {
  if (browser_skipped()) GTEST_SKIP() << "GPUSAGE_NO_BROWSER=1: no browser on this machine";
  require_browser();
  if (HasFatalFailure()) return;

  const std::string log = record_monitor_log("run.jsonl");
  const std::string report = path("report.html");
  CliResult r = run_cli("report --bench " + fixture("report/bench-rtx5090.json") + " --monitor-log " + log +
                        " --out " + report + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_EQ(summary.at("charts"), 8);  // 3 GPU comparison, 3 training, 1 bench, 1 monitor
  ASSERT_EQ(summary.at("sections").size(), 4u);
  EXPECT_EQ(summary["sections"][2]["id"], "bench");
  EXPECT_EQ(summary["sections"][3]["id"], "monitor");
  EXPECT_EQ(summary.at("bytes"), fs::file_size(report));

  // The screenshot lands in the build directory, where a person can look at it after the run.
  const std::string screenshot = std::string(GPUSAGE_BINARY_DIR) + "/report-e2e.png";
  fs::remove(screenshot);
  const Json result = check_in_browser(report, screenshot);
  ASSERT_TRUE(result.is_object() && !result.contains("unparsed_output")) << result.dump();
  const std::string out = result.dump(1);
  EXPECT_EQ(result.at("state"), "done") << out;
  EXPECT_EQ(result.at("charts"), 8) << out;
  EXPECT_EQ(result.at("rendered"), 8) << out;
  EXPECT_EQ(result.at("console_errors"), Json::array()) << out;
  EXPECT_EQ(result.at("page_errors"), Json::array()) << out;
  EXPECT_EQ(result.at("chart_errors"), Json::array()) << out;
  EXPECT_EQ(result.at("blocked_requests"), Json::array()) << "the page must load nothing: " << out;
  ASSERT_EQ(result.at("charts_detail").size(), 8u);
  for (const auto& chart : result["charts_detail"]) {
    SCOPED_TRACE(chart.dump());
    EXPECT_TRUE(chart.at("svg").get<bool>());
    EXPECT_GT(chart.at("width").get<int>(), 100);
    EXPECT_GT(chart.at("height").get<int>(), 100);
    EXPECT_GT(chart.at("marks").get<int>(), 0);
    EXPECT_FALSE(chart.at("title").get<std::string>().empty());
    EXPECT_GT(chart.at("axis_titles").get<int>(), 0);
    EXPECT_GT(chart.at("legends").get<int>(), 0);
  }
  EXPECT_THAT(result.at("tooltip").get<std::string>(), HasSubstr("GeForce RTX 5090"));
  expect_readable_time_axes(result, 1);  // the monitor log's panels
  expect_tables_scroll(result, 0);
  EXPECT_TRUE(result.at("ok").get<bool>()) << out;
  EXPECT_EQ(result.at("exit_status"), 0) << out;
  ASSERT_TRUE(fs::exists(screenshot));
  EXPECT_GT(fs::file_size(screenshot), 50'000u);
}

// Issue 50: the run report's time axis read ".900 .900 .900", and wide tables were cut at the page's right edge.
// A run under the NVML stub, its page opened in a window 900 pixels wide: the time axes read as time since the
// start, the findings table scrolls to its last column. The screenshot stays in the build directory.
TEST_F(ReportDir, TheRunReportsTimeAxesReadAndItsWideTablesScroll) {
  if (browser_skipped()) GTEST_SKIP() << "GPUSAGE_NO_BROWSER=1: no browser on this machine";
  require_browser();
  if (HasFatalFailure()) return;
  const std::string dir = path("run");
  CliResult r = run_cli("run --log-dir " + dir + " --interval 0.2 -- sh " + fixture("run/steady_rate.sh") + " " + dir,
                        "GPUSAGE_NVML_LIBRARY=" + kStub + " GPUSAGE_NVML_STUB_SCRIPT=" + fixture("run/gpu_starved.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string screenshot = std::string(GPUSAGE_BINARY_DIR) + "/report-e2e-run.png";
  const Json result = check_in_browser(dir + "/report.html", screenshot, 900);
  ASSERT_TRUE(result.is_object() && !result.contains("unparsed_output")) << result.dump();
  EXPECT_EQ(result.at("state"), "done") << result.dump(1);
  expect_readable_time_axes(result, 2);  // the monitor log's panels and throughput against utilization
  expect_tables_scroll(result, 1);       // the findings table, at 900 pixels
  EXPECT_TRUE(fs::exists(screenshot));
}

TEST_F(ReportDir, TheCostTablesScrollInANarrowWindow) {
  if (browser_skipped()) GTEST_SKIP() << "GPUSAGE_NO_BROWSER=1: no browser on this machine";
  require_browser();
  if (HasFatalFailure()) return;
  CliResult r = run_cli("report --gpu rtx5090,rtx4090,h100-sxm5-80gb --model llama3.1-8b --qlora --seq-len 2048 "
                        "--precision bf16 --cost --tokens 1e9 --out " + path("cost.html"),
                        "GPUSAGE_TODAY=2026-12-05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = read_text(path("cost.html"));
  EXPECT_THAT(page, HasSubstr("id=\"table-buy-or-rent\""));
  const Json result = check_in_browser(path("cost.html"), "", 900);
  ASSERT_TRUE(result.is_object() && !result.contains("unparsed_output")) << result.dump();
  EXPECT_EQ(result.at("tables_detail").size(), 4u) << result.dump(1);  // cards, training, cost, buy or rent
  expect_tables_scroll(result, 3);
  EXPECT_TRUE(result.at("ok").get<bool>()) << result.dump(1);
}

// The browser check itself can fail: a page that fetches something, or a chart whose spec is broken.
TEST_F(ReportDir, TheBrowserCheckCatchesANetworkRequestAndABrokenChart) {
  if (browser_skipped()) GTEST_SKIP() << "GPUSAGE_NO_BROWSER=1: no browser on this machine";
  require_browser();
  if (HasFatalFailure()) return;
  CliResult r = run_cli("gpus --gpu rtx5090,rtx4090 --chart " + path("gpus.html"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_text(path("gpus.html"));
  const std::string mark = "\"mark\":{\"type\":\"bar\"}";  // the tensor chart's bars
  ASSERT_EQ(count(html, mark), 1u);
  html.replace(html.find(mark), mark.size(), "\"mark\":{\"type\":\"no-such-mark\"}");
  html.replace(html.find("<nav>"), 5, "<nav><img src=\"https://example.invalid/tracker.png\" alt=\"\">");
  std::ofstream(path("broken.html")) << html;
  const Json result = check_in_browser(path("broken.html"));
  ASSERT_TRUE(result.is_object() && !result.contains("unparsed_output")) << result.dump();
  EXPECT_FALSE(result.at("ok").get<bool>());
  EXPECT_EQ(result.at("exit_status"), 1);
  EXPECT_EQ(result.at("state"), "failed");
  EXPECT_EQ(result.at("rendered"), 2);
  ASSERT_EQ(result.at("chart_errors").size(), 1u);
  EXPECT_THAT(result["chart_errors"][0].get<std::string>(), HasSubstr("chart-gpu-tensor: "));
  EXPECT_EQ(result.at("blocked_requests"), Json::array({"https://example.invalid/tracker.png"}));
}

TEST_F(ReportDir, ThroughputAndVramInThePageAreWhatPlanAndTheCatalogSay) {
  const std::string report = path("r.html");
  CliResult r = run_cli("report --gpu rtx5090,rtx5070ti --batch 32,64,4096 --precision bf16 --out " + report);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Wrote " + report + " (6 charts in 2 sections, "));
  CliResult plan = run_cli("plan resnet50 --gpu rtx5090,rtx5070ti --batch 32,64,4096 --precision bf16 --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string html = read_text(report);

  const Json throughput = spec_of(html, "train-throughput");
  ASSERT_TRUE(throughput.is_object());
  const Json& points = throughput.at("data").at("values");
  std::size_t fitting = 0;
  const Json predicted = Json::parse(plan.out);
  for (const auto& p : predicted.at("results")) {
    if (!p.at("fits").get<bool>()) continue;
    ++fitting;
    bool found = false;
    for (const auto& point : points) {
      if (point.at("gpu") == p.at("gpu_name") && point.at("batch") == p.at("batch")) {
        EXPECT_DOUBLE_EQ(point.at("throughput").get<double>(), p.at("throughput").get<double>());
        found = true;
      }
    }
    EXPECT_TRUE(found) << p.dump();
  }
  EXPECT_EQ(points.size(), fitting);
  EXPECT_EQ(fitting, 4u);  // batch 4096 fits neither card

  CliResult gpus = run_cli("gpus --gpu rtx5090,rtx5070ti --format json");
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  std::map<std::string, double> catalog_vram, rule_vram;
  const Json listed = Json::parse(gpus.out);
  for (const auto& g : listed) catalog_vram[g.at("name")] = g.at("memory_gb").get<double>();
  const Json memory = spec_of(html, "train-memory");
  for (const auto& layer : memory.at("layer")) {
    if (!layer.contains("data")) continue;
    for (const auto& row : layer["data"]["values"]) {
      if (row.contains("gpu") && row.contains("vram_gib")) rule_vram[row["gpu"]] = row["vram_gib"].get<double>();
    }
  }
  EXPECT_EQ(rule_vram, catalog_vram);
  EXPECT_THAT(html, HasSubstr("gpusage report --model resnet50 --precision bf16 --batch 32,64,4096 --gpu rtx5090,rtx5070ti"));
}

TEST_F(ReportDir, ACsvLogGetsTheMonitorsAlertRulesAgain) {
  const std::string log = record_monitor_log("run.csv");
  const std::string report = path("r.html");
  CliResult r = run_cli("report --gpu rtx5090 --batch 64 --monitor-log " + log + " --out " + report + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(report);
  EXPECT_THAT(html, HasSubstr("a CSV log records none, so these are gpusage monitor&apos;s rules evaluated again"));
  const Json timeline = spec_of(html, "monitor-timeline");
  std::set<std::string> kinds;
  for (const auto& panel : timeline.at("vconcat")) {
    for (const auto& layer : panel.at("layer")) {
      if (!layer.contains("data")) continue;
      for (const auto& mark : layer["data"]["values"]) kinds.insert(mark.at("kind"));
    }
  }
  // The scripted A100 overheats, fills its memory and reports uncorrected ECC errors within the six samples;
  // the input bottleneck needs 30 s of starving at the default threshold, longer than this log.
  EXPECT_EQ(kinds, (std::set<std::string>{"thermal_throttle", "memory_nearly_full", "ecc_errors"}));
  std::size_t utilization = 0;
  for (const auto& row : timeline.at("data").at("values")) utilization += row.at("metric") == "utilization";
  EXPECT_EQ(utilization, 6u);
}

TEST_F(ReportDir, GpusAndPlanWriteTheirChartsAsAPage) {
  CliResult g = run_cli("gpus --gpu rtx5090,rtx4090 --chart " + path("gpus.html"));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_THAT(g.err, HasSubstr("gpusage: Wrote " + path("gpus.html") + " (3 charts in 1 section, "));
  const std::string gpus_html = read_text(path("gpus.html"));
  EXPECT_EQ(count(gpus_html, "<div class=\"vega-chart\""), 3u);
  EXPECT_THAT(gpus_html, HasSubstr("<td class=\"text\">GeForce RTX 4090</td>"));

  CliResult p = run_cli("plan resnet50 --gpu rtx5090 --batch 64,128 --chart " + path("plan.html"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("ResNet-50"));  // the table still goes to stdout
  EXPECT_THAT(p.err, HasSubstr("gpusage: Wrote " + path("plan.html") + " (3 charts in 1 section, "));
  EXPECT_EQ(count(read_text(path("plan.html")), "<div class=\"vega-chart\""), 3u);

  expect_one_line_error(run_cli("plan resnet50 --chart " + path("plan.svg")),
                        "--chart: '" + path("plan.svg") + "' has an unsupported extension; accepted: .html");
}

TEST_F(ReportDir, BadInputsAreOneLineErrorsAndLeaveNoFile) {
  expect_one_line_error(run_cli("report --out " + path("r.png")),
                        "--out: '" + path("r.png") + "' has an unsupported extension; accepted: .html");
  const std::string broken = path("broken.json");
  std::ofstream(broken) << "{ not json";
  CliResult r = run_cli("report --bench " + broken + " --out " + path("r.html"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("gpusage: --bench '" + broken + "': not valid JSON"));
  const std::string text = path("notes.txt");
  std::ofstream(text) << "hello\n";
  expect_one_line_error(run_cli("report --monitor-log " + text + " --out " + path("r.html")),
                        "--monitor-log '" + text + "' is not a gpusage monitor log (expected the CSV or JSON Lines "
                        "that `gpusage monitor --log FILE.csv|FILE.jsonl` writes)");
  expect_one_line_error(run_cli("report --family rtx60 --out " + path("r.html")),
                        "--family: 'rtx60' is not one of rtx50, rtx40, rtx30, rtx20, gtx, laptop, datacenter, workstation, china, all");
  EXPECT_EQ(files(), (std::vector<std::string>{"broken.json", "notes.txt"})) << "no page, no temporary file";
}

TEST_F(ReportDir, ACpuBenchRunIsShownWithoutAPrediction) {
  Json bench = Json::parse(read_text(fixture("report/bench-rtx5090.json")));
  bench["environment"]["device"] = "cpu";
  bench["environment"]["device_name"] = "AMD EPYC 7B13";
  const std::string file = path("cpu.json");
  std::ofstream(file) << bench.dump();
  CliResult r = run_cli("report --gpu rtx5090 --batch 64 --bench " + file + " --out " + path("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(path("r.html"));
  EXPECT_THAT(html, HasSubstr("AMD EPYC 7B13 · ResNet-50 fp16 (" + file +
                              "): no prediction for a CPU run: plan models NVIDIA GPUs from the catalog"));
  const Json bars = spec_of(html, "bench-vs-plan");
  ASSERT_FALSE(bars.at("data").at("values").empty());
  for (const auto& row : bars.at("data").at("values")) EXPECT_EQ(row.at("series"), "measured");
}

}  // namespace
}  // namespace gpusage::testing
