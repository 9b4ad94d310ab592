// `plan --cost` and `guide --cost`: what a training job costs on each card, owned or rented. The options,
// the report built from a plan sweep and the prices (core/cost), and its table and JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/cost.hpp"
#include "core/cost/prices.hpp"
#include "core/estimate/sweep.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

// guide --cost and report --cost cost a vision model's training when no job is given: torchvision's reference
// recipe trains ResNet-50 on ImageNet for 90 epochs (references/classification/train.py, --epochs default 90).
inline constexpr double kReferenceVisionEpochs = 90;

struct CostOptions {
  bool enabled = false;
  std::optional<double> epochs;
  std::optional<double> tokens;
  std::optional<double> steps;
  std::vector<std::string> prices;  // --price ID=USD, repeatable or comma separated
  std::vector<std::string> rents;   // --rent ID=USD/h
  std::vector<std::string> powers;  // --power ID=W
  std::string electricity;          // --electricity USD/kWh
  double amortize_hours = 8760;
  std::optional<double> default_epochs;  // guide and report: a vision model's job when none is given

  void add_to(CLI::App& command);
  // Throws InputError when a job or price option is given without --cost.
  void check_given_with_cost() const;
  // The job's size, from --tokens, --steps, or --epochs over the dataset (--dataset-size, else the
  // workload's default). Throws InputError when none or several are given.
  cost::JobSize job(const estimate::Sweep& sweep, double dataset_size) const;
  cost::PriceOverrides overrides() const;
};

// A price as a row uses it: the figure, where it came from, and whether it is past the book's age.
struct UsedPrice {
  cost::DatedPrice price;
  std::string kind;  // "street", "launch MSRP", "on-demand", or the option that gave it ("--price")
  bool stale = false;
  int age_days = 0;
};

// One configuration of the sweep (a card on N GPUs at its fastest fitting batch) and what the job costs.
struct CostRow {
  const estimate::Prediction* prediction = nullptr;
  cost::CostInputs inputs;
  cost::JobCost cost;
  std::optional<UsedPrice> purchase;  // per GPU
  std::optional<UsedPrice> rent;      // per GPU-hour
  std::string power_basis;            // "TDP" or "--power"
};

// Buying one configuration of the report against renting another (or the same) for the same jobs: indices
// into CostReport::rows.
struct BuyRentPair {
  std::size_t bought = 0;
  std::size_t rented = 0;
  cost::BuyOrRent result;
};

struct CostReport {
  cost::JobSize job;
  std::string job_text;  // "1e9 tokens (244,141 samples of 4,096 tokens)"
  std::string today;
  std::vector<CostRow> rows;
  const CostRow* cheapest_rental = nullptr;
  // Every configuration that fits and can be bought (a purchase price and an electricity price) against every
  // one that fits and can be rented, in the rows' order: "buy an RTX 5090 or rent an H100?".
  std::vector<BuyRentPair> buy_or_rent;
  std::optional<cost::DatedPrice> electricity;  // in force (value from --electricity when given)
  bool electricity_overridden = false;
  double amortize_hours = 0;
  int stale_after_days = 0;  // the price book's
};

// `today` is "YYYY-MM-DD" (the CLI's clock, or GPUSAGE_TODAY): prices older than the book's
// stale_after_days on that day are flagged.
CostReport build_cost_report(const estimate::Sweep& sweep, const CostOptions& options, double dataset_size,
                             const cost::PriceBook& book, const std::string& today);
// The report when --cost is on (the command has called check_given_with_cost before its sweep), with the built-in
// prices and today's date; nullopt without --cost. What plan, guide and report call.
std::optional<CostReport> cost_report_if_asked(const estimate::Sweep& sweep, const CostOptions& options,
                                               double dataset_size);
std::string cost_table(const CostReport& report, int width);
// The table alone (columns, rows, notes), for the text above and the report page's sortable table.
report::Table cost_table_model(const CostReport& report);
// Every price the report used: "rtx5090: <title> (2026-01-05, 334 days old, stale): <url>".
std::vector<std::string> cost_sources(const CostReport& report);
nlohmann::json cost_json(const CostReport& report);
// One CSV row per configuration and rented alternative (a configuration nobody can buy, or with no rental to
// compare, has one row with the comparison's columns empty): every figure of the table with its range.
std::string cost_csv(const CostReport& report);

// The buy-or-rent comparison (buy_or_rent_view.cpp): the table of pairs, a sentence for each pair of two
// different cards when they are few, and the pairs as JSON and as CSV columns.
std::string buy_or_rent_text(const CostReport& report, int width);
report::Table buy_or_rent_table(const CostReport& report);
nlohmann::json buy_or_rent_json(const CostReport& report);
// {"estimate", "low", "high"}; null for an empty range, and null for an end that is infinite.
nlohmann::json range_json(const std::optional<cost::Range>& r);
// A card's name or id, prefixed "8x " when the configuration runs on several GPUs.
std::string counted(const estimate::Prediction& p, const std::string& card);

// Today's date as the cost report counts prices' ages: $GPUSAGE_TODAY (YYYY-MM-DD, so that tests and
// goldens do not age) or the UTC date of the clock.
std::string cost_today();

}  // namespace gpusage::cli
