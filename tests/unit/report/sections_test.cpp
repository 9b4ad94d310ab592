// The report's sections: each chart's data are the catalog's, the planner's, the bench file's or the
// monitor log's values; every chart has a title, titled axes and tooltips.
#include "report/sections.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "core/catalog/catalog.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"
#include "gpusage/build_info.hpp"

namespace gpusage::report {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const catalog::Catalog& mini() {
  static const catalog::Catalog catalog =
      catalog::Catalog::load(std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/catalog/mini.toml");
  return catalog;
}

std::vector<const catalog::Gpu*> two_gpus() { return {mini().find("rtx5090"), mini().find("rtx5070ti")}; }

// The section as the CLI builds it: unpublished tensor rates completed by the planner's rule first.
Section gpu_section(const std::vector<const catalog::Gpu*>& gpus, const catalog::Catalog& catalog, Table table) {
  std::vector<catalog::Gpu> with_rates;
  for (const catalog::Gpu* gpu : gpus) with_rates.push_back(estimate::complete_tensor_rates(*gpu, catalog).gpu);
  return gpu_comparison_section(gpus, with_rates, "test", catalog.origin(), std::move(table));
}

const Chart& chart(const Section& section, const std::string& id) {
  for (const auto& item : section.items) {
    if (const auto* c = std::get_if<Chart>(&item); c && c->id == id) return *c;
  }
  throw std::runtime_error("no chart " + id);
}

const PageTable& table(const Section& section, const std::string& id) {
  for (const auto& item : section.items) {
    if (const auto* t = std::get_if<PageTable>(&item); t && t->id == id) return *t;
  }
  throw std::runtime_error("no table " + id);
}

// Every object in the spec, depth first.
void walk(const Json& j, const std::function<void(const Json&)>& visit) {
  if (j.is_object()) {
    visit(j);
    for (const auto& [key, value] : j.items()) walk(value, visit);
  } else if (j.is_array()) {
    for (const auto& value : j) walk(value, visit);
  }
}

// The data rows of a spec or of one of its layers whose rows carry `key`.
std::vector<Json> rows_with(const Json& spec, const std::string& key) {
  std::vector<Json> rows;
  walk(spec, [&](const Json& j) {
    if (j.contains("values") && j["values"].is_array()) {
      for (const auto& row : j["values"]) {
        if (row.is_object() && row.contains(key)) rows.push_back(row);
      }
    }
  });
  return rows;
}

std::vector<estimate::Prediction> sweep(const std::vector<const catalog::Gpu*>& gpus, const std::vector<int>& batches) {
  const workload::Workload w = workload::build("resnet50");
  std::vector<estimate::Prediction> out;
  for (const catalog::Gpu* gpu : gpus) {
    for (int batch : batches) {
      estimate::TrainingConfig config;
      config.batch_per_gpu = batch;
      config.precision = catalog::Precision::fp16;
      out.push_back(estimate::predict(w, config, *gpu));
    }
  }
  return out;
}

// Title on the chart; a title on every positional axis except the GPU-name axis (its labels are the names);
// tooltips somewhere.
void expect_readable(const Chart& c) {
  SCOPED_TRACE(c.id);
  EXPECT_FALSE(c.spec.at("title").at("text").get<std::string>().empty());
  EXPECT_EQ(c.spec.at("$schema"), "https://vega.github.io/schema/vega-lite/v6.json");
  bool tooltip = false;
  walk(c.spec, [&](const Json& j) {
    if (j.contains("tooltip")) tooltip = true;
    for (const char* channel : {"x", "y"}) {
      if (!j.contains(channel) || !j[channel].is_object() || !j[channel].contains("field")) continue;
      if (j[channel]["field"] == "gpu") continue;
      EXPECT_TRUE(j[channel].contains("title") && j[channel]["title"].is_string())
          << channel << ": " << j[channel].dump();
    }
  });
  EXPECT_TRUE(tooltip);
}

TEST(GpuComparisonSection, SpecsChartHoldsTheCatalogFigures) {
  const Section s = gpu_section(two_gpus(), mini(), Table{});
  const auto rows = rows_with(chart(s, "gpu-specs").spec, "metric");
  auto value = [&](const std::string& gpu, const std::string& metric) {
    for (const auto& r : rows) {
      if (r["gpu"] == gpu && r["metric"] == metric) return r["value"].get<double>();
    }
    return -1.0;
  };
  EXPECT_EQ(value("GeForce RTX 5090", "cuda_cores"), 21760);
  EXPECT_EQ(value("GeForce RTX 5090", "memory_gb"), 32);
  EXPECT_EQ(value("GeForce RTX 5070 Ti", "memory_bandwidth_gbs"), 896);
  EXPECT_EQ(value("GeForce RTX 5070 Ti", "tdp_w"), 300);
  EXPECT_EQ(value("GeForce RTX 5070 Ti", "msrp_usd"), 749);
}

TEST(GpuComparisonSection, TensorChartHasOneBarPerPublishedPrecision) {
  const Section s = gpu_section(two_gpus(), mini(), Table{});
  const auto rows = rows_with(chart(s, "gpu-tensor").spec, "precision");
  // RTX 5090: TF32, FP16, BF16, FP8 in mini.toml; RTX 5070 Ti: TF32, FP16, BF16 (no FP8, no FP4 there).
  EXPECT_EQ(rows.size(), 7u);
  for (const auto& r : rows) {
    if (r["gpu"] == "GeForce RTX 5090" && r["precision"] == "FP8 tensor") {
      EXPECT_EQ(r["tflops"], 419);
    }
  }
}

TEST(GpuComparisonSection, PricePerformanceIsFp16TflopsPerThousandDollars) {
  const Section s = gpu_section(two_gpus(), mini(), Table{});
  const auto rows = rows_with(chart(s, "gpu-value").spec, "tflops_per_kusd");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0]["tflops_per_kusd"].get<double>(), 209.5 / 1999 * 1000);
  EXPECT_EQ(rows[0]["vram_gb"], 32);
}

// Two Ampere GeForce cards: "sibling" with a published FP16 rate, "bare" with none and no AI TOPS.
std::string ampere_card(const std::string& id, const std::string& extra) {
  return "\n[[gpu]]\nid = \"" + id + "\"\nname = \"" + id +
         "\"\nfamily = \"rtx30\"\narchitecture = \"Ampere\"\nchip = \"GA102\"\ncompute_capability = \"8.6\"\n"
         "sm_count = 82\ncuda_cores = 10496\nboost_clock_mhz = 1695\nmemory_gb = 24\nmemory_type = \"GDDR6X\"\n"
         "memory_bus_bits = 384\nmemory_bandwidth_gbs = 936\ntdp_w = 350\nfp32_tflops = 35.6\nmsrp_usd = 1000\n"
         "launch_date = \"2020-09\"\nsources = [ { title = \"t\", url = \"https://example.invalid/t\" } ]\n" + extra;
}

TEST(GpuComparisonSection, AnUnpublishedFp16RateIsDerivedOrModelledAndSaysWhich) {
  // The built-in catalog: the RTX 5090's FP16 is published, the RTX 5060's derived from its 614 AI TOPS.
  const catalog::Catalog& builtin = catalog::Catalog::builtin();
  const catalog::Gpu* rtx5060 = builtin.find("rtx5060");
  ASSERT_NE(rtx5060, nullptr);
  const Section s = gpu_section({builtin.find("rtx5090"), rtx5060}, builtin, Table{});
  const auto rows = rows_with(chart(s, "gpu-value").spec, "figure");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["figure"], "published");
  EXPECT_EQ(rows[1]["figure"], "derived (AI TOPS x whitepaper ratio)");
  EXPECT_DOUBLE_EQ(rows[1]["fp16_tflops"].get<double>(), 614.0 / 16);
  // A card with neither gets the planner's model from its sibling.
  const catalog::Catalog two = catalog::Catalog::parse(
      "schema_version = 1\n" + ampere_card("sibling", "fp16_tflops = 71.2\n") + ampere_card("bare", ""), "two.toml");
  const catalog::Gpu* bare = two.find("bare");
  const Section m = gpu_section({two.find("sibling"), bare}, two, Table{});
  const auto modelled_rows = rows_with(chart(m, "gpu-value").spec, "figure");
  ASSERT_EQ(modelled_rows.size(), 2u);
  EXPECT_EQ(modelled_rows[1]["figure"], "modelled (sibling's rate per SM per MHz)");
  const double modelled = *estimate::complete_tensor_rates(*bare, two).gpu.fp16_tflops;
  EXPECT_DOUBLE_EQ(modelled, 71.2);  // same SMs and clock as its sibling
  EXPECT_DOUBLE_EQ(modelled_rows[1]["fp16_tflops"].get<double>(), modelled);
  EXPECT_DOUBLE_EQ(modelled_rows[1]["tflops_per_kusd"].get<double>(), modelled / 1000 * 1000);
}

TEST(GpuComparisonSection, TheTensorChartMarksDerivedBars) {
  const catalog::Catalog& builtin = catalog::Catalog::builtin();
  const Section s = gpu_section({builtin.find("rtx5090"), builtin.find("rtx5060")}, builtin, Table{});
  int derived = 0, published = 0;
  for (const auto& row : rows_with(chart(s, "gpu-tensor").spec, "figure")) {
    if (row["gpu"] == "GeForce RTX 5090") {
      EXPECT_EQ(row["figure"], "published");
    }
    if (row["figure"] == "published") ++published;
    if (row["figure"] == "derived (AI TOPS x whitepaper ratio)") ++derived;
  }
  EXPECT_EQ(published, 5 + 1);  // the 5090's five precisions, the 5060's FP4
  EXPECT_EQ(derived, 4);        // the 5060's TF32, FP16, BF16, FP8
}

TEST(GpuComparisonSection, KeepsTheGivenTableAndOneColourPerGpu) {
  Table t;
  t.columns = {{"GPU", "", Align::left}};
  t.add_row({"rtx5090"});
  const Section s = gpu_section(two_gpus(), mini(), t);
  EXPECT_EQ(table(s, "gpu-table").table.rows, t.rows);
  const Json domain = Json::array({"GeForce RTX 5090", "GeForce RTX 5070 Ti"});
  walk(chart(s, "gpu-value").spec, [&](const Json& j) {
    if (j.contains("color") && j["color"].value("field", "") == "gpu") {
      EXPECT_EQ(j["color"]["scale"]["domain"], domain);
    }
  });
}

TEST(TrainingSection, ThroughputChartDataAreThePlannersPredictions) {
  const auto predictions = sweep(two_gpus(), {32, 64, 4096});
  const Section s = training_section(workload::build("resnet50"), predictions, {});
  const auto rows = rows_with(chart(s, "train-throughput").spec, "throughput");
  std::size_t fitting = 0;
  for (const auto& p : predictions) {
    if (!p.fits) continue;
    ++fitting;
    bool found = false;
    for (const auto& r : rows) {
      if (r["gpu"] == p.gpu->name && r["batch"] == p.config.batch_per_gpu) {
        EXPECT_DOUBLE_EQ(r["throughput"].get<double>(), p.throughput);
        found = true;
      }
    }
    EXPECT_TRUE(found) << p.gpu->name << " batch " << p.config.batch_per_gpu;
  }
  EXPECT_EQ(rows.size(), fitting);  // batch 4096 fits neither card: no point for it
  EXPECT_LT(fitting, predictions.size());
}

TEST(TrainingSection, MemoryChartRulesAreTheCatalogVram) {
  const auto predictions = sweep(two_gpus(), {32, 64});
  const Section s = training_section(workload::build("resnet50"), predictions, {});
  const Json& spec = chart(s, "train-memory").spec;
  const auto rules = rows_with(spec, "vram_gib");
  std::map<std::string, double> vram;
  for (const auto& r : rules) {
    if (r.contains("gpu")) vram[r["gpu"]] = r["vram_gib"].get<double>();
  }
  EXPECT_EQ(vram, (std::map<std::string, double>{{"GeForce RTX 5090", 32}, {"GeForce RTX 5070 Ti", 16}}));
  const auto lines = rows_with(spec, "memory_gib");
  ASSERT_EQ(lines.size(), predictions.size());
  EXPECT_DOUBLE_EQ(lines[0]["memory_gib"].get<double>(), predictions[0].memory.total_bytes() / (1 << 30));
}

TEST(TrainingSection, EpochChartUsesEachCardsFastestFittingBatch) {
  const auto predictions = sweep(two_gpus(), {32, 64, 128});
  const Section s = training_section(workload::build("resnet50"), predictions, {"a note"});
  const auto rows = rows_with(chart(s, "train-epoch").spec, "epoch_h");
  ASSERT_EQ(rows.size(), 2u);
  const estimate::Prediction* best = nullptr;
  for (const auto& p : predictions) {
    if (p.gpu->id == "rtx5090" && p.fits && (!best || p.throughput > best->throughput)) best = &p;
  }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(rows[0]["batch"], best->config.batch_per_gpu);
  EXPECT_DOUBLE_EQ(rows[0]["epoch_h"].get<double>(), *best->epoch_time_s / 3600);
  EXPECT_DOUBLE_EQ(rows[0]["energy_kwh"].get<double>(), *best->energy_wh_per_epoch / 1000);
  EXPECT_THAT(s.notes, ::testing::Contains("a note"));
  EXPECT_EQ(table(s, "train-table").table.rows.size(), 2u);
}

TEST(BenchSection, ErrorIsMeasuredMinusPredictedOverPredicted) {
  BenchComparison c{"RTX 5090 · ResNet-50 fp16", "run.json", "img/s", {{64, 1200.0, 1000.0, "ok"},
                                                                       {128, std::nullopt, 1100.0, "out_of_memory"}}, ""};
  const Section s = bench_section({c});
  const auto rows = rows_with(chart(s, "bench-vs-plan").spec, "series");
  ASSERT_EQ(rows.size(), 3u);  // measured 64, predicted 64, predicted 128
  EXPECT_EQ(rows[0]["series"], "measured");
  EXPECT_DOUBLE_EQ(rows[0]["error_pct"].get<double>(), 20.0);
  EXPECT_EQ(rows[0]["error_label"], "+20%");
  const Table& t = table(s, "bench-table").table;
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][5], "20.0");
  EXPECT_EQ(t.rows[1][3], "n/a");
  EXPECT_EQ(t.rows[1][6], "out_of_memory");
}

MonitorLog two_samples() {
  MonitorLog log;
  log.origin = "run.jsonl";
  log.json_lines = true;
  for (int i = 0; i < 2; ++i) {
    device::Sample sample;
    sample.unix_time_s = 1764690600.0 + i;
    device::GpuSample gpu;
    gpu.index = 0;
    gpu.name = "NVIDIA A100-SXM4-80GB";
    gpu.utilization_gpu_percent = 90u + i;
    gpu.memory_used_bytes = (20ull + i) << 30;
    gpu.power_w = 300.0;
    gpu.temperature_c = 70u + i;
    sample.gpus.push_back(gpu);
    log.samples.push_back(sample);
  }
  return log;
}

TEST(MonitorSection, LinesCarryTheLoggedValuesAndAlertsSitAtTheirTime) {
  const std::vector<AlertMark> alerts{{1764690601.0, 0, "thermal_throttle", "warning", "too hot"}};
  const Section s = monitor_section(two_samples(), alerts, "recorded");
  const Json& spec = chart(s, "monitor-timeline").spec;
  std::map<std::string, std::vector<double>> series;
  for (const auto& r : rows_with(spec, "metric")) series[r["metric"]].push_back(r["value"].get<double>());
  EXPECT_EQ(series["utilization"], (std::vector<double>{90, 91}));
  EXPECT_EQ(series["memory"], (std::vector<double>{20, 21}));
  EXPECT_EQ(series["temperature"], (std::vector<double>{70, 71}));
  const auto marks = rows_with(spec, "kind");
  ASSERT_EQ(marks.size(), 4u);  // one rule per panel
  EXPECT_EQ(marks[0]["time"], "2025-12-02T15:50:01.000Z");
  EXPECT_EQ(marks[0]["gpu"], "GPU 0: NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(table(s, "monitor-alerts").table.rows.at(0).at(4), "too hot");
  // The time axis counts seconds since the first sample, so an alert one second in sits at 1.
  EXPECT_EQ(marks[0]["elapsed_s"], 1.0);
  const auto values = rows_with(spec, "metric");
  EXPECT_EQ(values.front()["elapsed_s"], 0.0);
  EXPECT_EQ(values.back()["elapsed_s"], 1.0);
}

TEST(MonitorSection, TheTimeAxisHasRoundDistinctTicks) {
  const Section s = monitor_section(two_samples(), {}, "recorded");
  const Json& spec = chart(s, "monitor-timeline").spec;
  std::set<std::string> titles;
  walk(spec, [&](const Json& j) {
    if (!j.contains("x") || !j["x"].is_object()) return;
    EXPECT_EQ(j["x"]["field"], "elapsed_s");
    EXPECT_EQ(j["x"]["axis"]["values"], Json::array({0.0, 0.2, 0.4, 0.6, 0.8, 1.0}));
    titles.insert(j["x"]["title"].get<std::string>());
  });
  EXPECT_EQ(titles, (std::set<std::string>{"Time since 2025-12-02T15:50:00Z (s)"}));
}

TEST(Sections, EveryChartHasATitleTitledAxesAndTooltips) {
  const auto predictions = sweep(two_gpus(), {32, 64});
  std::vector<Section> sections{
      gpu_section(two_gpus(), mini(), Table{}),
      training_section(workload::build("resnet50"), predictions, {}),
      bench_section({{"x", "f.json", "img/s", {{64, 1.0, 2.0, "ok"}}, ""}}),
      monitor_section(two_samples(), {{1764690601.0, 0, "ecc_errors", "critical", "m"}}, "n")};
  std::size_t charts = 0;
  for (const auto& section : sections) {
    for (const auto& item : section.items) {
      if (const auto* c = std::get_if<Chart>(&item)) {
        expect_readable(*c);
        ++charts;
      }
    }
  }
  EXPECT_EQ(charts, 8u);
}

TEST(CatalogSources, ListsEachUrlOnceWithTheGpusItBacks) {
  const auto sources = catalog_sources({mini().find("rtx5090"), mini().find("rtx5090"), mini().find("rtx5070ti")});
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].url, "https://example.invalid/rtx5090");
  EXPECT_EQ(sources[0].note, "GeForce RTX 5090");
}

TEST(NewPage, StatesTheGpusageVersionAndTheTime) {
  const Page page = new_page("t", "s", "gpusage report");
  EXPECT_THAT(page.generator, HasSubstr(std::string("gpusage ") + build_info::version + " (commit "));
  EXPECT_EQ(page.generated_utc.size(), 20u);
  EXPECT_EQ(page.generated_utc.back(), 'Z');
}

}  // namespace
}  // namespace gpusage::report
