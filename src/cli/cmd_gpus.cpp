// `gpusage gpus`: the catalog as a buyer's comparison (table, Markdown, CSV, JSON, SVG chart), and
// `gpusage gpus show ID`: every field of one GPU with the source behind it.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.hpp"
#include "cli/gpus_view.hpp"
#include "cli/options.hpp"
#include "cli/report_pages.hpp"
#include "core/catalog/catalog.hpp"
#include "core/catalog/fields.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "report/svg_chart.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

namespace {

using catalog::Catalog;
using catalog::Gpu;
using catalog::Metric;
using Json = nlohmann::ordered_json;  // keys in schema order, as a person reads the file
using i18n::tr;
using i18n::trf;

struct ListOptions {
  std::string family = "rtx50";
  std::string gpus;  // --gpu: names, ids, families
  std::string sort;
  Format format = Format::table;
  std::string chart;
  std::string metrics = kDefaultChartMetrics;
  bool wide = false;
};

struct ShowOptions {
  std::vector<std::string> words;  // `show RTX 5090` unquoted arrives as two words
  Format format = Format::table;
};

}  // namespace

namespace {

std::string raw_number(double value) { return fmt::format("{}", value); }

report::Table data_table(const std::vector<const Gpu*>& gpus) {
  report::Table table;
  for (const auto& field : catalog::fields()) table.columns.push_back({field.name, "", report::Align::right, 0});
  for (const auto& metric : catalog::derived_metrics()) {
    table.columns.push_back({metric.name, "", report::Align::right, 0});
  }
  table.columns.push_back({"sources", "", report::Align::left, 0});
  for (const Gpu* gpu : gpus) {
    std::vector<std::string> row;
    for (const auto& field : catalog::fields()) {
      if (field.text) {
        row.push_back(field.text(*gpu).value_or(""));
      } else {
        auto value = field.number(*gpu);
        row.push_back(value ? raw_number(*value) : "");
      }
    }
    const catalog::Derived derived = catalog::derive(*gpu);
    for (const auto& metric : catalog::derived_metrics()) {
      const auto& value = derived.*(metric.member);
      row.push_back(value ? fmt::format("{:.6g}", *value) : "");
    }
    std::vector<std::string> urls;
    for (const auto& source : gpu->sources) urls.push_back(source.url);
    row.push_back(text::join(urls, " "));
    table.add_row(std::move(row));
  }
  return table;
}

Json gpu_json(const Gpu& gpu) {
  Json j = Json::object();
  for (const auto& field : catalog::fields()) {
    if (field.text) {
      auto value = field.text(gpu);
      j[field.name] = value ? Json(*value) : Json(nullptr);
    } else if (auto value = field.number(gpu); !value) {
      j[field.name] = nullptr;
    } else if (field.kind == catalog::FieldKind::integer) {
      j[field.name] = static_cast<long long>(*value);
    } else {
      j[field.name] = *value;
    }
  }
  Json sources = Json::array();
  for (const auto& source : gpu.sources) {
    sources.push_back({{"title", source.title}, {"url", source.url}, {"fields", source.fields}});
  }
  j["sources"] = std::move(sources);
  Json derived = Json::object();
  const catalog::Derived d = catalog::derive(gpu);
  for (const auto& metric : catalog::derived_metrics()) {
    const auto& value = d.*(metric.member);
    derived[metric.name] = value ? Json(*value) : Json(nullptr);
  }
  j["derived"] = std::move(derived);
  // What kind of value each figure is: "sourced", "derived", "unpublished" or "unsupported".
  Json status = Json::object();
  for (const auto& field : catalog::fields()) {
    if (field.number) status[field.name] = catalog::to_string(catalog::figure_status(gpu, field));
  }
  for (const auto& metric : catalog::derived_metrics()) {
    status[metric.name] = catalog::to_string(catalog::find_metric(metric.name, "status").status(gpu));
  }
  j["status"] = std::move(status);
  Json derivations = Json::array();
  for (const auto& d : gpu.derivations) {
    derivations.push_back({{"field", d.field},
                           {"rule", d.rule},
                           {"basis_field", d.basis_field},
                           {"basis", d.basis},
                           {"ratio", d.ratio},
                           {"value", d.value()}});
  }
  j["derivations"] = std::move(derivations);
  return j;
}

// ---- the chart ---------------------------------------------------------------------------------------

void check_chart_path(const std::string& path) {
  std::string lower = text::to_lower(path);
  if (!lower.ends_with(".svg") && !is_html_path(path)) {
    throw InputError(trf("--chart: '{}' has an unsupported extension; accepted: .svg, .html", path));
  }
}

// ---- the commands ------------------------------------------------------------------------------------

void run_list(const ListOptions& options) {
  const Catalog& catalog = Catalog::active();
  std::optional<Metric> sort;
  if (!options.sort.empty()) sort = catalog::find_metric(options.sort, "--sort");
  std::vector<Metric> chart_metrics;
  if (!options.chart.empty()) {
    check_chart_path(options.chart);
    chart_metrics = parse_metrics(options.metrics);
  }
  std::vector<const Gpu*> gpus = select_gpus(catalog, options.family, options.gpus);
  if (sort) sort_gpus(gpus, *sort);

  // The chart first: when its path is bad, nothing has been printed yet that looks like success.
  std::string chart_message;
  if (!options.chart.empty()) {
    if (gpus.empty()) throw InputError(tr("--chart: no GPUs selected, nothing to draw"));
    // "rtx50 (8 GPUs)" for a family; the ids themselves for a short --gpu list.
    std::vector<std::string> ids;
    for (const Gpu* gpu : gpus) ids.push_back(gpu->id);
    const std::string selection =
        options.gpus.empty() || gpus.size() > 6
            ? trf("{} ({} GPUs)", options.gpus.empty() ? text::join(text::split(options.family, ',')) : tr("selected"),
                  gpus.size())
            : text::join(ids);
    if (is_html_path(options.chart)) {
      chart_message = write_gpus_page(
          catalog, gpus, selection, options.chart,
          "gpusage gpus " + (options.gpus.empty() ? "--family " + options.family : "--gpu \"" + options.gpus + "\"") +
              " --chart " + options.chart);
    } else {
      io::write_file_atomically(options.chart,
                                report::render_svg(comparison_chart(catalog, gpus, chart_metrics, selection)));
      chart_message = trf("gpusage: wrote {} ({} GPUs, {} metrics)", options.chart, gpus.size(), chart_metrics.size());
    }
  }

  switch (options.format) {
    case Format::json: {
      Json out = Json::array();
      for (const Gpu* gpu : gpus) out.push_back(gpu_json(*gpu));
      emit(out.dump(2) + "\n");
      break;
    }
    case Format::csv: emit(report::render_csv(data_table(gpus))); break;
    case Format::markdown: emit(report::render_markdown(comparison_table(catalog, gpus, sort))); break;
    case Format::prometheus:  // not offered by gpus (add_format_option rejects it)
    case Format::table: {
      // --wide: never drop a column, however wide the table gets.
      int width = options.wide ? 1 << 20 : terminal_width();
      emit(report::render_text(comparison_table(catalog, gpus, sort), width));
      break;
    }
  }
  if (!chart_message.empty()) fmt::print(stderr, "{}\n", chart_message);
}

// Every stored value exactly ("0.5", "21,760"), with its unit; a derived one to 2 decimals.
std::string show_value(const catalog::Field& field, const Gpu& gpu) {
  if (field.text) return field.text(gpu).value_or(tr("n/a"));
  auto value = field.number(gpu);
  const catalog::FigureStatus status = catalog::figure_status(gpu, field);
  if (!value && !catalog::is_tensor_rate(field.name)) return tr("n/a");
  if (status == catalog::FigureStatus::unsupported) return std::string(kUnsupported) + " " + tr("not supported");
  if (!value) return std::string(kUnpublished) + " " + tr("not published");
  if (status == catalog::FigureStatus::derived) {
    std::string s = report::format_number(*value, 2, kGroupFrom) + kDerivedMarker;
    return *field.unit ? s + " " + field.unit : s;
  }
  // As many decimals as the shortest exact form has ("0.5", "1978.9"), grouped like the table.
  const std::string exact = raw_number(*value);
  const std::size_t dot = exact.find('.');
  const int decimals =
      dot == std::string::npos || exact.find('e') != std::string::npos ? 0 : static_cast<int>(exact.size() - dot - 1);
  std::string s = report::format_number(*value, decimals, kGroupFrom);
  return *field.unit ? s + " " + field.unit : s;
}

// "Variant of rtx5090 (GeForce RTX 5090), sold in China. Differs in: AI TOPS 2,375 (rtx5090: 3,352), …":
// the published figures that differ from the card it is a variant of.
std::string variant_note(const Catalog& catalog, const Gpu& gpu) {
  const Gpu& base = *catalog.find(*gpu.variant_of);
  std::vector<std::string> differences;
  for (const auto& field : catalog::fields()) {
    if (!field.number || field.kind == catalog::FieldKind::text) continue;
    if (catalog::figure_status(gpu, field) != catalog::FigureStatus::sourced ||
        catalog::figure_status(base, field) != catalog::FigureStatus::sourced) {
      continue;
    }
    const double a = *field.number(gpu), b = *field.number(base);
    if (a == b) continue;
    differences.push_back(
        trf("{} {} ({}: {})", tr(field.label), show_value(field, gpu), base.id, show_value(field, base)));
  }
  return trf("Variant of {} ({}){}. Differs in: {}.", base.id, base.name,
             gpu.market ? trf(", sold in {}", *gpu.market) : std::string(),
             differences.empty() ? tr("no published figure") : text::join(differences, "; "));
}

void run_show(const ShowOptions& options) {
  const Catalog& catalog = Catalog::active();
  const Gpu& gpu = catalog.resolve(text::join(options.words, " "));
  auto source_numbers = [&gpu](std::string_view field) {
    std::vector<std::string> numbers;
    for (const catalog::Source* source : catalog::sources_for(gpu, field)) {
      numbers.push_back(fmt::format("[{}]", source - gpu.sources.data() + 1));
    }
    return text::join(numbers, " ");
  };

  if (options.format == Format::json) {
    Json j = gpu_json(gpu);
    Json field_sources = Json::object();
    for (const auto& field : catalog::fields()) {
      bool known = field.text ? field.text(gpu).has_value() : field.number(gpu).has_value();
      if (!known) continue;
      Json urls = Json::array();
      if (const catalog::Derivation* d = gpu.derivation(field.name)) {
        // A derived figure stands on the basis figure's sources and the rule's whitepaper.
        for (const catalog::Source* source : catalog::sources_for(gpu, d->basis_field)) urls.push_back(source->url);
        for (const auto& source : catalog.rule(d->rule)->sources) urls.push_back(source.url);
        field_sources[field.name] = std::move(urls);
        continue;
      }
      for (const catalog::Source* source : catalog::sources_for(gpu, field.name)) urls.push_back(source->url);
      field_sources[field.name] = std::move(urls);
    }
    j["field_sources"] = std::move(field_sources);
    emit(j.dump(2) + "\n");
    return;
  }

  report::Table table;
  table.columns = {{tr("Field"), "", report::Align::left, 0},
                   {tr("Key"), "", report::Align::left, 2},
                   {tr("Value"), "", report::Align::right, 0},
                   {tr("Source"), "", report::Align::left, 0}};
  // The rules the derived figures come from are numbered after the GPU's own sources.
  std::vector<const catalog::DerivationRule*> rules;
  auto rule_number = [&](const std::string& id) {
    const catalog::DerivationRule* rule = catalog.rule(id);
    auto at = std::find(rules.begin(), rules.end(), rule);
    if (at == rules.end()) at = rules.insert(rules.end(), rule);
    return gpu.sources.size() + static_cast<std::size_t>(at - rules.begin()) + 1;
  };
  for (const auto& field : catalog::fields()) {
    std::string value = show_value(field, gpu);
    std::string source;
    if (const catalog::Derivation* d = gpu.derivation(field.name)) {
      source = trf("derived: {} {} x {} ({}) [{}]", report::format_number(d->basis, 0, kGroupFrom), d->basis_field,
                   catalog::ratio_text(d->ratio), d->rule, rule_number(d->rule));
    } else if (catalog::figure_status(gpu, field) == catalog::FigureStatus::sourced) {
      source = source_numbers(field.name);
    }
    table.add_row({tr(field.label), field.name, value, source});
  }
  const catalog::Derived derived = catalog::derive(gpu);
  for (const auto& metric : catalog::derived_metrics()) {
    const auto& value = derived.*(metric.member);
    const bool from_derived = catalog::find_metric(metric.name, "show").status(gpu) == catalog::FigureStatus::derived;
    table.add_row({tr(metric.label), metric.name,
                   value ? report::format_number(*value, metric.decimals, kGroupFrom) +
                               (from_derived ? kDerivedMarker : "") + " " + metric.unit
                         : tr("n/a"),
                   value ? (from_derived ? tr("computed from a derived figure") : tr("computed")) : ""});
  }
  for (std::size_t i = 0; i < gpu.sources.size(); ++i) {
    const auto& source = gpu.sources[i];
    std::string scope = source.fields.empty() ? "" : " (" + text::join(source.fields) + ")";
    table.notes.push_back(fmt::format("[{}] {}{}: {}", i + 1, source.title, scope, source.url));
  }
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const catalog::DerivationRule& rule = *rules[i];
    std::vector<std::string> titles;
    for (const auto& source : rule.sources) titles.push_back(fmt::format("{}: {}", source.title, source.url));
    table.notes.push_back(
        trf("[{}] rule '{}', from {}: {}", gpu.sources.size() + i + 1, rule.id, rule.basis, text::join(titles, "; ")));
  }
  if (gpu.variant_of) table.notes.push_back(variant_note(catalog, gpu));
  table.notes.push_back(trf(
      "Catalog: {}. Tensor figures are dense; {}: derived from the AI TOPS figure by the rule; {}: the hardware lacks "
      "the precision; {}: not published.",
      catalog.origin(), kDerivedMarker, kUnsupported, kUnpublished));
  std::string heading = fmt::format("{} ({})\n\n", gpu.name, gpu.id);
  if (options.format == Format::markdown) {
    emit("## " + heading + report::render_markdown(table));
  } else {
    emit(heading + report::render_text(table, terminal_width()));
  }
}

}  // namespace

void add_gpus_command(CLI::App& app) {
  auto list = std::make_shared<ListOptions>();
  auto show = std::make_shared<ShowOptions>();
  auto* command = app.add_subcommand("gpus", i18n::N_("Compare GPUs from the catalog: specs, prices, derived metrics"));
  command->footer(
      "Examples:\n"
      "  gpusage gpus                                # the RTX 50 series\n"
      "  gpusage gpus --family all --sort fp16_tflops_per_usd\n"
      "  gpusage gpus --gpu \"RTX 5090,4090,h100-sxm5-80gb\" --chart gpus.svg\n"
      "  gpusage gpus show \"RTX 5070 Ti\"");
  auto* family =
      command
          ->add_option(
              "--family", list->family,
              i18n::N_("rtx50|rtx40|rtx30|rtx20|gtx|laptop|datacenter|workstation|china|all, or a comma list of them"))
          ->default_str("rtx50");
  auto* gpus = command->add_option("--gpu", list->gpus, i18n::N_("GPUs by id, name or family, comma separated"));
  family->excludes(gpus);
  command->add_option("--sort", list->sort, i18n::N_("Sort by a numeric field or derived metric, highest first"));
  add_format_option(*command, list->format, {Format::table, Format::markdown, Format::csv, Format::json});
  auto* chart =
      command->add_option("--chart", list->chart,
                          i18n::N_("Also draw the comparison: FILE.svg (grouped bars) or FILE.html (the report page)"));
  command->add_option("--metrics", list->metrics, i18n::N_("Chart metrics, comma separated"))
      ->default_str(kDefaultChartMetrics)
      ->needs(chart);
  command->add_flag("--wide", list->wide, i18n::N_("Never drop table columns to fit the terminal"));

  auto* show_command = command->add_subcommand("show", i18n::N_("Every field of one GPU, with the source behind each"));
  show_command->footer("Examples:\n  gpusage gpus show rtx5090\n  gpusage gpus show 5070 ti --format json");
  show_command->add_option("gpu", show->words, i18n::N_("GPU id or name (\"RTX 5090\", \"5070 ti\")"))->required();
  add_format_option(*show_command, show->format, {Format::table, Format::markdown, Format::json});
  show_command->callback([show] { run_show(*show); });

  command->require_subcommand(0, 1);
  command->callback([list, show_command] {
    if (show_command->parsed()) return;
    run_list(*list);
  });
}

}  // namespace gpusage::cli
