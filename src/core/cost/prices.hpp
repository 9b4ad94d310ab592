// Prices as data: data/prices.toml (compiled in) holds dated, sourced street prices, on-demand rental
// prices and the electricity price; users override any of them (--price, --rent, --electricity, --power).
// Pure: no clock here. The caller passes "today" where a price's age matters.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog/catalog.hpp"

namespace gpusage::cost {

// One published figure: its value, the date it held, and where it was published.
struct DatedPrice {
  double value = 0;   // USD, USD per GPU-hour or USD per kWh, as the owner says
  std::string as_of;  // "YYYY-MM-DD" or "YYYY-MM"
  std::string title;
  std::string url;
  std::string provider;  // rentals: who rents it out ("Lambda"); empty otherwise
};

struct PriceBook {
  int stale_after_days = 180;
  std::optional<DatedPrice> electricity;                // USD per kWh
  std::map<std::string, DatedPrice> street;             // catalog id -> USD
  std::map<std::string, std::vector<DatedPrice>> rent;  // catalog id -> USD per GPU-hour, one per provider

  // The cheapest listed on-demand rental of the card; null when none is listed.
  const DatedPrice* cheapest_rent(const std::string& gpu_id) const;
};

// Parses price text. Every GPU id must be in `catalog`. Throws InputError naming `origin`, the entry and
// the field for any problem (unknown keys, a missing source or date, a non-positive price).
PriceBook parse_price_book(std::string_view toml_text, const std::string& origin, const catalog::Catalog& catalog);
// data/prices.toml as compiled in, checked against the built-in catalog.
const PriceBook& builtin_price_book();

// Days from `as_of` ("YYYY-MM-DD"; "YYYY-MM" counts from the month's first day) to `today`
// ("YYYY-MM-DD"). Throws InputError when either is not such a date.
int age_in_days(const std::string& as_of, const std::string& today);

// What the user typed instead of the data file, per catalog id.
struct PriceOverrides {
  std::map<std::string, double> purchase_usd;           // --price ID=USD
  std::map<std::string, double> rent_usd_per_gpu_hour;  // --rent ID=USD/h
  std::map<std::string, double> board_power_w;          // --power ID=W (a measured figure, e.g. from monitor)
  std::optional<double> electricity_usd_per_kwh;        // --electricity USD/kWh
};

// Each parser reads one option's value and adds it to `overrides`. GPU names resolve as everywhere else
// (catalog::Catalog::resolve). A value must be a positive number, optionally with the unit shown:
//   --price rtx5090=2199 (or =$2199)   --rent h100-sxm5-80gb=2.49/h   --power rtx5090=540W
//   --electricity 0.30/kWh
// Throws InputError naming the option, the value and what is accepted.
void parse_price_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides);
void parse_rent_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides);
void parse_power_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides);
void parse_electricity_override(const std::string& value, PriceOverrides& overrides);

}  // namespace gpusage::cost
