#include "core/estimate/compare.hpp"

#include <fmt/format.h>

#include "core/catalog/identify.hpp"
#include "core/common/error.hpp"

namespace gpusage::estimate {

const catalog::Gpu& resolve_device_name(const std::string& device_name, const catalog::Catalog& catalog,
                                        std::optional<std::uint64_t> memory_bytes,
                                        std::optional<std::string> pci_device_id, std::string* note) {
  const catalog::Identification id = catalog::identify(catalog, {device_name, memory_bytes, std::move(pci_device_id)});
  if (!id.gpu) throw InputError(id.note);
  if (note) *note = id.note;
  return *id.gpu;
}

BenchComparison compare_bench(const BenchFile& file, const Calibration& calibration, const catalog::Catalog& catalog) {
  BenchComparison c;
  c.model_name = file.model;
  c.runs.resize(file.runs.size());
  try {
    workload::WorkloadOptions shape;
    shape.resolution = file.resolution;
    shape.seq_len = file.seq_len;
    workload::Workload w = workload::build(file.model, shape);
    c.model_name = w.display_name;
    c.unit = w.throughput_unit();
    if (file.device != "cuda") {
      c.reason = "no prediction for a CPU run: plan models NVIDIA GPUs from the catalog";
      return c;
    }
    const catalog::Gpu* gpu = nullptr;
    try {
      gpu = &resolve_device_name(file.device_name, catalog);
    } catch (const InputError& e) {
      c.reason = e.what();
      return c;
    }
    // The configuration that was measured: its precision and optimizer, one GPU, nothing else changed.
    TrainingConfig base;
    const auto precision = catalog::parse_precision(file.precision);
    if (!precision) throw InputError(fmt::format("precision '{}' is not one plan models", file.precision));
    base.precision = *precision;
    const std::string optimizer =
        file.optimizer.empty() ? (w.domain == workload::Domain::vision ? "momentum" : "adamw") : file.optimizer;
    base.optimizer = parse_optimizer(optimizer).value_or(base.optimizer);
    base.optimizer_impl = kLibTorchOptimizerImpl;
    SweepRequest request;
    request.gpus = {gpu};
    for (const auto& run : file.runs) request.batches.push_back(run.batch);
    c.sweep = run_sweep(std::move(w), base, calibration, request, catalog);
    c.gpu = c.sweep.gpus.front().get();
  } catch (const InputError& e) {  // a model or shape the zoo lacks, a GPU the catalog lacks
    c.reason = std::string("plan cannot predict this run: ") + e.what();
    c.sweep.predictions.clear();
    return c;
  }
  for (std::size_t i = 0; i < file.runs.size(); ++i) {
    RunComparison& r = c.runs[i];
    r.prediction = &c.sweep.predictions[i];
    const auto& measured = file.runs[i].throughput;
    if (measured && r.prediction->throughput > 0) {
      r.throughput_error = (*measured - r.prediction->throughput) / r.prediction->throughput;
    }
  }
  return c;
}

}  // namespace gpusage::estimate
