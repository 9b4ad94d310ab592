// The HTML pages of `gpusage report` that other commands write too (`gpus --chart FILE.html`,
// `plan --chart FILE.html`), and the pieces every page needs: writing it, the flags that remake it.
#include "cli/report_pages.hpp"

#include <fmt/format.h>

#include "cli/gpus_view.hpp"
#include "core/common/i18n.hpp"
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
  return i18n::trn("Wrote {} ({} charts in {} section, {} KB): open it in a browser; it works offline.",
                   "Wrote {} ({} charts in {} sections, {} KB): open it in a browser; it works offline.",
                   page.sections.size(), path, report::chart_count(page), page.sections.size(), (bytes + 512) / 1024);
}

std::string plan_command_line(const setup::TrainingSetup& setup, const std::string& chart) {
  return "gpusage plan" + setup.to_flags() + " --chart " + chart;
}

bool is_html_path(const std::string& path) {
  const std::string lower = text::to_lower(path);
  return lower.ends_with(".html") || lower.ends_with(".htm");
}

std::string write_gpus_page(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                            const std::string& selection, const std::string& path, const std::string& command_line) {
  report::Page page =
      report::new_page(i18n::trf("GPU comparison: {}", selection),
                       i18n::tr("The catalog's figures as charts, with the source behind each."), command_line);
  page.provenance.push_back(i18n::trf("GPU catalog: {}.", catalog.origin()));
  page.sections.push_back(report::gpu_comparison_section(gpus, with_tensor_rates(catalog, gpus), selection,
                                                         catalog.origin(), gpus_comparison_table(catalog, gpus)));
  page.sources = report::catalog_sources(gpus);
  return "gpusage: " + wrote_message(page, path, write_page(page, path));
}

std::string write_plan_page(const estimate::Sweep& results, const std::string& path, const std::string& command_line) {
  std::vector<const catalog::Gpu*> gpus;
  for (const auto& gpu : results.gpus) gpus.push_back(gpu.get());
  report::Page page = report::new_page(i18n::trf("gpusage plan: {} training", results.workload.display_name),
                                       i18n::tr("Predicted memory and speed on each GPU, as charts."), command_line);
  page.provenance.push_back(i18n::trf("GPU catalog: {}.", catalog::Catalog::active().origin()));
  page.sections.push_back(report::training_section(results.workload, results.predictions, results.notes));
  page.sources = report::catalog_sources(gpus);
  return "gpusage: " + wrote_message(page, path, write_page(page, path));
}

}  // namespace gpusage::cli
