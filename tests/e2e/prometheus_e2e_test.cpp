// A real Prometheus (Debian's `prometheus`, on loopback) scrapes two `gpusage monitor --prometheus`
// processes driven by the scripted NVML library; the series it stores must carry the stub's values, and
// every query of deploy/grafana/gpusage-dashboard.json must name only what gpusage exports and be
// accepted (and answered) by that Prometheus. deploy/prometheus/prometheus.yml must pass promtool.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "e2e/process.hpp"
#include "e2e/run_cli.hpp"

namespace gpusage::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Polls `ready` every 100 ms for up to `limit_s` seconds: a generous bound on a loaded machine, not a
// timing assertion (the condition is what is checked).
bool eventually(const std::function<bool()>& ready, double limit_s = 60) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ready();
}

// A loopback port nobody listens on now (the kernel's choice for port 0); Prometheus cannot be told to
// pick one itself and report it.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

int exit_code_of(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The metric and label names a PromQL expression refers to. Function and aggregation names (followed by
// a parenthesis), keywords, numbers, strings and range durations are skipped.
struct Names {
  std::set<std::string> metrics, labels;
};

Names promql_names(const std::string& expr) {
  // Keywords, and the aggregation operators (which may be followed by `by (...)` rather than a parenthesis).
  static const std::set<std::string> keywords = {"bool",  "and",    "or",     "unless", "offset",       "inf",
                                                 "nan",   "sum",    "min",    "max",    "avg",          "group",
                                                 "count", "stddev", "stdvar", "topk",   "bottomk",      "quantile",
                                                 "count_values"};
  static const std::set<std::string> label_lists = {"by", "without", "on", "ignoring", "group_left", "group_right"};
  auto ident_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  auto ident_char = [&](char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); };
  Names names;
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < expr.size() && std::isspace(static_cast<unsigned char>(expr[i]))) ++i;
  };
  auto read_ident = [&] {
    std::size_t start = i;
    while (i < expr.size() && ident_char(expr[i])) ++i;
    return expr.substr(start, i - start);
  };
  auto skip_string = [&] {
    char quote = expr[i++];
    while (i < expr.size() && expr[i] != quote) i += expr[i] == '\\' ? 2 : 1;
    ++i;
  };
  while (i < expr.size()) {
    char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      skip_string();
    } else if (c == '[') {
      while (i < expr.size() && expr[i] != ']') ++i;
    } else if (c == '{') {  // matchers: label op "value", ...
      ++i;
      while (i < expr.size() && expr[i] != '}') {
        if (expr[i] == '"' || expr[i] == '\'' || expr[i] == '`')
          skip_string();
        else if (ident_start(expr[i]))
          names.labels.insert(read_ident());
        else
          ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '.')) ++i;
    } else if (ident_start(c)) {
      std::string word = read_ident();
      skip_space();
      if (label_lists.count(word) && i < expr.size() && expr[i] == '(') {
        ++i;
        while (i < expr.size() && expr[i] != ')') {
          if (ident_start(expr[i]))
            names.labels.insert(read_ident());
          else
            ++i;
        }
      } else if ((i < expr.size() && expr[i] == '(') || keywords.count(word) || label_lists.count(word)) {
        // a function, an aggregation or a keyword
      } else {
        names.metrics.insert(word);
      }
      continue;
    } else {
      ++i;
    }
  }
  return names;
}

TEST(PromqlNames, FindsMetricsAndLabelsButNotFunctionsOrStrings) {
  Names n = promql_names(R"(max by (instance, gpu) (rate(DCGM_FI_DEV_GPU_UTIL{gpu=~"0|1", name!="a b"}[5m])) > 0)"
                         R"( and on(uuid) gpusage_alert_active == bool 1)");
  EXPECT_EQ(n.metrics, (std::set<std::string>{"DCGM_FI_DEV_GPU_UTIL", "gpusage_alert_active"}));
  EXPECT_EQ(n.labels, (std::set<std::string>{"instance", "gpu", "name", "uuid"}));
}

// Names and labels of the series in a Prometheus text exposition.
void exposition_names(const std::string& body, std::set<std::string>& metrics, std::set<std::string>& labels) {
  static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::size_t end = line.find_first_of("{ ");
    metrics.insert(line.substr(0, end));
    if (end != std::string::npos && line[end] == '{') {
      std::string matchers = line.substr(end, line.find('}') - end);
      for (std::sregex_iterator m(matchers.begin(), matchers.end(), label), stop; m != stop; ++m)
        labels.insert((*m)[1]);
    }
  }
}

class PrometheusScrape : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(GPUSAGE_PROMETHEUS)) << "prometheus is not installed: run scripts/install-deps --test";
    dir_ = fs::path(GPUSAGE_BINARY_DIR) / ("e2e-prometheus-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    start_monitor("two_gpus.json");
    start_monitor("alerts.json");
    ASSERT_EQ(monitor_ports_.size(), 2u);

    prometheus_port_ = free_port();
    ASSERT_GT(prometheus_port_, 0);
    std::ofstream config(dir_ / "prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: gpusage\n"
              "    static_configs:\n"
           << "      - targets: ['127.0.0.1:" << monitor_ports_[0] << "']\n        labels: {script: two_gpus}\n"
           << "      - targets: ['127.0.0.1:" << monitor_ports_[1] << "']\n        labels: {script: alerts}\n";
    config.close();
    ASSERT_EQ(exit_code_of(std::string(GPUSAGE_PROMTOOL) + " check config " + (dir_ / "prometheus.yml").string() +
                           " >/dev/null 2>&1"),
              0);
    prometheus_ = std::make_unique<Process>(
        std::vector<std::string>{GPUSAGE_PROMETHEUS, "--config.file=" + (dir_ / "prometheus.yml").string(),
                                 "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_),
                                 "--log.level=warn"},
        std::vector<std::string>{}, (dir_ / "prometheus.out").string(), (dir_ / "prometheus.err").string());
    ASSERT_TRUE(prometheus_->started());
  }

  void TearDown() override {
    if (prometheus_) prometheus_->stop(SIGTERM);
    for (auto& m : monitors_) m->stop(SIGTERM);
    if (!HasFailure()) fs::remove_all(dir_);
  }

  void start_monitor(const std::string& script) {
    std::string err = (dir_ / (script + ".err")).string();
    monitors_.push_back(std::make_unique<Process>(
        std::vector<std::string>{GPUSAGE_CLI, "monitor", "--prometheus", "127.0.0.1:0", "--format", "json",
                                 "--interval", "0.2"},
        std::vector<std::string>{std::string("GPUSAGE_NVML_LIBRARY=") + GPUSAGE_NVML_STUB_MODERN,
                                 "GPUSAGE_NVML_STUB_SCRIPT=" + fixture("nvml_stub/" + script)},
        "/dev/null", err));
    ASSERT_TRUE(monitors_.back()->started());
    static const std::regex address(R"(metrics at http://127\.0\.0\.1:(\d+)/metrics)");
    std::smatch match;
    std::string text;
    ASSERT_TRUE(eventually([&] {
      text = read_text(err);
      return std::regex_search(text, match, address);
    })) << text;
    monitor_ports_.push_back(std::stoi(match[1]));
  }

  // An instant query against the Prometheus under test; null when it did not answer.
  json query(const std::string& promql) {
    httplib::Client client("127.0.0.1", prometheus_port_);
    client.set_read_timeout(10, 0);
    auto response = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!response) return nullptr;
    return json::parse(response->body, nullptr, false);
  }

  // The series `promql` selects now, by the value of their `gpu` label.
  std::map<std::string, double> by_gpu(const std::string& promql) {
    std::map<std::string, double> out;
    json answer = query(promql);
    if (answer.is_object() && answer.value("status", "") == "success")
      for (const auto& series : answer["data"]["result"])
        out[series["metric"].value("gpu", "")] = std::stod(series["value"][1].get<std::string>());
    return out;
  }

  fs::path dir_;
  std::vector<std::unique_ptr<Process>> monitors_;
  std::vector<int> monitor_ports_;
  std::unique_ptr<Process> prometheus_;
  int prometheus_port_ = -1;
};

TEST_F(PrometheusScrape, StoresTheStubsUtilizationMemoryPowerAndTemperature) {
  const std::string two_gpus = R"({job="gpusage",script="two_gpus"})";
  ASSERT_TRUE(eventually([&] { return by_gpu("DCGM_FI_DEV_GPU_UTIL" + two_gpus).size() == 2; }))
      << read_text((dir_ / "prometheus.err").string()) << query("up").dump();
  // tests/fixtures/nvml_stub/two_gpus.json: GPU 0 an H100, GPU 1 an RTX 4090.
  EXPECT_EQ(by_gpu("DCGM_FI_DEV_GPU_UTIL" + two_gpus), (std::map<std::string, double>{{"0", 87}, {"1", 3}}));
  // Memory in MiB as dcgm-exporter has it: 61203283968 B and 1073741824 B.
  EXPECT_EQ(by_gpu("DCGM_FI_DEV_FB_USED" + two_gpus), (std::map<std::string, double>{{"0", 58368}, {"1", 1024}}));
  // 512345 mW and 35123 mW.
  EXPECT_EQ(by_gpu("DCGM_FI_DEV_POWER_USAGE" + two_gpus),
            (std::map<std::string, double>{{"0", 512.345}, {"1", 35.123}}));
  // 64 °C on GPU 0; the stub fails GPU 1's temperature read, so Prometheus has no series for it (not a 0).
  EXPECT_EQ(by_gpu("DCGM_FI_DEV_GPU_TEMP" + two_gpus), (std::map<std::string, double>{{"0", 64}}));
  // The labels carry the GPU's identity, so a dashboard can tell a fleet's GPUs apart.
  json answer = query("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",script=\"two_gpus\"}");
  ASSERT_EQ(answer["data"]["result"].size(), 1u) << answer.dump();
  EXPECT_EQ(answer["data"]["result"][0]["metric"]["uuid"], "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(answer["data"]["result"][0]["metric"]["name"], "NVIDIA H100 80GB HBM3");
}

// Every expression of the dashboard: its panels' targets, its annotations and its variables' queries.
std::vector<std::string> dashboard_expressions(const json& dashboard) {
  std::vector<std::string> out;
  for (const auto& panel : dashboard.at("panels"))
    for (const auto& target : panel.value("targets", json::array())) out.push_back(target.at("expr"));
  for (const auto& annotation : dashboard.at("annotations").at("list"))
    if (annotation.contains("expr")) out.push_back(annotation.at("expr"));
  return out;
}

TEST_F(PrometheusScrape, TheGrafanaDashboardQueriesOnlyWhatGpusageExportsAndPrometheusAnswersThem) {
  std::ifstream file(std::string(GPUSAGE_SOURCE_DIR) + "/deploy/grafana/gpusage-dashboard.json");
  const json dashboard = json::parse(file);
  const std::vector<std::string> expressions = dashboard_expressions(dashboard);
  ASSERT_GE(expressions.size(), 7u);

  // What gpusage exports: both monitors' /metrics once the alerts script holds its alerts.
  std::set<std::string> metrics, labels = {"instance", "job"};  // the two Prometheus adds to every series
  ASSERT_TRUE(eventually([&] {
    httplib::Client client("127.0.0.1", monitor_ports_[1]);
    auto response = client.Get("/metrics");
    return response && response->body.find("gpusage_alert_active{") != std::string::npos;
  }));
  for (int port : monitor_ports_) {
    httplib::Client client("127.0.0.1", port);
    auto response = client.Get("/metrics");
    ASSERT_TRUE(response && response->status == 200);
    exposition_names(response->body, metrics, labels);
  }
  ASSERT_TRUE(metrics.count("DCGM_FI_DEV_GPU_UTIL") && labels.count("reason") && labels.count("kind"));

  // The `instance` variable's query is Grafana's label_values(METRIC, LABEL).
  static const std::regex label_values(R"(label_values\((\w+), *(\w+)\))");
  for (const auto& variable : dashboard.at("templating").at("list")) {
    if (variable.at("type") != "query") continue;
    std::string definition = variable.at("definition");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(definition, m, label_values)) << definition;
    EXPECT_TRUE(metrics.count(m[1])) << definition;
    EXPECT_TRUE(labels.count(m[2])) << definition;
  }

  // All samples scraped at least once from both monitors, alerts included, before the queries run.
  ASSERT_TRUE(eventually([&] { return !by_gpu("gpusage_alert_active").empty(); }))
      << read_text((dir_ / "prometheus.err").string());
  for (std::string expr : expressions) {
    // Grafana's $instance variable with "All" selected.
    expr = std::regex_replace(expr, std::regex(R"(\$instance)"), ".+");
    Names names = promql_names(expr);
    EXPECT_FALSE(names.metrics.empty()) << expr;
    for (const auto& m : names.metrics) EXPECT_TRUE(metrics.count(m)) << m << " is not exported, in: " << expr;
    for (const auto& l : names.labels) EXPECT_TRUE(labels.count(l)) << l << " is not a label, in: " << expr;
    json answer = query(expr);
    ASSERT_TRUE(answer.is_object()) << expr;
    EXPECT_EQ(answer.value("status", ""), "success") << expr << ": " << answer.dump();
    EXPECT_FALSE(answer["data"]["result"].empty()) << "no series for " << expr;
  }
}

TEST(PrometheusConfig, TheShippedFleetConfigPassesPromtool) {
  ASSERT_TRUE(fs::exists(GPUSAGE_PROMTOOL)) << "promtool is not installed: run scripts/install-deps --test";
  EXPECT_EQ(exit_code_of(std::string(GPUSAGE_PROMTOOL) + " check config " + GPUSAGE_SOURCE_DIR +
                         "/deploy/prometheus/prometheus.yml"),
            0);
}

}  // namespace
}  // namespace gpusage::testing
