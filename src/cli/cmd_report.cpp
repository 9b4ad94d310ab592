// gpusage report: the comparison charts as one self-contained HTML page that opens offline in any browser:
// the GPUs side by side (catalog), a model's predicted training speed and memory on each (plan), and, when
// given, bench results against the prediction and a monitor log over time. The pages of `gpus --chart
// FILE.html` and `plan --chart FILE.html` are built here too.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/cost_view.hpp"
#include "cli/gpus_view.hpp"
#include "cli/options.hpp"
#include "cli/plan_view.hpp"
#include "cli/report_pages.hpp"
#include "cli/setup_binder.hpp"
#include "core/catalog/gpu.hpp"
#include "core/common/batch_list.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/estimate/compare.hpp"
#include "core/setup/plan.hpp"
#include "monitor/alerts.hpp"
#include "report/html_page.hpp"
#include "report/monitor_log.hpp"
#include "report/sections.hpp"

namespace gpusage::cli {

namespace {

// A vision sweep wide enough that every card runs out somewhere: ResNet-50 at fp16 fills 8 GB near batch 128
// and 32 GB near batch 512 (gpusage plan resnet50 --batch auto). Language models take batch_ladder's 1, 2, 4, ...
constexpr const char* kVisionBatches = "8,16,32,64,128,256,512,1024";

struct ReportOptions {
  setup::TrainingSetup run;  // the model, batch, recipe and --gpu
  std::string family = "rtx50";
  std::vector<std::string> bench_files;
  std::string monitor_log;
  std::string out = "gpusage-report.html";
  Format format = Format::table;
  CostOptions cost;
};

void check_html_path(const std::string& option, const std::string& path) {
  if (!is_html_path(path)) {
    throw InputError(i18n::trf("{}: '{}' has an unsupported extension; accepted: .html", option, path));
  }
}

std::string selection_label(const ReportOptions& options, std::size_t count) {
  return i18n::trf("{} ({} GPUs)",
                   options.run.gpu.empty() ? text::join(text::split(options.family, ',')) : options.run.gpu, count);
}

// What to type to make the same page again: the setup's flags (the model, --gpu, --batch when given, the
// recipe) and the report's own.
std::string command_line(const ReportOptions& o) {
  std::string line = "gpusage report";
  if (o.run.gpu.empty()) line += " --family " + o.family;
  line += o.run.to_flags();
  for (const auto& file : o.bench_files) line += " --bench " + file;
  if (!o.monitor_log.empty()) line += " --monitor-log " + o.monitor_log;
  if (o.cost.enabled) line += " --cost";
  return line + " --out " + o.out;
}

// What the job costs on each card (plan --cost's table, sortable), its notes and the prices it used.
report::Section cost_section(const CostReport& costs) {
  report::Section section{"cost", i18n::tr("What a job costs: buy or rent"), {}, {}, {}};
  section.paragraphs.push_back(
      i18n::trf("The job: {}. Each card at its fastest fitting batch; wall time and every "
                "cost with plan's 80% range.",
                costs.job_text));
  report::Table table = cost_table_model(costs);
  section.notes = std::move(table.notes);
  table.notes.clear();
  section.items.push_back(
      report::PageTable{"cost-table", i18n::tr("Wall time, energy and cost per card"), std::move(table)});
  if (!costs.buy_or_rent.empty()) {
    report::Table pairs = buy_or_rent_table(costs);
    for (auto& note : pairs.notes) section.notes.push_back(std::move(note));
    pairs.notes.clear();
    section.items.push_back(report::PageTable{
        "buy-or-rent", i18n::tr("Buy one card or rent another: when buying pays off"), std::move(pairs)});
  }
  for (const auto& line : cost_sources(costs)) section.notes.push_back(i18n::trf("Price: {}", line));
  return section;
}

// The bench file's runs beside what plan predicts for them (core/estimate/compare.hpp), as the page charts them.
report::BenchComparison chart_bench(const estimate::BenchFile& file, const estimate::Calibration& calibration) {
  const estimate::BenchComparison compared = estimate::compare_bench(file, calibration, catalog::Catalog::active());
  report::BenchComparison c;
  c.origin = file.origin;
  c.unit = compared.unit;
  c.note = compared.reason;
  c.label = fmt::format("{} · {} {}", compared.gpu ? compared.gpu->name : file.device_name, compared.model_name,
                        file.precision);
  for (std::size_t i = 0; i < file.runs.size(); ++i) {
    const estimate::BenchRun& run = file.runs[i];
    report::BenchComparison::Point point;
    point.batch = run.batch;
    point.measured = run.ok ? run.throughput : std::nullopt;
    point.status = run.ok ? "ok" : (run.failure.empty() ? "failed" : run.failure);
    if (const estimate::Prediction* predicted = compared.runs[i].prediction) {
      // No speed where plan says the batch does not fit: a bar there would contradict its own prediction.
      if (predicted->fits) {
        point.predicted = predicted->throughput;
      } else {
        point.status += "; plan predicts out of memory";
      }
    }
    c.points.push_back(std::move(point));
  }
  return c;
}

// JSON Lines logs carry the alerts gpusage monitor raised; a CSV log does not, so the monitor's rules are
// evaluated again over its samples.
std::pair<std::vector<report::AlertMark>, std::string> log_alerts(const report::MonitorLog& log) {
  if (log.json_lines)
    return {log.alerts, i18n::tr("Alerts: as gpusage monitor raised them while it recorded this log.")};
  const monitor::AlertConfig config;
  monitor::AlertEngine engine(config);
  std::vector<report::AlertMark> marks;
  for (const auto& sample : log.samples) {
    for (const auto& alert : engine.evaluate(sample).raised) {
      marks.push_back({alert.since_unix_time_s, alert.gpu, std::string(monitor::to_string(alert.kind)), alert.severity,
                       alert.message});
    }
  }
  return {marks, i18n::trf("Alerts: a CSV log records none, so these are gpusage monitor's rules evaluated again "
                           "over its samples with the default thresholds (input bottleneck: below {:g}% "
                           "utilization for {:g} s; memory: above {:g}% full).",
                           config.low_utilization_percent, config.low_utilization_window_s,
                           config.memory_full_fraction * 100)};
}

nlohmann::json summary_json(const report::Page& page, const std::string& path, std::size_t bytes) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& section : page.sections) {
    nlohmann::json charts = nlohmann::json::array(), tables = nlohmann::json::array();
    for (const auto& item : section.items) {
      if (const auto* chart = std::get_if<report::Chart>(&item)) {
        charts.push_back({{"id", chart->id}, {"title", chart->title}});
      } else {
        const auto& table = std::get<report::PageTable>(item);
        tables.push_back({{"id", table.id}, {"caption", table.caption}, {"rows", table.table.rows.size()}});
      }
    }
    sections.push_back({{"id", section.id}, {"title", section.title}, {"charts", charts}, {"tables", tables}});
  }
  return {{"out", path},
          {"bytes", bytes},
          {"charts", report::chart_count(page)},
          {"generated_utc", page.generated_utc},
          {"generator", page.generator},
          {"command", page.command_line},
          {"sections", sections}};
}

void run_report(const ReportOptions& options) {
  check_html_path("--out", options.out);
  const catalog::Catalog& catalog = catalog::Catalog::active();
  estimate::SweepRequest request;
  request.gpus = select_gpus(catalog, options.family, options.run.gpu_spec(options.run.gpu, catalog));
  if (request.gpus.empty()) throw InputError(i18n::tr("report: no GPUs selected"));
  request.ladder = options.run.batch.empty();
  request.batches = parse_batch_list(request.ladder ? kVisionBatches : options.run.batch).sizes;
  // Inputs are read before anything is written: a bad file leaves no page behind.
  std::vector<estimate::BenchFile> bench;
  for (const auto& path : options.bench_files) bench.push_back(estimate::read_bench_file(path));
  std::optional<report::MonitorLog> log;
  if (!options.monitor_log.empty()) log = report::read_monitor_log(options.monitor_log);

  options.cost.check_given_with_cost();
  const estimate::Sweep plan = setup::run_plan(options.run, request);
  const std::optional<CostReport> costs = cost_report_if_asked(plan, options.cost, options.run.dataset_size);
  const std::string selection = selection_label(options, request.gpus.size());
  report::Page page = report::new_page(
      i18n::trf("gpusage report: {} and {} training", selection, plan.workload.display_name),
      i18n::tr("Which GPU, will it fit, how fast: the catalog's figures and gpusage plan's predictions, as charts."),
      command_line(options));
  page.provenance.push_back(i18n::trf("GPU catalog: {}. Predictions: gpusage plan ({}).", catalog.origin(),
                                      options.run.calibration_file.empty()
                                          ? i18n::tr("default calibration")
                                          : i18n::trf("calibrated with {}", options.run.calibration_file)));
  page.sections.push_back(report::gpu_comparison_section(request.gpus, with_tensor_rates(catalog, request.gpus),
                                                         selection, catalog.origin(),
                                                         gpus_comparison_table(catalog, request.gpus)));
  page.sections.push_back(report::training_section(plan.workload, plan.predictions, plan.notes));
  if (!bench.empty()) {
    const estimate::Calibration calibration = options.run.calibration();  // the training section's
    std::vector<report::BenchComparison> comparisons;
    for (const auto& file : bench) comparisons.push_back(chart_bench(file, calibration));
    page.sections.push_back(report::bench_section(comparisons));
  }
  if (log) {
    const auto [alerts, note] = log_alerts(*log);
    page.sections.push_back(report::monitor_section(*log, alerts, note));
  }
  if (costs) page.sections.push_back(cost_section(*costs));
  page.sources = report::catalog_sources(request.gpus);

  const std::size_t bytes = write_page(page, options.out);
  emit(options.format == Format::json ? summary_json(page, options.out, bytes).dump(2) + "\n"
                                      : wrote_message(page, options.out, bytes) + "\n");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  options->run.model = "resnet50";
  auto* command = app.add_subcommand(
      "report",
      "Write the comparison charts as one self-contained HTML page (opens offline in any browser): GPU specs\n"
      "side by side, a model's predicted throughput and memory against batch size on each card, epoch time and\n"
      "energy; with --bench, measured against predicted; with --monitor-log, GPU activity over time with alerts.\n"
      "Examples:\n"
      "  gpusage report                                   # RTX 50 series, ResNet-50 -> gpusage-report.html\n"
      "  gpusage report --gpu rtx5090,rtx4090,h100-sxm5-80gb --model vit_b_16 --precision bf16\n"
      "  gpusage report --bench run.json --monitor-log run.jsonl --out run-report.html\n"
      "  gpusage report --cost                            # + what 90 epochs of ImageNet cost, owned or rented");
  SetupDoor door;
  door.model_help = i18n::N_("Zoo model to estimate (see `gpusage plan --help`)");
  door.gpu_help = i18n::N_("GPUs by id, name or family, comma separated");
  door.batch_help = i18n::trf(
      "Per-GPU batch sizes to sweep, comma separated (default: {} for vision models; 1, 2, "
      "4, ... for language models, up to the first that runs out on every card)",
      kVisionBatches);
  bind_setup(*command, options->run, door);
  options->cost.default_epochs = kReferenceVisionEpochs;
  options->cost.add_to(*command);
  auto* family = command
                     ->add_option("--family", options->family,
                                  fmt::format("{}, all, or a comma list of them", catalog::family_names()))
                     ->capture_default_str();
  family->excludes(command->get_option("--gpu"));
  command
      ->add_option("--bench", options->bench_files,
                   i18n::N_("gpusage bench --format json results to compare with the prediction (repeatable)"))
      ->check(CLI::ExistingFile);
  command
      ->add_option("--monitor-log", options->monitor_log,
                   i18n::N_("A gpusage monitor --log FILE (.csv or .jsonl) to chart over time"))
      ->check(CLI::ExistingFile);
  command->add_option("--out", options->out, i18n::N_("The HTML file to write"))->capture_default_str();
  add_format_option(*command, options->format, {Format::table, Format::json});
  command->callback([options, command] {
    const bool other_model = !options->run.hf_config.empty() || !options->run.workload_file.empty();
    if (other_model && !model_given(*command)) options->run.model.clear();  // the default yields
    run_report(*options);
  });
}

}  // namespace gpusage::cli
