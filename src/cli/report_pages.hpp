// The HTML pages of `gpusage report`, for the commands that also write one with `--chart FILE.html`
// (`gpus`, `plan`), and what every page needs (report_pages.cpp).
#pragma once

#include <string>
#include <vector>

#include "cli/plan_view.hpp"
#include "core/catalog/catalog.hpp"
#include "core/setup/training_setup.hpp"
#include "report/html_page.hpp"

namespace gpusage::cli {

// Renders and writes the page atomically; returns its size in bytes.
std::size_t write_page(const report::Page& page, const std::string& path);
// "Wrote FILE (3 charts in 2 sections, 912 KB): open it in a browser; it works offline."
std::string wrote_message(const report::Page& page, const std::string& path, std::size_t bytes);

// True for FILE.html / FILE.htm (any case): the path asks for a report page rather than an SVG.
bool is_html_path(const std::string& path);

// The plan command that makes the same page again: "gpusage plan" with the setup's flags
// (TrainingSetup::to_flags: the model, the card list, the batch and every option not at its default) and
// --chart FILE.
std::string plan_command_line(const setup::TrainingSetup& setup, const std::string& chart);

// Writes the GPU comparison page (charts, sortable table, sources) to `path`; returns what to tell the
// user ("wrote FILE (3 charts, 912 KB)").
std::string write_gpus_page(const catalog::Catalog& catalog, const std::vector<const catalog::Gpu*>& gpus,
                            const std::string& selection, const std::string& path, const std::string& command_line);

// Writes the training-estimate page of a plan (throughput and memory against batch, epoch and energy).
std::string write_plan_page(const estimate::Sweep& results, const std::string& path, const std::string& command_line);

}  // namespace gpusage::cli
