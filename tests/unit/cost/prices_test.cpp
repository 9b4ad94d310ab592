// core/cost/prices: the price file, its dates, and the overrides users type.
#include "core/cost/prices.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "unit/input_error.hpp"

namespace gpusage::cost {
namespace {

using ::testing::HasSubstr;

const catalog::Catalog& cards() { return catalog::Catalog::builtin(); }

using gpusage::testing::input_error_message;

TEST(BuiltinPriceBook, EveryPriceHasASourceADateAndACatalogCard) {
  const PriceBook& book = builtin_price_book();
  EXPECT_EQ(book.stale_after_days, 180);
  ASSERT_TRUE(book.electricity);
  EXPECT_GT(book.electricity->value, 0);
  EXPECT_FALSE(book.rent.empty());
  for (const auto& [id, prices] : book.rent) {
    EXPECT_NE(cards().find(id), nullptr) << id;
    for (const auto& price : prices) {
      EXPECT_FALSE(price.provider.empty()) << id;
      EXPECT_THAT(price.url, HasSubstr("https://")) << id;
      EXPECT_NO_THROW(age_in_days(price.as_of, "2030-01-01")) << id;
    }
  }
  for (const auto& [id, price] : book.street) {
    EXPECT_NE(cards().find(id), nullptr) << id;
    EXPECT_FALSE(price.as_of.empty()) << id;
  }
}

TEST(BuiltinPriceBook, TheRentedCardsTheIssueNamesArePricedOrKnowinglyAbsent) {
  const PriceBook& book = builtin_price_book();
  for (const char* id : {"h100-sxm5-80gb", "h200-sxm-141gb", "b200", "a100-sxm4-80gb", "l40s", "rtx4090", "rtx5090"}) {
    EXPECT_NE(book.cheapest_rent(id), nullptr) << id;
  }
  EXPECT_EQ(book.cheapest_rent("rtx5050"), nullptr);  // nobody rents it: no price, not a guess
}

TEST(BuiltinPriceBook, TheCheapestProviderIsUsed) {
  const DatedPrice* h100 = builtin_price_book().cheapest_rent("h100-sxm5-80gb");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->provider, "Spheron");
  EXPECT_DOUBLE_EQ(h100->value, 2.90);
}

TEST(AgeInDays, CountsCalendarDaysAndTakesAMonthFromItsFirstDay) {
  EXPECT_EQ(age_in_days("2026-04-18", "2026-12-05"), 231);
  EXPECT_EQ(age_in_days("2025-06", "2025-06-11"), 10);
  EXPECT_EQ(age_in_days("2024-02-28", "2024-03-01"), 2);  // a leap year
  EXPECT_THROW(age_in_days("2026-13-01", "2026-12-05"), InputError);
  EXPECT_THROW(age_in_days("last week", "2026-12-05"), InputError);
}

constexpr const char* kValid = R"(schema_version = 1
stale_after_days = 90
[electricity]
usd_per_kwh = 0.25
as_of = "2026-01"
title = "t"
url = "https://example.org/e"
[[street]]
gpu = "rtx5090"
usd = 2500
as_of = "2026-02-01"
title = "t"
url = "https://example.org/s"
[[rent]]
gpu = "h100-sxm5-80gb"
provider = "A"
usd_per_gpu_hour = 3.0
as_of = "2026-03-01"
title = "t"
url = "https://example.org/a"
[[rent]]
gpu = "h100-sxm5-80gb"
provider = "B"
usd_per_gpu_hour = 2.5
as_of = "2026-03-02"
title = "t"
url = "https://example.org/b"
)";

TEST(ParsePriceBook, ReadsEveryKindOfPrice) {
  const PriceBook book = parse_price_book(kValid, "prices.toml", cards());
  EXPECT_EQ(book.stale_after_days, 90);
  EXPECT_DOUBLE_EQ(book.electricity->value, 0.25);
  EXPECT_DOUBLE_EQ(book.street.at("rtx5090").value, 2500);
  EXPECT_EQ(book.cheapest_rent("h100-sxm5-80gb")->provider, "B");
}

TEST(ParsePriceBook, MistakesNameTheEntryAndTheField) {
  auto parse = [](std::string text) { return input_error_message([&] { parse_price_book(text, "prices.toml", cards()); }); };
  std::string text = kValid;
  EXPECT_THAT(parse(std::string(text).replace(text.find("gpu = \"rtx5090\""), 15, "gpu = \"rtx9090\"")),
              HasSubstr("prices.toml: street #1: field 'gpu' 'rtx9090' is not a catalog id"));
  EXPECT_THAT(parse(std::string(text).replace(text.find("usd = 2500"), 10, "usd = -5")),
              HasSubstr("street #1: field 'usd' must be positive"));
  EXPECT_THAT(parse(std::string(text).replace(text.find("as_of = \"2026-03-01\""), 20, "date = \"2026-03-01\"")),
              HasSubstr("rent #1: field 'date' is not a price field"));
  EXPECT_THAT(parse(std::string(text).replace(text.find("provider = \"A\"\n"), 15, "")),
              HasSubstr("rent #1: field 'provider' is required"));
  EXPECT_THAT(parse(std::string(text).replace(text.find("\"2026-02-01\""), 12, "\"Feb 2026\"")),
              HasSubstr("'Feb 2026' is not a date"));
}

TEST(Overrides, ReadPricesAsUsersTypeThem) {
  PriceOverrides o;
  parse_price_override("rtx5090=2199", cards(), o);
  parse_price_override("RTX 4090=$1799", cards(), o);
  parse_rent_override("h100-sxm5-80gb=2.49/h", cards(), o);
  parse_rent_override("rtx5090=0.7", cards(), o);
  parse_power_override("rtx5090=540W", cards(), o);
  parse_electricity_override("0.30/kWh", o);
  EXPECT_DOUBLE_EQ(o.purchase_usd.at("rtx5090"), 2199);
  EXPECT_DOUBLE_EQ(o.purchase_usd.at("rtx4090"), 1799);
  EXPECT_DOUBLE_EQ(o.rent_usd_per_gpu_hour.at("h100-sxm5-80gb"), 2.49);
  EXPECT_DOUBLE_EQ(o.rent_usd_per_gpu_hour.at("rtx5090"), 0.7);
  EXPECT_DOUBLE_EQ(o.board_power_w.at("rtx5090"), 540);
  EXPECT_DOUBLE_EQ(*o.electricity_usd_per_kwh, 0.30);
}

TEST(Overrides, MistakesNameTheValueAndWhatIsAccepted) {
  PriceOverrides o;
  EXPECT_EQ(input_error_message([&] { parse_price_override("rtx5090=abc", cards(), o); }),
            "--price 'rtx5090=abc': 'abc' is not a positive number; give --price ID=AMOUNT, e.g. --price rtx5090=2199");
  EXPECT_THAT(input_error_message([&] { parse_price_override("rtx5090=-5", cards(), o); }), HasSubstr("'-5' is not a positive"));
  EXPECT_THAT(input_error_message([&] { parse_price_override("2199", cards(), o); }), HasSubstr("--price '2199' names no GPU"));
  EXPECT_THAT(input_error_message([&] { parse_rent_override("h100-sxm5-80gb=2.49/day", cards(), o); }),
              HasSubstr("e.g. --rent h100-sxm5-80gb=2.49/h"));
  EXPECT_THAT(input_error_message([&] { parse_rent_override("nosuchcard=1", cards(), o); }), HasSubstr("nosuchcard"));
  EXPECT_THAT(input_error_message([&] { parse_power_override("rtx5090=6000W", cards(), o); }), HasSubstr("watts per GPU"));
  EXPECT_EQ(input_error_message([&] { parse_electricity_override("30", o); }),
            "--electricity '30' is not a price in US dollars per kWh between 0 and 10; e.g. --electricity 0.30/kWh");
  EXPECT_TRUE(o.purchase_usd.empty() && o.rent_usd_per_gpu_hour.empty() && !o.electricity_usd_per_kwh);
}

}  // namespace
}  // namespace gpusage::cost
