// The HTML pages of `gpusage report` that other commands write too (`gpus --chart FILE.html`,
// `plan --chart FILE.html`), and the pieces every page needs: writing it, the flags that remake it.
#include "cli/report_pages.hpp"

#include <fmt/format.h>

#include "cli/gpus_view.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "report/sections.hpp"

namespace gpusage::cli {

// Renders and writes the page; returns its size in bytes.
std::size_t write_page(const report::Page& page, const std::string& path) {
  const std::string html = report::render_html(page);
  io::write_file_atomically(path, html);
  return html.size();
}

std::string wrote_message(const report::Page& page, const std::string& path, std::size_t bytes) {
  return fmt::format("Wrote {} ({} charts in {} section{}, {} KB): open it in a browser; it works offline.", path,
                     report::chart_count(page), page.sections.size(), page.sections.size() == 1 ? "" : "s",
                     (bytes + 512) / 1024);
}

std::string run_option_flags(const RunOptions& o) {
  const RunOptions defaults;
  std::string flags;
  if (!o.hf_config.empty()) flags += " --hf-config " + o.hf_config;
  if (!o.workload_file.empty()) flags += " --workload " + o.workload_file;
  if (o.resolution) flags += fmt::format(" --resolution {}", *o.resolution);
  if (o.seq_len) flags += fmt::format(" --seq-len {}", *o.seq_len);
  flags += " --precision " + o.precision;  // always: it decides every number on the page
  if (!o.optimizer.empty()) flags += " --optimizer " + o.optimizer;
  if (!o.checkpointing.empty()) flags += " --checkpointing " + o.checkpointing;
  if (o.master_weights != defaults.master_weights) flags += " --master-weights " + o.master_weights;
  if (o.loss != defaults.loss) flags += " --loss " + o.loss;
  if (o.lora_targets != defaults.lora_targets) flags += " --lora-targets " + o.lora_targets;
  if (o.tokens_per_sample) flags += fmt::format(" --tokens-per-sample {}", *o.tokens_per_sample);
  if (o.accumulate) flags += fmt::format(" --accumulate {}", *o.accumulate);
  if (o.optimizer_in_backward) flags += " --optimizer-in-backward";
  if (o.clip_grad_norm) flags += " --clip-grad-norm";
  if (o.optimizer_impl != defaults.optimizer_impl) flags += " --optimizer-impl " + o.optimizer_impl;
  if (o.lora) flags += fmt::format(" --lora {}", *o.lora);
  if (o.qlora) flags += " --qlora";
  if (o.no_kbit_upcast) flags += " --no-kbit-upcast";
  if (o.gpus != defaults.gpus) flags += fmt::format(" --gpus {}", o.gpus);
  if (o.nodes != defaults.nodes) flags += fmt::format(" --nodes {}", o.nodes);
  if (o.parallel != defaults.parallel) flags += " --parallel " + o.parallel;
  if (!o.offload.empty()) flags += " --offload " + text::join(o.offload, ",");
  if (o.interconnect != defaults.interconnect) flags += " --interconnect " + o.interconnect;
  if (o.dataset_size > 0) flags += fmt::format(" --dataset-size {}", o.dataset_size);
  if (o.network_gbps > 0) flags += fmt::format(" --network-gbps {}", o.network_gbps);
  if (!o.calibration_file.empty()) flags += " --calibration " + o.calibration_file;
  if (o.no_flash_attention) flags += " --no-flash-attention";
  return flags;
}

bool is_html_path(const std::string& path) {
  const std::string lower = text::to_lower(path);
  return lower.ends_with(".html") || lower.ends_with(".htm");
}

std::string write_gpus_page(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                            const std::string& selection, const std::string& path, const std::string& command_line) {
  report::Page page = report::new_page(fmt::format("GPU comparison: {}", selection),
                                       "The catalog's figures as charts, with the source behind each.", command_line);
  page.provenance.push_back(fmt::format("GPU catalog: {}.", catalog.origin()));
  page.sections.push_back(
      report::gpu_comparison_section(gpus, with_tensor_rates(catalog, gpus), selection, catalog.origin(),
                                     gpus_comparison_table(catalog, gpus)));
  page.sources = report::catalog_sources(gpus);
  return "gpusage: " + wrote_message(page, path, write_page(page, path));
}

std::string write_plan_page(const estimate::Sweep& results, const std::string& path, const std::string& command_line) {
  std::vector<const catalog::Gpu*> gpus;
  for (const auto& gpu : results.gpus) gpus.push_back(gpu.get());
  report::Page page = report::new_page(fmt::format("gpusage plan: {} training", results.workload.display_name),
                                       "Predicted memory and speed on each GPU, as charts.", command_line);
  page.provenance.push_back(fmt::format("GPU catalog: {}.", catalog::Catalog::active().origin()));
  page.sections.push_back(report::training_section(results.workload, results.predictions, results.notes));
  page.sources = report::catalog_sources(gpus);
  return "gpusage: " + wrote_message(page, path, write_page(page, path));
}

}  // namespace gpusage::cli
