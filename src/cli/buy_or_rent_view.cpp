// "Buy an RTX 5090 or rent an H100?": the cost report's pairs (build_cost_report) as a table, as sentences, as
// JSON and as the CSV of the whole cost report. A renderer: the pairs are computed by core/cost (buy_or_rent).
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "cli/cost_view.hpp"
#include "core/common/i18n.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

namespace {

using i18n::tr;
using i18n::trf;

// More pairs than this and the text shows each bought card against the cheapest rental and against itself.
constexpr std::size_t kMaxPairRows = 30;
// Sentences only for a handful of pairs of two different cards ("buy an RTX 5090 or rent an H100").
constexpr std::size_t kMaxSentences = 4;

// A count of jobs or hours: one decimal under 10, thousands separated from 1,000.
std::string count_text(double value) { return report::format_number(value, value < 10 ? 1 : 0, 1000); }

std::string range_text(const cost::Range& r) {
  if (r.low == r.estimate && r.high == r.estimate) return count_text(r.estimate);
  if (std::isinf(r.high)) return trf("{} ({} or more)", count_text(r.estimate), count_text(r.low));
  return fmt::format("{} ({}-{})", count_text(r.estimate), count_text(r.low), count_text(r.high));
}

const estimate::Prediction& bought_of(const CostReport& report, const BuyRentPair& pair) {
  return *report.rows[pair.bought].prediction;
}
const estimate::Prediction& rented_of(const CostReport& report, const BuyRentPair& pair) {
  return *report.rows[pair.rented].prediction;
}

// The pairs the text shows: all of them, or when there are many, each bought card against the cheapest
// rental of the job and against renting itself.
std::vector<const BuyRentPair*> shown_pairs(const CostReport& report) {
  std::vector<const BuyRentPair*> shown;
  const bool all = report.buy_or_rent.size() <= kMaxPairRows;
  for (const auto& pair : report.buy_or_rent) {
    const bool cheapest = report.cheapest_rental == &report.rows[pair.rented];
    if (all || cheapest || pair.bought == pair.rented) shown.push_back(&pair);
  }
  return shown;
}

std::string sentence(const CostReport& report, const BuyRentPair& pair) {
  const std::string bought = counted(bought_of(report, pair), bought_of(report, pair).gpu->name);
  const std::string rented = counted(rented_of(report, pair), rented_of(report, pair).gpu->name);
  if (!pair.result.jobs) {
    return trf("Buy {0} or rent {1}? Renting {1} costs less per job than {0}'s electricity: buying never pays off.",
               bought, rented);
  }
  return trf("Buy {} or rent {}? Buying pays off after {} jobs, {} hours of training on the {} (80% ranges).", bought,
             rented, range_text(*pair.result.jobs), range_text(*pair.result.hours), bought);
}

// "26 (15-40)", "26 (15 or more)" when the range has no upper end, "never".
std::string jobs_text(const std::optional<cost::Range>& jobs) { return jobs ? range_text(*jobs) : tr("never"); }

}  // namespace

report::Table buy_or_rent_table(const CostReport& report) {
  report::Table table;
  table.columns = {{"buy", "", report::Align::left},
                   {"or rent", "", report::Align::left},
                   {"buying pays off after", "jobs (80% range)"},
                   {"training until then", "h on the bought card"}};
  table.units_on_own_line = true;
  const std::vector<const BuyRentPair*> shown = shown_pairs(report);
  for (const BuyRentPair* pair : shown) {
    const estimate::Prediction& bought = bought_of(report, *pair);
    const estimate::Prediction& rented = rented_of(report, *pair);
    const std::string rented_name = pair->bought == pair->rented ? tr("the same") : counted(rented, rented.gpu->name);
    table.add_row({counted(bought, bought.gpu->name), rented_name, jobs_text(pair->result.jobs),
                   pair->result.hours ? range_text(*pair->result.hours) : tr("never")});
  }
  table.notes.push_back(
      tr("buying pays off after: the jobs of this size after which buying the first card(s) has cost less than "
         "renting the second for the same jobs, the purchase over (the rented job's bill less the bought card's "
         "electricity for the job); and the same in hours of training on the bought card(s). A card against "
         "itself: the purchase over (the hourly rent less the electricity), whatever the job."));
  table.notes.push_back(
      tr("80% range: the two cards' throughput ranges paired at the ends that make the saving per job largest and "
         "smallest (their errors taken as independent); 'or more': at the slow end renting saves nothing."));
  if (shown.size() < report.buy_or_rent.size()) {
    table.notes.push_back(
        trf("{} of {} pairs shown: each card bought against the cheapest rental of the job and "
            "against renting itself; --format json or csv lists every pair.",
            shown.size(), report.buy_or_rent.size()));
  }
  table.dropped_hint = i18n::N_("widen the terminal (COLUMNS=200), or plan --cost --format json for every figure");
  return table;
}

std::string buy_or_rent_text(const CostReport& report, int width) {
  if (report.buy_or_rent.empty()) {
    return "\n" +
           tr("Buy or rent: no pair to compare. A card to buy must fit and have a purchase price (--price ID=USD) "
              "and the electricity price (--electricity); a card to rent must fit and have an on-demand price "
              "(--rent ID=USD/h).") +
           "\n";
  }
  std::string out = "\n" + tr("Buy one card or rent another, for jobs of this size:") + "\n";
  std::vector<const BuyRentPair*> different;
  for (const auto& pair : report.buy_or_rent) {
    if (bought_of(report, pair).gpu != rented_of(report, pair).gpu) different.push_back(&pair);
  }
  if (!different.empty() && different.size() <= kMaxSentences) {
    for (const BuyRentPair* pair : different) out += "  " + sentence(report, *pair) + "\n";
    out += "\n";
  }
  return out + report::render_text(buy_or_rent_table(report), width);
}

nlohmann::json buy_or_rent_json(const CostReport& report) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& pair : report.buy_or_rent) {
    const CostRow& bought = report.rows[pair.bought];
    const CostRow& rented = report.rows[pair.rented];
    pairs.push_back({{"buy", bought.prediction->gpu->id},
                     {"buy_gpus", bought.inputs.gpus},
                     {"rent", rented.prediction->gpu->id},
                     {"rent_gpus", rented.inputs.gpus},
                     {"purchase_usd", *bought.inputs.purchase_usd_per_gpu * bought.inputs.gpus},
                     {"rented_job_usd", range_json(rented.cost.rent_usd)},
                     {"owned_electricity_usd", range_json(bought.cost.electricity_usd)},
                     {"break_even_jobs", range_json(pair.result.jobs)},
                     {"break_even_hours", range_json(pair.result.hours)}});
  }
  return pairs;
}

std::string cost_csv(const CostReport& report) {
  report::Table table;
  for (const char* name : {"gpu",
                           "gpus",
                           "batch",
                           "fits",
                           "wall_time_h",
                           "wall_time_h_low",
                           "wall_time_h_high",
                           "energy_kwh",
                           "board_power_w",
                           "purchase_usd_per_gpu",
                           "purchase_kind",
                           "rent_usd_per_gpu_hour",
                           "rent_provider",
                           "rented_job_usd",
                           "rented_job_usd_low",
                           "rented_job_usd_high",
                           "owned_job_usd",
                           "owned_job_usd_low",
                           "owned_job_usd_high",
                           "rent_instead",
                           "rent_instead_gpus",
                           "break_even_jobs",
                           "break_even_jobs_low",
                           "break_even_jobs_high",
                           "break_even_hours",
                           "break_even_hours_low",
                           "break_even_hours_high"}) {
    table.columns.push_back({name, ""});
  }
  auto number = [](double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); };
  auto three = [&](const std::optional<cost::Range>& r) -> std::vector<std::string> {
    if (!r) return {"", "", ""};
    return {number(r->estimate), number(r->low), number(r->high)};
  };
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const CostRow& row = report.rows[i];
    const estimate::Prediction& p = *row.prediction;
    std::vector<std::string> cells = {p.gpu->id, std::to_string(row.inputs.gpus),
                                      std::to_string(p.config.batch_per_gpu), p.fits ? "true" : "false"};
    for (auto& c : three(p.fits ? std::optional<cost::Range>(row.cost.hours) : std::nullopt)) cells.push_back(c);
    cells.push_back(p.fits ? number(row.cost.energy_kwh.estimate) : "");
    cells.push_back(number(row.inputs.board_power_w));
    cells.push_back(row.purchase ? number(row.purchase->price.value) : "");
    cells.push_back(row.purchase ? row.purchase->kind : "");
    cells.push_back(row.rent ? number(row.rent->price.value) : "");
    cells.push_back(row.rent ? row.rent->price.provider : "");
    for (auto& c : three(row.cost.rent_usd)) cells.push_back(c);
    for (auto& c : three(row.cost.owned_usd)) cells.push_back(c);
    bool paired = false;
    for (const auto& pair : report.buy_or_rent) {
      if (pair.bought != i) continue;
      paired = true;
      std::vector<std::string> line = cells;
      line.push_back(rented_of(report, pair).gpu->id);
      line.push_back(std::to_string(report.rows[pair.rented].inputs.gpus));
      for (auto& c : three(pair.result.jobs)) line.push_back(c);
      for (auto& c : three(pair.result.hours)) line.push_back(c);
      table.add_row(std::move(line));
    }
    if (!paired) {
      cells.resize(table.columns.size());
      table.add_row(std::move(cells));
    }
  }
  return report::render_csv(table);
}

}  // namespace gpusage::cli
