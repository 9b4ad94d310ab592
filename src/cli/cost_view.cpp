#include "cli/cost_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/json.hpp"
#include "core/common/text.hpp"
#include "core/common/time.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

void CostOptions::add_to(CLI::App& command) {
  command.add_flag(
      "--cost", enabled,
      i18n::N_("What the job costs on each card, owned or rented: wall time, energy, rental bill, owned cost, "
               "and when buying one card pays off against renting it or another (give the job: --tokens, "
               "--steps or --epochs; --format csv: one row per card and rented alternative)"));
  command
      .add_option("--epochs", epochs, i18n::N_("The job: epochs over --dataset-size (vision: ImageNet-1k by default)"))
      ->check(CLI::Range(1e-6, 1e6));
  command.add_option("--tokens", tokens, i18n::N_("The job: training tokens (language models), e.g. 1e9"))
      ->check(CLI::Range(1.0, 1e16));
  command.add_option("--steps", steps, i18n::N_("The job: optimizer steps"))->check(CLI::Range(1.0, 1e12));
  command
      .add_option("--price", prices,
                  i18n::N_("Purchase price per card instead of the data's: ID=USD, e.g. rtx5090=2199"))
      ->delimiter(',');
  command
      .add_option("--rent", rents,
                  i18n::N_("On-demand price per GPU-hour instead of the data's: ID=USD/h, e.g. "
                           "h100-sxm5-80gb=2.49/h"))
      ->delimiter(',');
  command
      .add_option("--power", powers,
                  i18n::N_("Board power under training per GPU, e.g. measured with gpusage monitor: "
                           "ID=W, e.g. rtx5090=540W (default: the card's TDP)"))
      ->delimiter(',');
  command.add_option("--electricity", electricity,
                     i18n::N_("Electricity price in USD per kWh, e.g. 0.30/kWh "
                              "(default: data/prices.toml's US average)"));
  command
      .add_option("--amortize-hours", amortize_hours,
                  i18n::N_("Hours of use a bought card's price is spread over in the owned cost"))
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
}

void CostOptions::check_given_with_cost() const {
  if (enabled) return;
  if (epochs || tokens || steps || !prices.empty() || !rents.empty() || !powers.empty() || !electricity.empty()) {
    throw InputError(
        i18n::tr("--epochs, --tokens, --steps, --price, --rent, --power and --electricity describe a job's "
                 "cost: add --cost"));
  }
}

cost::JobSize CostOptions::job(const estimate::Sweep& sweep, double dataset_size) const {
  if (int(bool(epochs)) + int(bool(tokens)) + int(bool(steps)) > 1) {
    throw InputError(i18n::tr("--cost takes one job size: --epochs N, --tokens T or --steps S, not several"));
  }
  if (tokens) return {cost::JobUnit::tokens, *tokens};
  if (steps) return {cost::JobUnit::steps, *steps};
  const std::optional<double> e =
      epochs ? epochs : (sweep.workload.domain == workload::Domain::vision ? default_epochs : std::nullopt);
  if (!e) {
    throw InputError(
        i18n::tr("--cost needs the job's size: --tokens T (language models), --steps S, or --epochs N "
                 "(over --dataset-size)"));
  }
  const double dataset = dataset_size > 0 ? dataset_size : estimate::default_dataset_size(sweep.workload);
  if (!(dataset > 0)) {
    throw InputError(i18n::trf("--epochs {} needs --dataset-size N (samples per epoch) for {}; or give --tokens T", *e,
                               sweep.workload.display_name));
  }
  return {cost::JobUnit::samples, dataset * *e};
}

cost::PriceOverrides CostOptions::overrides() const {
  const catalog::Catalog& catalog = catalog::Catalog::active();
  cost::PriceOverrides out;
  for (const auto& value : prices) cost::parse_price_override(value, catalog, out);
  for (const auto& value : rents) cost::parse_rent_override(value, catalog, out);
  for (const auto& value : powers) cost::parse_power_override(value, catalog, out);
  if (!electricity.empty()) cost::parse_electricity_override(electricity, out);
  return out;
}

std::string cost_today() {
  if (const char* pinned = std::getenv("GPUSAGE_TODAY"); pinned && *pinned) {
    cost::age_in_days(pinned, pinned);  // throws InputError naming it unless it is a date
    return pinned;
  }
  return wallclock::iso_utc(wallclock::unix_now_s(), false).substr(0, 10);
}

namespace {

UsedPrice used(const cost::DatedPrice& price, std::string kind, const cost::PriceBook& book, const std::string& today) {
  UsedPrice out{price, std::move(kind)};
  if (!price.as_of.empty()) {
    out.age_days = cost::age_in_days(price.as_of, today);
    out.stale = out.age_days > book.stale_after_days;
  }
  return out;
}

UsedPrice typed(double value, const char* option) { return UsedPrice{cost::DatedPrice{value, "", "", "", ""}, option}; }

std::optional<UsedPrice> purchase_price(const catalog::Gpu& gpu, const cost::PriceOverrides& overrides,
                                        const cost::PriceBook& book, const std::string& today) {
  if (auto it = overrides.purchase_usd.find(gpu.id); it != overrides.purchase_usd.end()) {
    return typed(it->second, "--price");
  }
  if (auto it = book.street.find(gpu.id); it != book.street.end()) return used(it->second, "street", book, today);
  if (gpu.msrp_usd) {
    // The catalog's launch price: dated by the launch, sourced in data/gpus.toml; never stale (it is history).
    return UsedPrice{cost::DatedPrice{*gpu.msrp_usd, gpu.launch_date, "launch MSRP (data/gpus.toml)", "", ""},
                     "launch MSRP"};
  }
  return std::nullopt;
}

std::optional<UsedPrice> rent_price(const catalog::Gpu& gpu, const cost::PriceOverrides& overrides,
                                    const cost::PriceBook& book, const std::string& today) {
  if (auto it = overrides.rent_usd_per_gpu_hour.find(gpu.id); it != overrides.rent_usd_per_gpu_hour.end()) {
    return typed(it->second, "--rent");
  }
  if (const cost::DatedPrice* price = book.cheapest_rent(gpu.id)) return used(*price, "on-demand", book, today);
  return std::nullopt;
}

// Each card (on its GPU count) once: the fastest batch that fits, else its first prediction (not fitting).
std::vector<const estimate::Prediction*> best_per_configuration(const estimate::Sweep& sweep) {
  std::vector<const estimate::Prediction*> best;
  for (const auto& p : sweep.predictions) {
    auto it = std::find_if(best.begin(), best.end(), [&](auto* b) { return b->gpu == p.gpu; });
    if (it == best.end()) {
      best.push_back(&p);
    } else if (p.fits && (!(*it)->fits || p.throughput > (*it)->throughput)) {
      *it = &p;
    }
  }
  return best;
}

}  // namespace

std::string counted(const estimate::Prediction& p, const std::string& card) {
  const int gpus = p.config.world_size();
  return gpus > 1 ? fmt::format("{}x {}", gpus, card) : card;
}

CostReport build_cost_report(const estimate::Sweep& sweep, const CostOptions& options, double dataset_size,
                             const cost::PriceBook& book, const std::string& today) {
  CostReport report;
  report.job = options.job(sweep, dataset_size);
  report.today = today;
  report.amortize_hours = options.amortize_hours;
  report.stale_after_days = book.stale_after_days;
  const cost::PriceOverrides overrides = options.overrides();
  if (overrides.electricity_usd_per_kwh) {
    report.electricity = cost::DatedPrice{*overrides.electricity_usd_per_kwh, "", "--electricity", "", ""};
    report.electricity_overridden = true;
  } else {
    report.electricity = book.electricity;
  }
  for (const estimate::Prediction* p : best_per_configuration(sweep)) {
    CostRow row;
    row.prediction = p;
    const catalog::Gpu& gpu = *p->gpu;
    row.purchase = purchase_price(gpu, overrides, book, today);
    row.rent = rent_price(gpu, overrides, book, today);
    auto power = overrides.board_power_w.find(gpu.id);
    row.power_basis = power != overrides.board_power_w.end() ? "--power" : "TDP";
    cost::CostInputs& in = row.inputs;
    in.throughput = p->throughput;
    in.throughput_low = p->throughput_low > 0 ? p->throughput_low : p->throughput;
    in.throughput_high = p->throughput_high > 0 ? p->throughput_high : p->throughput;
    in.gpus = p->config.world_size();
    in.samples_per_step = p->effective_batch;
    in.tokens_per_sample = p->tokens_per_s ? *p->tokens_per_s / p->throughput : 0;
    in.board_power_w = power != overrides.board_power_w.end() ? power->second : gpu.tdp_w;
    if (row.rent) in.rent_usd_per_gpu_hour = row.rent->price.value;
    if (row.purchase) in.purchase_usd_per_gpu = row.purchase->price.value;
    if (report.electricity) in.electricity_usd_per_kwh = report.electricity->value;
    in.amortize_hours = options.amortize_hours;
    if (p->fits) row.cost = cost::cost_of_job(in, report.job);
    report.rows.push_back(std::move(row));
  }
  for (const auto& row : report.rows) {
    if (!row.prediction->fits || !row.cost.rent_usd) continue;
    if (!report.cheapest_rental || row.cost.rent_usd->estimate < report.cheapest_rental->cost.rent_usd->estimate) {
      report.cheapest_rental = &row;
    }
  }
  for (std::size_t bought = 0; bought < report.rows.size(); ++bought) {
    const CostRow& own = report.rows[bought];
    if (!own.prediction->fits) continue;
    for (std::size_t rented = 0; rented < report.rows.size(); ++rented) {
      const CostRow& other = report.rows[rented];
      if (!other.prediction->fits) continue;
      if (auto result = cost::buy_or_rent(own.inputs, own.cost, other.cost, bought == rented)) {
        report.buy_or_rent.push_back({bought, rented, *result});
      }
    }
  }
  const estimate::Prediction* first = report.rows.empty() ? nullptr : report.rows.front().prediction;
  switch (report.job.unit) {
    case cost::JobUnit::tokens:
      report.job_text = i18n::trf("{:g} tokens", report.job.amount);
      if (first && first->tokens_per_s) {
        const double tokens_per_sample = *first->tokens_per_s / first->throughput;
        report.job_text +=
            i18n::trf(" ({} samples of {:.0f} tokens)",
                      report::format_number(report.job.amount / tokens_per_sample, 0, 1000), tokens_per_sample);
      }
      break;
    case cost::JobUnit::steps:
      report.job_text = i18n::trf("{} optimizer steps", report::format_number(report.job.amount, 0, 1000));
      break;
    case cost::JobUnit::samples: {
      const double epochs = options.epochs.value_or(options.default_epochs.value_or(1));
      report.job_text =
          i18n::trf("{:g} epochs of {} samples", epochs, report::format_number(report.job.amount / epochs, 0, 1000));
      break;
    }
  }
  return report;
}

namespace {

// "$1,234 (980–1,560)": a money figure with its 80% range.
std::string usd_text(const std::optional<cost::Range>& r) {
  if (!r) return i18n::tr("n/a");
  const int decimals = r->estimate < 1 ? 2 : r->estimate < 10 ? 1 : 0;
  return fmt::format("{} ({}-{})", report::format_number(r->estimate, decimals, 1000),
                     report::format_number(r->low, decimals, 1000), report::format_number(r->high, decimals, 1000));
}

// Hours with one decimal and the range ("20.0 (19.0-32.3)"): narrow enough for a terminal.
std::string hours_text(const cost::Range& r) {
  const int decimals = r.high < 0.1 ? 3 : r.high < 1 ? 2 : 1;
  return fmt::format("{} ({}-{})", report::format_number(r.estimate, decimals, 1000),
                     report::format_number(r.low, decimals, 1000), report::format_number(r.high, decimals, 1000));
}

std::string price_cell(const std::optional<UsedPrice>& price, int decimals) {
  if (!price) return i18n::tr("none");
  const std::string from = !price->price.provider.empty() ? price->price.provider
                           : price->kind == "launch MSRP" ? "MSRP"
                                                          : price->kind;
  return fmt::format("{} {}{}", report::format_number(price->price.value, decimals, 1000), from,
                     price->stale ? "*" : "");
}

nlohmann::json price_json(const std::optional<UsedPrice>& p) {
  if (!p) return nullptr;
  return {{"value", p->price.value},
          {"kind", p->kind},
          {"provider", p->price.provider.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->price.provider)},
          {"as_of", p->price.as_of.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->price.as_of)},
          {"source", p->price.title.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->price.title)},
          {"url", p->price.url.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->price.url)},
          {"age_days",
           p->price.as_of.empty() || p->kind == "launch MSRP" ? nlohmann::json(nullptr) : nlohmann::json(p->age_days)},
          {"stale", p->stale}};
}

}  // namespace

nlohmann::json range_json(const std::optional<cost::Range>& r) {
  if (!r) return nullptr;
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"estimate", finite(r->estimate)}, {"low", finite(r->low)}, {"high", finite(r->high)}};
}

report::Table cost_table_model(const CostReport& report) {
  report::Table table;
  using i18n::tr;
  table.columns = {{"GPU", "", report::Align::left},
                   {tr("batch"), "", report::Align::right, 4},
                   {tr("wall time"), tr("h (80% range)")},
                   {tr("energy"), "kWh", report::Align::right, 3},
                   {tr("buy"), "USD/GPU", report::Align::right, 1},
                   {tr("rent"), "USD/GPU-h", report::Align::right, 1},
                   {tr("rented job"), "USD"},
                   {tr("owned job"), "USD"}};
  table.units_on_own_line = true;
  bool any_stale = false;
  for (const auto& row : report.rows) {
    const estimate::Prediction& p = *row.prediction;
    any_stale = any_stale || (row.purchase && row.purchase->stale) || (row.rent && row.rent->stale);
    if (!p.fits) {
      table.add_row({counted(p, p.gpu->name), "OOM", tr("does not fit"), tr("n/a"), price_cell(row.purchase, 0),
                     price_cell(row.rent, 2), tr("n/a"), tr("n/a")});
      continue;
    }
    const auto& c = row.cost;
    table.add_row({counted(p, p.gpu->name), report::format_number(p.config.batch_per_gpu), hours_text(c.hours),
                   report::format_number(c.energy_kwh.estimate, c.energy_kwh.estimate < 10 ? 2 : 0, 1000),
                   price_cell(row.purchase, 0), price_cell(row.rent, 2), usd_text(c.rent_usd), usd_text(c.owned_usd)});
  }
  table.notes.push_back(
      tr("Wall time and every cost carry plan's 80% range of throughput (in brackets; where the held-out "
         "errors of a card's cell lean one way, the range reaches from the estimate to that side)."));
  std::string power = tr("energy = board power x wall time x GPUs, at the card's TDP");
  if (std::any_of(report.rows.begin(), report.rows.end(), [](auto& r) { return r.power_basis == "--power"; })) {
    power += tr(" (at --power where given)");
  }
  table.notes.push_back(power + tr(": no measured board power under training is in the data yet, so TDP (an upper "
                                   "bound) stands in; GPU boards only, not the host."));
  if (report.electricity) {
    std::string from = "--electricity";
    if (!report.electricity_overridden) {
      const int age = cost::age_in_days(report.electricity->as_of, report.today);
      from = i18n::trf("data/prices.toml, as of {}{}", report.electricity->as_of,
                       age > report.stale_after_days ? tr(", stale") : "");
    }
    table.notes.push_back(i18n::trf(
        "owned job = electricity at {} USD/kWh ({}) + the purchase spread over {} h of use (--amortize-hours).",
        report.electricity->value, from, report::format_number(report.amortize_hours, 0, 1000)));
  } else {
    table.notes.push_back(tr("owned job: n/a, no electricity price (give --electricity USD/kWh)."));
  }
  table.dropped_hint = i18n::N_("widen the terminal (COLUMNS=200), or plan --cost --format json for every figure");
  table.notes.push_back(
      tr("buy: --price, else a dated street price, else the launch MSRP; rent: --rent, else the "
         "cheapest listed on-demand price; none: no published price in data/prices.toml."));
  if (any_stale) {
    table.notes.push_back(
        i18n::trf("*: stale, older than {} days on {}: check the source.", report.stale_after_days, report.today));
  }
  return table;
}

std::vector<std::string> cost_sources(const CostReport& report) {
  std::vector<std::string> sources;
  for (const auto& row : report.rows) {
    for (const auto* price : {row.purchase ? &*row.purchase : nullptr, row.rent ? &*row.rent : nullptr}) {
      if (!price || price->price.url.empty()) continue;
      std::string line =
          i18n::trf("{}: {} ({}, {} days old{}): {}", row.prediction->gpu->id, price->price.title, price->price.as_of,
                    price->age_days, price->stale ? i18n::tr(", stale") : "", price->price.url);
      if (std::find(sources.begin(), sources.end(), line) == sources.end()) sources.push_back(line);
    }
  }
  if (report.electricity && !report.electricity->url.empty()) {
    sources.push_back(i18n::trf("electricity: {} ({}): {}", report.electricity->title, report.electricity->as_of,
                                report.electricity->url));
  }
  return sources;
}

std::optional<CostReport> cost_report_if_asked(const estimate::Sweep& sweep, const CostOptions& options,
                                               double dataset_size) {
  if (!options.enabled) return std::nullopt;
  return build_cost_report(sweep, options, dataset_size, cost::builtin_price_book(), cost_today());
}

std::string cost_table(const CostReport& report, int width) {
  std::string out = i18n::trf("\nWhat the job costs: {}\n", report.job_text);
  out += report::render_text(cost_table_model(report), width);
  out += buy_or_rent_text(report, width);
  const std::vector<std::string> sources = cost_sources(report);
  if (!sources.empty()) {
    out += i18n::tr("\nPrices used (data/prices.toml; launch MSRPs: gpusage gpus show ID):\n");
    for (const auto& line : sources) out += "  - " + line + "\n";
  }
  return out;
}

nlohmann::json cost_json(const CostReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : report.rows) {
    const estimate::Prediction& p = *row.prediction;
    const auto& c = row.cost;
    const bool fits = p.fits;
    rows.push_back({
        {"gpu", p.gpu->id},
        {"gpu_name", p.gpu->name},
        {"gpus", p.config.world_size()},
        {"batch", p.config.batch_per_gpu},
        {"fits", fits},
        {"samples", fits ? nlohmann::json(c.samples) : nlohmann::json(nullptr)},
        {"wall_time_h", fits ? range_json(c.hours) : nlohmann::json(nullptr)},
        {"board_power_w", row.inputs.board_power_w},
        {"power_basis", row.power_basis},
        {"energy_kwh", fits ? range_json(c.energy_kwh) : nlohmann::json(nullptr)},
        {"purchase_usd_per_gpu", price_json(row.purchase)},
        {"rent_usd_per_gpu_hour", price_json(row.rent)},
        {"rent_usd", range_json(c.rent_usd)},
        {"electricity_usd", range_json(c.electricity_usd)},
        {"owned_usd", range_json(c.owned_usd)},
        {"break_even_hours", json_util::optional(c.break_even_hours)},
        {"break_even_jobs", range_json(c.break_even_jobs)},
    });
  }
  const char* unit = report.job.unit == cost::JobUnit::tokens  ? "tokens"
                     : report.job.unit == cost::JobUnit::steps ? "steps"
                                                               : "samples";
  nlohmann::json electricity = nullptr;
  if (report.electricity) {
    electricity = {
        {"usd_per_kwh", report.electricity->value},
        {"as_of",
         report.electricity->as_of.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.electricity->as_of)},
        {"source", report.electricity->title},
        {"url", report.electricity->url.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.electricity->url)}};
  }
  return {
      {"job", {{"unit", unit}, {"amount", report.job.amount}, {"text", report.job_text}}},
      {"today", report.today},
      {"stale_after_days", report.stale_after_days},
      {"interval", {{"coverage", 0.8}, {"from", "plan's throughput range, propagated"}}},
      {"electricity", electricity},
      {"amortize_hours", report.amortize_hours},
      {"cheapest_rental", report.cheapest_rental ? nlohmann::json(counted(*report.cheapest_rental->prediction,
                                                                          report.cheapest_rental->prediction->gpu->id))
                                                 : nlohmann::json(nullptr)},
      {"rows", rows},
      {"buy_or_rent", buy_or_rent_json(report)}};
}

}  // namespace gpusage::cli
