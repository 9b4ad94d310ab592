#include "core/cost/prices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/common/toml_data.hpp"

namespace gpusage::cost {

extern const char* const kBuiltinPriceText;  // generated from data/prices.toml

namespace {

// "YYYY-MM-DD" or "YYYY-MM" (the first of the month) as a calendar day; empty when it is neither.
std::optional<std::chrono::sys_days> parse_date(std::string_view text) {
  auto number = [&](std::size_t at, std::size_t length) -> std::optional<int> {
    if (at + length > text.size()) return std::nullopt;
    int value = 0;
    const char* first = text.data() + at;
    auto [end, error] = std::from_chars(first, first + length, value);
    if (error != std::errc() || end != first + length) return std::nullopt;
    return value;
  };
  if ((text.size() != 7 && text.size() != 10) || text[4] != '-') return std::nullopt;
  const auto year = number(0, 4);
  const auto month = number(5, 2);
  std::optional<int> day = 1;
  if (text.size() == 10) day = text[7] == '-' ? number(8, 2) : std::nullopt;
  if (!year || !month || !day) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(*year), std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date);
}

// Reads one table of the price file; every error names the origin, the entry and the field.
class EntryReader : public toml_data::TableReader {
 public:
  using TableReader::TableReader;

  void accept_only(std::initializer_list<std::string_view> keys) const {
    for (auto&& [key, value] : table_) {
      if (std::find(keys.begin(), keys.end(), key.str()) == keys.end()) {
        fail(key.str(), fmt::format("is not a price field (accepted: {}; schema: data/README.md)",
                                    text::join(std::vector<std::string>(keys.begin(), keys.end()), ", ")));
      }
    }
  }
  std::string string(const char* key) const {
    const toml::node* node = table_.get(key);
    if (!node || !node->is_string() || text::trim(**node->as_string()).empty()) fail(key, "is required: a string");
    return **node->as_string();
  }
  double positive(const char* key) const {
    const toml::node* node = table_.get(key);
    const std::optional<double> number = node ? toml_data::number_value(*node) : std::nullopt;
    if (!number) fail(key, "is required: a number");
    const double value = *number;
    if (!(value > 0) || !std::isfinite(value)) fail(key, fmt::format("must be positive, got {}", value));
    return value;
  }
  // The fields every price shares: value, date and source.
  DatedPrice price(const char* value_key) const {
    DatedPrice price;
    price.value = positive(value_key);
    price.as_of = string("as_of");
    if (!parse_date(price.as_of)) fail("as_of", fmt::format("'{}' is not a date YYYY-MM-DD or YYYY-MM", price.as_of));
    price.title = string("title");
    price.url = string("url");
    if (!price.url.starts_with("https://") && !price.url.starts_with("http://")) {
      fail("url", fmt::format("'{}' is not an http(s) address", price.url));
    }
    return price;
  }
  std::string gpu(const catalog::Catalog& catalog) const {
    std::string id = string("gpu");
    if (!catalog.find(id)) fail("gpu", fmt::format("'{}' is not a catalog id (gpusage gpus --family all)", id));
    return id;
  }
};

template <class F>
void for_each_table(const toml::table& root, const char* key, const std::string& origin, F&& read) {
  const toml::node* node = root.get(key);
  if (!node) return;
  const toml::array* array = node->as_array();
  if (!array) throw InputError(fmt::format("{}: '{}' must be an array of tables ([[{}]])", origin, key, key));
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::table* table = (*array)[i].as_table();
    if (!table) throw InputError(fmt::format("{}: {} #{} must be a table", origin, key, i + 1));
    read(*table, i);
  }
}

// "rtx5090=2199" -> the resolved catalog id and the number before `unit` (which may be omitted).
std::pair<std::string, double> id_and_amount(const std::string& value, const catalog::Catalog& catalog,
                                             const char* option, const char* example, std::string_view unit,
                                             std::string_view prefix = "") {
  const auto equals = value.find('=');
  const std::string accepted = fmt::format("give {} ID=AMOUNT, e.g. {} {}", option, option, example);
  if (equals == std::string::npos || equals == 0) {
    throw InputError(fmt::format("{} '{}' names no GPU; {}", option, value, accepted));
  }
  const std::string name = text::trim(value.substr(0, equals));
  const catalog::Gpu& gpu = catalog.resolve(name);
  std::string amount = text::trim(value.substr(equals + 1));
  if (!prefix.empty() && amount.starts_with(prefix)) amount.erase(0, prefix.size());
  if (!unit.empty() && text::to_lower(amount).ends_with(text::to_lower(std::string(unit)))) {
    amount.erase(amount.size() - unit.size());
  }
  double number = 0;
  const char* first = amount.data();
  auto [end, error] = std::from_chars(first, first + amount.size(), number);
  if (amount.empty() || error != std::errc() || end != first + amount.size() || !std::isfinite(number) ||
      !(number > 0)) {
    throw InputError(
        fmt::format("{} '{}': '{}' is not a positive number; {}", option, value, value.substr(equals + 1), accepted));
  }
  return {gpu.id, number};
}

}  // namespace

const DatedPrice* PriceBook::cheapest_rent(const std::string& gpu_id) const {
  auto it = rent.find(gpu_id);
  if (it == rent.end() || it->second.empty()) return nullptr;
  const DatedPrice* best = &it->second.front();
  for (const auto& price : it->second) {
    if (price.value < best->value) best = &price;
  }
  return best;
}

PriceBook parse_price_book(std::string_view toml_text, const std::string& origin, const catalog::Catalog& catalog) {
  const toml::table root = toml_data::parse(toml_text, origin);
  EntryReader top(root, origin, "top level");
  top.accept_only({"schema_version", "stale_after_days", "electricity", "street", "rent"});
  if (top.positive("schema_version") != 1) top.fail("schema_version", "must be 1");
  PriceBook book;
  const double stale = top.positive("stale_after_days");
  if (stale != std::floor(stale) || stale > 36500) top.fail("stale_after_days", "must be a whole number of days");
  book.stale_after_days = static_cast<int>(stale);
  if (const toml::table* electricity = root.get_as<toml::table>("electricity")) {
    EntryReader reader(*electricity, origin, "electricity");
    reader.accept_only({"usd_per_kwh", "as_of", "title", "url"});
    book.electricity = reader.price("usd_per_kwh");
  }
  for_each_table(root, "street", origin, [&](const toml::table& table, std::size_t i) {
    EntryReader reader(table, origin, fmt::format("street #{}", i + 1));
    reader.accept_only({"gpu", "usd", "as_of", "title", "url"});
    const std::string id = reader.gpu(catalog);
    if (book.street.count(id)) reader.fail("gpu", fmt::format("'{}' has a second street price", id));
    book.street[id] = reader.price("usd");
  });
  for_each_table(root, "rent", origin, [&](const toml::table& table, std::size_t i) {
    EntryReader reader(table, origin, fmt::format("rent #{}", i + 1));
    reader.accept_only({"gpu", "provider", "usd_per_gpu_hour", "as_of", "title", "url"});
    const std::string id = reader.gpu(catalog);
    DatedPrice price = reader.price("usd_per_gpu_hour");
    price.provider = reader.string("provider");
    book.rent[id].push_back(std::move(price));
  });
  return book;
}

const PriceBook& builtin_price_book() {
  static const PriceBook book =
      parse_price_book(kBuiltinPriceText, "data/prices.toml (built in)", catalog::Catalog::builtin());
  return book;
}

int age_in_days(const std::string& as_of, const std::string& today) {
  const auto from = parse_date(as_of);
  const auto to = parse_date(today);
  if (!from) throw InputError(fmt::format("'{}' is not a date YYYY-MM-DD or YYYY-MM", as_of));
  if (!to) throw InputError(fmt::format("'{}' is not a date YYYY-MM-DD", today));
  return static_cast<int>((*to - *from).count());
}

void parse_price_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides) {
  auto [id, usd] = id_and_amount(value, catalog, "--price", "rtx5090=2199", "", "$");
  overrides.purchase_usd[id] = usd;
}

void parse_rent_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides) {
  auto [id, usd] = id_and_amount(value, catalog, "--rent", "h100-sxm5-80gb=2.49/h", "/h", "$");
  overrides.rent_usd_per_gpu_hour[id] = usd;
}

void parse_power_override(const std::string& value, const catalog::Catalog& catalog, PriceOverrides& overrides) {
  auto [id, watts] = id_and_amount(value, catalog, "--power", "rtx5090=540W", "W");
  // 5 kW: above any single board's draw (a B300 is rated 1,100 W); a larger number is a typo (kW for W).
  if (watts > 5000) {
    throw InputError(
        fmt::format("--power '{}': {} W is more than one GPU board draws; give watts per GPU, "
                    "e.g. --power rtx5090=540W",
                    value, watts));
  }
  overrides.board_power_w[id] = watts;
}

void parse_electricity_override(const std::string& value, PriceOverrides& overrides) {
  std::string amount = text::trim(value);
  if (amount.starts_with("$")) amount.erase(0, 1);
  if (text::to_lower(amount).ends_with("/kwh")) amount.erase(amount.size() - 4);
  double number = 0;
  const char* first = amount.data();
  auto [end, error] = std::from_chars(first, first + amount.size(), number);
  // $10/kWh: far above any retail tariff; a larger number is cents given for dollars.
  if (amount.empty() || error != std::errc() || end != first + amount.size() || !(number > 0) || number > 10) {
    throw InputError(
        fmt::format("--electricity '{}' is not a price in US dollars per kWh between 0 and 10; "
                    "e.g. --electricity 0.30/kWh",
                    value));
  }
  overrides.electricity_usd_per_kwh = number;
}

}  // namespace gpusage::cost
