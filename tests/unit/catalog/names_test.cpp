// Names as users type them: every catalog id's common spellings resolve to that card, and near-misses
// (a shorter model number, a card not in the catalog) never resolve to another card.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {
namespace {

std::string resolve_error(const Catalog& catalog, std::string_view name) {
  try {
    catalog.resolve(name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(CatalogNames, EveryIdAndNameOfTheCatalogResolvesToItsCard) {
  for (const Gpu& gpu : Catalog::builtin().gpus()) {
    const std::string spaced_id = [&] {  // "rtx5060ti-16gb" -> "rtx 5060 ti 16 gb"
      std::string out;
      for (const auto& token : name_tokens(gpu.id)) out += (out.empty() ? "" : " ") + token;
      return out;
    }();
    const std::string vendor_name = gpu.name.starts_with("NVIDIA") ? gpu.name : "NVIDIA " + gpu.name;
    for (const std::string& spelling :
         {gpu.id, upper(gpu.id), spaced_id, gpu.name, text::to_lower(gpu.name), upper(gpu.name), vendor_name}) {
      EXPECT_EQ(Catalog::builtin().resolve(spelling).id, gpu.id) << "'" << spelling << "'";
    }
  }
}

TEST(CatalogNames, TheNewCardsResolveAsTyped) {
  const Catalog& c = Catalog::builtin();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"5090d", "rtx5090d"},           {"5090 D", "rtx5090d"},         {"RTX 5090D", "rtx5090d"},
      {"5090d v2", "rtx5090d-v2"},     {"RTX 5090 D V2", "rtx5090d-v2"}, {"5090", "rtx5090"},
      {"4090 d", "rtx4090d"},          {"4090D", "rtx4090d"},          {"4090", "rtx4090"},
      {"h20", "h20"},                  {"H20", "h20"},                 {"NVIDIA H20", "h20"},
      {"h200", "h200-sxm-141gb"},      {"l20", "l20"},                 {"l40s", "l40s"},
      {"L4", "l4"},                    {"dgx spark", "gb10"},          {"DGX Spark", "gb10"},
      {"gb10", "gb10"},                {"b300", "b300"},               {"B200", "b200"},
      {"rtx pro 4000", "rtxpro4000"},  {"RTX PRO 4500", "rtxpro4500"}, {"pro 5000", "rtxpro5000"},
      {"rtx pro 6000", "rtxpro6000"},  {"4080 s", "rtx4080super"},     {"4080 super", "rtx4080super"},
      {"a6000", "rtxa6000"},           {"rtx 6000 ada", "rtx6000ada"}, {"NVIDIA GeForce RTX 4090 D", "rtx4090d"},
  };
  for (const auto& [typed, id] : cases) EXPECT_EQ(c.resolve(typed).id, id) << "'" << typed << "'";
}

TEST(CatalogNames, ShortenedModelsAreAmbiguousNotGuessed) {
  EXPECT_EQ(resolve_error(Catalog::builtin(), "5060 ti"),
            "GPU name '5060 ti' is ambiguous: it matches rtx5060ti-16gb (GeForce RTX 5060 Ti 16 GB), rtx5060ti-8gb "
            "(GeForce RTX 5060 Ti 8 GB); give the id of the one you mean");
  // The A800 comes with 40 or 80 GB: a memory a user can tell, so it asks.
  EXPECT_EQ(resolve_error(Catalog::builtin(), "A800"),
            "GPU name 'A800' is ambiguous: it matches a800-sxm4-80gb (NVIDIA A800 SXM4 80 GB), a800-pcie-80gb "
            "(NVIDIA A800 PCIe 80 GB), a800-pcie-40gb (NVIDIA A800 PCIe 40 GB); give the id of the one you mean");
  for (const char* typed : {"a100", "h100", "3060", "4060 ti", "v100"}) {
    EXPECT_TRUE(resolve_error(Catalog::builtin(), typed).starts_with("GPU name '" + std::string(typed) +
                                                                    "' is ambiguous"))
        << typed;
  }
}

// Variants that differ in what a user may not know (form factor, a laptop part's memory) resolve to the catalog's
// documented default (default_over), with a note naming the others and how to pick them.
TEST(CatalogNames, AFormFactorOrLaptopMemoryLeftOutIsTheDefaultVariantWithANote) {
  const Catalog& c = Catalog::builtin();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"H800", "h800-sxm5-80gb"},           {"NVIDIA H800", "h800-sxm5-80gb"},     {"h800 80gb", "h800-sxm5-80gb"},
      {"A800 80GB", "a800-sxm4-80gb"},      {"nvidia a800 80 gb", "a800-sxm4-80gb"}, {"Tesla P100", "p100-pcie-16gb"},
      {"p100", "p100-pcie-16gb"},           {"RTX 3080 Laptop", "rtx3080-laptop-16gb"},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", "rtx3080-laptop-16gb"},
  };
  for (const auto& [typed, id] : cases) {
    const Gpu& gpu = c.resolve(typed);
    EXPECT_EQ(gpu.id, id) << typed;
    ASSERT_TRUE(gpu.default_note.has_value()) << typed;
  }
  EXPECT_EQ(*c.resolve("H800").default_note,
            "'H800' is taken as the NVIDIA H800 SXM5 80 GB (h800-sxm5-80gb): the SXM5 board of NVIDIA's 8-GPU HGX "
            "H800 servers, on which the H800's published training runs were made (DeepSeek-V3: 2,048 H800s, 8 per "
            "node over NVLink and NVSwitch); for another variant give --gpu h800-pcie-80gb (NVIDIA H800 PCIe 80 GB)");
  // A memory or form factor typed is honoured, and the card named exactly carries no note.
  EXPECT_EQ(c.resolve("p100 12gb").id, "p100-pcie-12gb");
  EXPECT_EQ(c.resolve("a800 40gb").id, "a800-pcie-40gb");
  EXPECT_EQ(c.resolve("h800 pcie").id, "h800-pcie-80gb");
  EXPECT_FALSE(c.resolve("h800-sxm5-80gb").default_note.has_value());
  // A modification keeps the note: the card planned is still the default taken for the name.
  EXPECT_TRUE(c.resolve("H800@400w").default_note.has_value());
}

// Every catalog name, spelt as people do, is that card; shortened to its model (no memory size, no form factor) it
// is that card, the default it was taken as with a note naming it, or an "ambiguous" answer listing it: never
// silently another card.
TEST(CatalogNames, EveryNameInEverySpellingIsTheCardOrSaysWhich) {
  const Catalog& c = Catalog::builtin();
  auto spellings = [](const std::string& name) {
    std::string bare = name;
    for (const char* brand : {"NVIDIA ", "GeForce ", "Tesla "}) {
      if (const auto at = bare.find(brand); at != std::string::npos) bare.erase(at, std::string(brand).size());
    }
    std::string hyphens = bare;
    std::replace(hyphens.begin(), hyphens.end(), ' ', '-');
    return std::vector<std::string>{name,   text::to_lower(name), upper(name),    bare,
                                    "NVIDIA " + bare, "nvidia geforce " + text::to_lower(bare), "Tesla " + bare,
                                    hyphens, text::to_lower(hyphens)};
  };
  for (const Gpu& gpu : c.gpus()) {
    for (const std::string& spelling : spellings(gpu.name)) {
      EXPECT_EQ(c.resolve(spelling).id, gpu.id) << "'" << spelling << "'";
    }
    // The model alone: the name without its memory size ("80 gb") and form factor ("sxm 5", "pcie").
    const std::vector<std::string> tokens = name_tokens(gpu.name);
    std::vector<bool> keep(tokens.size(), true);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if (t == "sxm" || t == "pcie" || t == "hbm") keep[i] = false;
      if (t == "sxm" && i + 1 < tokens.size()) keep[i + 1] = false;
      if (t == "gb") keep[i] = keep[i - 1] = false;
    }
    std::string model;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (keep[i]) model += tokens[i] + " ";
    }
    try {
      const Gpu& got = c.resolve(model);
      // The model alone may be another card's whole name: "RTX 3080" is the 10 GB card, not the 12 GB one.
      if (got.id != gpu.id && name_tokens(got.name) != name_tokens(model)) {
        ASSERT_TRUE(got.default_note.has_value()) << "'" << model << "' silently became " << got.id;
        EXPECT_TRUE(std::find(got.default_over.begin(), got.default_over.end(), gpu.id) != got.default_over.end())
            << model;
        EXPECT_NE(got.default_note->find(gpu.id), std::string::npos) << *got.default_note;
      }
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("is ambiguous") != std::string::npos && what.find(gpu.id) != std::string::npos)
          << "'" << model << "': " << what;
    }
  }
}

// A name never becomes a card with more words in its name: the Ti is not the Ti SUPER, the L40 not the L40S, the
// 4090 not the 4090 D or the 4090 Laptop GPU, the H100 not the H100 NVL.
TEST(CatalogNames, ANameIsTheCardNamedNeverOneWithMoreWords) {
  const Catalog& c = Catalog::builtin();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"RTX 4070 Ti", "rtx4070ti"},         {"4070 ti", "rtx4070ti"},           {"4070 Ti SUPER", "rtx4070tisuper"},
      {"L40", "l40"},                       {"NVIDIA L40", "l40"},              {"L40S", "l40s"},
      {"4090", "rtx4090"},                  {"RTX 4090 Laptop", "rtx4090-laptop"}, {"4090 laptop gpu", "rtx4090-laptop"},
      {"2080 ti", "rtx2080ti"},             {"RTX 2080", "rtx2080"},            {"2080 super", "rtx2080super"},
      {"2060", "rtx2060"},                  {"2060 super", "rtx2060super"},     {"2070", "rtx2070"},
      {"titan rtx", "titan-rtx"},            {"TITAN V", "titanv"},              {"GTX 1080 Ti", "gtx1080ti"},
      {"1080", "gtx1080"},                  {"1070", "gtx1070"},                {"1660", "gtx1660"},
      {"1660 super", "gtx1660super"},       {"1660 Ti", "gtx1660ti"},           {"3060 ti", "rtx3060ti"},
      {"3070 ti", "rtx3070ti"},             {"3080 ti", "rtx3080ti"},           {"3050", "rtx3050"},
      {"3060 8gb", "rtx3060-8gb"},          {"4060 ti 8 gb", "rtx4060ti-8gb"},  {"3080 laptop 16gb", "rtx3080-laptop-16gb"},
      {"5090 laptop", "rtx5090-laptop"},    {"4060 laptop", "rtx4060-laptop"},  {"4080 laptop", "rtx4080-laptop"},
      {"a800 sxm", "a800-sxm4-80gb"},       {"A800 PCIe 80GB", "a800-pcie-80gb"}, {"h800 sxm", "h800-sxm5-80gb"},
      {"Tesla P40", "p40"},                 {"p100 16gb", "p100-pcie-16gb"},    {"A30", "a30"},
      {"H100 NVL", "h100-nvl"},             {"v100 pcie 16gb", "v100-pcie-16gb"}, {"3080", "rtx3080-10gb"},
  };
  for (const auto& [typed, id] : cases) EXPECT_EQ(c.resolve(typed).id, id) << "'" << typed << "'";
}

// ID@48gb and ID@115w: a memory-modified board and a laptop's (or any card's capped) power limit.
TEST(CatalogNames, ModificationsMakeACardWithThatMemoryOrPower) {
  const Catalog& c = Catalog::builtin();
  const Gpu& big = c.resolve("rtx4090@48gb");
  EXPECT_EQ(big.id, "rtx4090@48gb");
  EXPECT_EQ(big.memory_gb, 48);
  EXPECT_EQ(big.memory_bandwidth_gbs, c.resolve("rtx4090").memory_bandwidth_gbs);
  EXPECT_EQ(*big.modification, "48 GB memory (the catalog's card has 24 GB; a modified board)");
  EXPECT_EQ(&c.resolve("RTX 4090 @48GB"), &big);  // one card per spelling, however typed
  const Gpu& laptop = c.resolve("rtx4090-laptop@115w");
  EXPECT_EQ(laptop.tdp_w, 115);
  EXPECT_EQ(*laptop.modification, "power limit 115 W (range 80-175 W)");
  EXPECT_EQ(c.resolve("2080 ti@22gb").memory_gb, 22);
  EXPECT_EQ(resolve_error(c, "rtx4090-laptop@200w"),
            "GPU 'rtx4090-laptop@200w': 200 W is outside the GeForce RTX 4090 Laptop GPU's power range of 80-175 W "
            "(its laptop's maker sets the limit within it)");
  EXPECT_EQ(resolve_error(c, "rtx4090@500w"),
            "GPU 'rtx4090@500w': 500 W is above the GeForce RTX 4090's 450 W board power (a power cap can only lower "
            "it; overclocks are not modelled)");
  EXPECT_EQ(resolve_error(c, "rtx4090@48"),
            "GPU 'rtx4090@48': '@48' is not a modification (accepted: @<memory>gb such as @48gb, @<power>w such as "
            "@115w)");
  EXPECT_FALSE(c.resolve("rtx4090").modification.has_value());
}

// A catalog of the cards whose names are prefixes of one another, without (first) and with (second) the
// shorter-named cards: h20/h200, a10/a100, a40/a4000, l20/l40s, 5090/5090 D, gh200/h200.
std::string card(const std::string& id, const std::string& name) {
  return "\n[[gpu]]\nid = \"" + id + "\"\nname = \"" + name +
         "\"\nfamily = \"datacenter\"\narchitecture = \"X\"\nchip = \"X1\"\ncompute_capability = \"8.0\"\n"
         "sm_count = 1\ncuda_cores = 64\nboost_clock_mhz = 1000\nmemory_gb = 1\nmemory_type = \"HBM3\"\n"
         "memory_bus_bits = 1024\nmemory_bandwidth_gbs = 100\ntdp_w = 100\nfp32_tflops = 1\n"
         "launch_date = \"2024-01\"\nsources = [ { title = \"t\", url = \"https://example.invalid/x\" } ]\n";
}

const std::string kLongNames = "schema_version = 1\n" + card("h200-sxm-141gb", "NVIDIA H200 SXM 141 GB") +
                               card("a100-sxm4-80gb", "NVIDIA A100 SXM4 80 GB") +
                               card("a100-pcie-80gb", "NVIDIA A100 PCIe 80 GB") +
                               card("rtxa4000", "NVIDIA RTX A4000") + card("l40s", "NVIDIA L40S") +
                               card("rtx5090", "GeForce RTX 5090") + card("gh200", "NVIDIA GH200 Grace Hopper");

TEST(CatalogNames, NearMissesDoNotResolveToAnotherCard) {
  const Catalog c = Catalog::parse(kLongNames, "names.toml");
  for (const char* typed : {"h20", "a10", "a40", "5090d", "l20", "l4", "4090 d"}) {
    const std::string error = resolve_error(c, typed);
    EXPECT_TRUE(error.starts_with("unknown GPU '" + std::string(typed) + "'")) << typed << ": " << error;
  }
  // An unknown card names its neighbours.
  EXPECT_EQ(resolve_error(c, "a10"), "unknown GPU 'a10'; did you mean: a100-sxm4-80gb, a100-pcie-80gb");
  EXPECT_EQ(c.resolve("h200").id, "h200-sxm-141gb");
  EXPECT_EQ(c.resolve("a4000").id, "rtxa4000");
}

TEST(CatalogNames, TheShorterNamedCardsResolveOnceTheyExist) {
  const Catalog c = Catalog::parse(
      kLongNames + card("h20", "NVIDIA H20") + card("a10", "NVIDIA A10") + card("a40", "NVIDIA A40") +
          card("rtxa5000", "NVIDIA RTX A5000") + card("rtx2080ti", "GeForce RTX 2080 Ti") +
          card("rtx5090d", "GeForce RTX 5090 D") + card("l20", "NVIDIA L20") + card("h100-nvl", "NVIDIA H100 NVL") +
          card("rtx4000ada", "NVIDIA RTX 4000 Ada Generation") + card("titan-rtx", "NVIDIA TITAN RTX") +
          card("quadro-rtx8000", "NVIDIA Quadro RTX 8000"),
      "names.toml");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"h20", "h20"},          {"H20", "h20"},           {"h200", "h200-sxm-141gb"}, {"gh200", "gh200"},
      {"a10", "a10"},          {"A10", "a10"},           {"A40", "a40"},             {"a100 pcie", "a100-pcie-80gb"},
      {"RTX A5000", "rtxa5000"}, {"a5000", "rtxa5000"},  {"2080 Ti", "rtx2080ti"},   {"2080ti", "rtx2080ti"},
      {"5090d", "rtx5090d"},   {"5090", "rtx5090"},      {"l20", "l20"},             {"h100 nvl", "h100-nvl"},
      {"rtx 4000 ada", "rtx4000ada"}, {"titan rtx", "titan-rtx"}, {"quadro rtx 8000", "quadro-rtx8000"},
  };
  for (const auto& [typed, id] : cases) EXPECT_EQ(c.resolve(typed).id, id) << "'" << typed << "'";
}

TEST(CatalogNames, TokensSplitLettersFromDigitsAndDropVendorWords) {
  EXPECT_EQ(name_tokens("NVIDIA GeForce RTX 5090D v2"),
            (std::vector<std::string>{"rtx", "5090", "d", "v", "2"}));
  EXPECT_EQ(name_tokens("h100-sxm5-80gb"), (std::vector<std::string>{"h", "100", "sxm", "5", "80", "gb"}));
}

}  // namespace
}  // namespace gpusage::catalog
