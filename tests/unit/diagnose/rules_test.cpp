#include <gtest/gtest.h>

#include <stdexcept>

#include "core/common/error.hpp"
#include "core/diagnose/rules.hpp"

namespace gpusage::diagnose {
namespace {

TEST(Version, ParsesDottedPrefixAndStopsAtLocalSuffix) {
  EXPECT_EQ(Version::parse("2.7.1+cu128")->to_string(), "2.7.1");
  EXPECT_EQ(Version::parse("570.124.06")->to_string(), "570.124.6");
  EXPECT_EQ(Version::parse("V12.4.131")->to_string(), "12.4.131");
  EXPECT_FALSE(Version::parse("none").has_value());
}

TEST(Version, ComparesPartByPartWithMissingPartsAsZero) {
  EXPECT_LT(*Version::parse("550.54.15"), *Version::parse("570.26"));
  EXPECT_LT(*Version::parse("12.4"), *Version::parse("12.10"));
  EXPECT_EQ(*Version::parse("12.8"), *Version::parse("12.8.0"));
  EXPECT_GT(*Version::parse("535.161.08"), *Version::parse("525.60.13"));
}

TEST(RuleTable, BuiltinTableLoadsWithSourcesForEveryRuleAndFact) {
  const RuleTable& t = RuleTable::builtin();
  ASSERT_FALSE(t.rules().empty());
  for (const auto& r : t.rules()) {
    EXPECT_TRUE(t.has_source(r.source)) << r.id;
    EXPECT_FALSE(t.source(r.source).url.empty()) << r.id;
  }
  for (const auto& fact : t.cuda_drivers()) EXPECT_TRUE(t.has_source(fact.source)) << fact.cuda.to_string();
  for (const auto& arch : t.architectures()) EXPECT_FALSE(arch.sources.empty()) << arch.name;
}

TEST(RuleTable, MinimumDriversFollowNvidiasTable) {
  const RuleTable& t = RuleTable::builtin();
  EXPECT_EQ(t.min_driver_for(*Version::parse("12.8"))->linux_driver, "570.26");
  EXPECT_EQ(t.min_driver_for(*Version::parse("12.4.131"))->linux_driver, "550.54.14");
  EXPECT_EQ(t.min_driver_for(*Version::parse("13.0"))->linux_driver, "580.65.06");
  // 12.7 was never released: the newest entry below it (12.6) answers.
  EXPECT_EQ(t.min_driver_for(*Version::parse("12.7"))->linux_driver, "560.28.03");
  EXPECT_EQ(t.minor_compat(12)->linux_driver, "525.60.13");
}

TEST(RuleTable, ArchitecturesCarryTheirFirstCudaAndPytorch) {
  const RuleTable& t = RuleTable::builtin();
  const ArchitectureFact* blackwell = t.architecture(12, 0);
  ASSERT_NE(blackwell, nullptr);
  EXPECT_EQ(blackwell->first_cuda.to_string(), "12.8");
  EXPECT_EQ(blackwell->pytorch_min.value_or(""), "2.7");
  EXPECT_EQ(blackwell->pytorch_wheel.value_or(""), "cu128");
  EXPECT_EQ(t.architecture(10, 0)->first_cuda.to_string(), "12.8");
  EXPECT_EQ(t.architecture(9, 0)->first_cuda.to_string(), "11.8");
  EXPECT_EQ(t.architecture(8, 9)->first_cuda.to_string(), "11.8");
  EXPECT_EQ(t.architecture(8, 6)->first_cuda.to_string(), "11.1");
  EXPECT_EQ(t.architecture(8, 0)->first_cuda.to_string(), "11.0");
  EXPECT_EQ(t.architecture(7, 0)->dropped_in_cuda->to_string(), "13.0");
  EXPECT_EQ(t.architecture(4, 0), nullptr);
}

TEST(RuleTable, MakeFillsPlaceholdersAndAttachesTheSource) {
  const RuleTable& t = RuleTable::builtin();
  const Finding f = t.make("tensorflow-gpu-package", Category::environment, {{"version", "2.10.0"}});
  EXPECT_EQ(f.severity, Severity::warning);
  EXPECT_EQ(f.title, "The deprecated tensorflow-gpu package (2.10.0) is installed");
  EXPECT_EQ(f.evidence, "pip distribution tensorflow-gpu 2.10.0");
  EXPECT_EQ(f.source_url, "https://pypi.org/project/tensorflow-gpu/");
}

TEST(Fill, NamesTheMissingPlaceholder) {
  try {
    fill("GPU {index} is {gpu}", {{"index", "0"}});
    FAIL() << "expected a logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()), "rule text 'GPU {index} is {gpu}' needs a value for {gpu}");
  }
  EXPECT_EQ(fill("{{literal}} {a}", {{"a", "x"}}), "{literal} x");
}

TEST(RuleTable, RejectsAnUnknownSourceNamingTheRule) {
  const char* text = R"(
[sources]
a = { title = "A", url = "https://a" }
[[rule]]
id = "r1"
severity = "warning"
title = "t"
evidence = ""
fix = "f"
source = "b"
)";
  try {
    RuleTable::parse(text, "test.toml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "test.toml: rule[0] (r1): unknown source 'b'");
  }
}

TEST(RuleTable, RejectsAnUnknownSeverity) {
  const char* text = R"(
[sources]
a = { title = "A", url = "https://a" }
[[rule]]
id = "r1"
severity = "fatal"
title = "t"
evidence = ""
fix = "f"
source = "a"
)";
  EXPECT_THROW(RuleTable::parse(text, "test.toml"), InputError);
}

}  // namespace
}  // namespace gpusage::diagnose
