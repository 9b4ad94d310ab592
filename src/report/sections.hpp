// The sections of a `gpusage report` page, as Vega-Lite specs with their data inline and sortable tables:
// GPU comparison (catalog), training estimate (planner predictions), measured against predicted (bench
// results), and a monitor log over time, one file per section (section_*.cpp). Every number comes from those
// inputs; nothing is modelled here.
// Every chart has a title, axis titles with units, a legend and tooltips; a GPU keeps one colour across
// the page (the order of `gpu_names`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"
#include "report/html_page.hpp"
#include "report/monitor_log.hpp"
#include "report/table.hpp"

namespace gpusage::report {

// The sources behind the selected GPUs' figures, each once, with the GPUs it backs.
std::vector<PageSource> catalog_sources(const std::vector<const catalog::Gpu*>& gpus);

// Specs side by side (CUDA cores, VRAM, bandwidth, TDP, price), dense tensor TFLOPS by precision, the
// buyer's table (`table`, as `gpusage gpus` prints it) and price-performance (TFLOPS per $ against VRAM).
// `with_rates` holds the same GPUs with unpublished tensor rates completed by the caller (estimate/gpu_rates.hpp:
// nothing is modelled here); `catalog_origin` names the catalog they come from.
Section gpu_comparison_section(const std::vector<const catalog::Gpu*>& gpus,
                               const std::vector<catalog::Gpu>& with_rates, const std::string& selection,
                               const std::string& catalog_origin, Table table);

// Predicted throughput and memory against batch size (one line per GPU, each card's VRAM as a rule),
// epoch time and energy per card at its fastest batch that fits, and the same as a table.
// `predictions` are GPU-major (one batch sweep per GPU), as estimate::run_sweep returns them.
Section training_section(const workload::Workload& workload, const std::vector<estimate::Prediction>& predictions,
                         const std::vector<std::string>& notes);

// One bench file next to the plan's predictions for the same GPU, model, precision and batches.
struct BenchComparison {
  std::string label;   // "GeForce RTX 4090 · ResNet-50 bf16"
  std::string origin;  // the file
  std::string unit;    // "img/s"
  struct Point {
    int batch = 0;
    std::optional<double> measured;   // samples/s; empty when the run failed
    std::optional<double> predicted;  // samples/s; empty when there is no prediction
    std::string status;               // "ok", or the failure ("out_of_memory")
  };
  std::vector<Point> points;
  std::string note;  // why there is no prediction (a CPU run, a GPU not in the catalog)
};
Section bench_section(const std::vector<BenchComparison>& comparisons);

// Utilization, memory, power and temperature over time, one line per GPU, alerts as marked rules.
// `alerts_note` says where the alerts come from (recorded, or the monitor's rules evaluated again).
Section monitor_section(const MonitorLog& log, const std::vector<AlertMark>& alerts, const std::string& alerts_note);

}  // namespace gpusage::report
