// The field registry that JSON, `gpus show`, --sort and --metrics share.
#include "core/catalog/fields.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/common/error.hpp"
#include "unit/catalog/fixture.hpp"

namespace gpusage::catalog {
namespace {

TEST(CatalogFields, EveryFieldOfTheFullFixtureHasAValue) {
  // full.toml sets every field once: a field the registry lists but the loader ignores reads empty here.
  Catalog catalog = Catalog::load(fixture("full.toml"));
  const Gpu& gpu = catalog.gpus().front();
  for (const Field& field : fields()) {
    bool known = field.text ? field.text(gpu).has_value() : field.number(gpu).has_value();
    EXPECT_TRUE(known) << field.name;
    EXPECT_TRUE((field.text == nullptr) != (field.number == nullptr)) << field.name;
  }
}

TEST(CatalogFields, NamesAreUniqueAndIncludeTheJsonContract) {
  std::set<std::string> names;
  for (const Field& field : fields()) EXPECT_TRUE(names.insert(field.name).second) << field.name;
  for (const char* required : {"id", "name", "architecture", "chip", "compute_capability", "sm_count", "cuda_cores",
                               "boost_clock_mhz", "memory_gb", "memory_type", "memory_bus_bits",
                               "memory_bandwidth_gbs", "l2_cache_mb", "tdp_w", "fp32_tflops", "tf32_tflops",
                               "fp16_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops", "launch_date", "msrp_usd"}) {
    EXPECT_TRUE(names.count(required)) << required;
  }
}

TEST(CatalogFields, ValuesReadTheRightMembers) {
  Catalog catalog = Catalog::load(fixture("full.toml"));
  const Gpu& gpu = catalog.gpus().front();
  EXPECT_EQ(find_field("family")->text(gpu), "laptop");
  EXPECT_EQ(find_field("memory_bandwidth_gbs")->number(gpu), 960);
  EXPECT_EQ(find_field("fp8_acc16_tflops")->number(gpu), 819.2);
  EXPECT_EQ(find_field("tensor_core_generation")->number(gpu), 4);
  EXPECT_EQ(find_field("tensor_core_generation")->kind, FieldKind::integer);
  EXPECT_EQ(find_field("sources"), nullptr);
}

TEST(CatalogMetrics, FieldsAndDerivedMetricsByName) {
  Catalog catalog = Catalog::load(fixture("full.toml"));
  const Gpu& gpu = catalog.gpus().front();
  Metric tdp = find_metric("tdp_w", "--sort");
  EXPECT_EQ(tdp.unit, "W");
  EXPECT_EQ(tdp.value(gpu), 300);
  Metric per_usd = find_metric("FP16_TFLOPS_PER_USD", "--sort");
  EXPECT_EQ(per_usd.name, "fp16_tflops_per_usd");
  EXPECT_DOUBLE_EQ(*per_usd.value(gpu), 204.8 / 4096);
}

TEST(CatalogMetrics, TextFieldsAreNotMetrics) {
  auto names = metric_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "memory_type"), 0);
  EXPECT_EQ(names.front(), "sm_count");
  EXPECT_EQ(names.back(), "ridge_point_flop_per_byte");
  EXPECT_THROW(find_metric("memory_type", "--sort"), InputError);
}

TEST(CatalogMetrics, UnknownNameSuggestsAndListsAccepted) {
  try {
    find_metric("bandwith", "--sort");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("--sort: 'bandwith' is not a numeric field; accepted: sm_count, cuda_cores, ", 0), 0u)
        << message;
    EXPECT_TRUE(message.ends_with(", vram_gb_per_usd, bandwidth_gbs_per_fp16_tflop, ridge_point_flop_per_byte"));
  }
  try {
    find_metric("fp8", "--metrics");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--metrics: 'fp8' is not a numeric field (did you mean fp8_tflops or "
                                          "fp8_acc16_tflops?); accepted: ",
                                          0),
              0u)
        << e.what();
  }
}

TEST(CatalogMetrics, SuggestionsPreferNamesContainingWhatWasTyped) {
  std::vector<std::string> names{"id", "memory_gb", "memory_bandwidth_gbs", "fp16_tflops"};
  // text::closest would offer "id", which "bandwidth" contains; a field name must contain the typed text.
  EXPECT_EQ(suggest_names("bandwidth", names, 3), (std::vector<std::string>{"memory_bandwidth_gbs"}));
  EXPECT_EQ(suggest_names("memory_gbs", names, 3), (std::vector<std::string>{"memory_gb"}));
  EXPECT_TRUE(suggest_names("colour", names, 3).empty());
}

TEST(CatalogSources, FieldClaimsBeatGeneralSources) {
  Catalog catalog = Catalog::load(fixture("full.toml"));
  const Gpu& gpu = catalog.gpus().front();
  auto price = sources_for(gpu, "msrp_usd");
  ASSERT_EQ(price.size(), 1u);
  EXPECT_EQ(price.front()->url, "https://example.invalid/prices");
  auto cores = sources_for(gpu, "cuda_cores");
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores.front()->url, "https://example.invalid/testcard");
}

}  // namespace
}  // namespace gpusage::catalog
