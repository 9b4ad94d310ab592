// The card a driver reports: every catalog card's NVML names and PCI device ids identify it, a name that fits
// several variants takes the one whose memory matches, and a guess is always said.
#include "core/catalog/identify.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/units.hpp"

namespace gpusage::catalog {
namespace {

// What NVML reports for a card of `gb` marketed gigabytes: a little less (an 80 GB H100 shows 79.6 GiB).
std::uint64_t reported_bytes(double gb) { return static_cast<std::uint64_t>(gb * 0.995 * units::kGiB); }

Identification nvml(const std::string& name, std::optional<double> gb = std::nullopt,
                    std::optional<std::string> pci = std::nullopt) {
  DeviceReport device{name, std::nullopt, pci};
  if (gb) device.memory_bytes = reported_bytes(*gb);
  return identify(Catalog::builtin(), device);
}

TEST(CatalogIdentify, EveryCardsNvmlNamesIdentifyItWithItsMemory) {
  int names = 0;
  for (const Gpu& gpu : Catalog::builtin().gpus()) {
    std::vector<std::string> spellings = gpu.nvml_names;
    spellings.push_back(gpu.name.starts_with("NVIDIA") ? gpu.name : "NVIDIA " + gpu.name);
    for (const std::string& name : spellings) {
      const Identification id = nvml(name, gpu.memory_gb);
      ASSERT_NE(id.gpu, nullptr) << name;
      EXPECT_EQ(id.gpu->id, gpu.id) << name;
      EXPECT_EQ(id.note, "") << name;
      ++names;
    }
  }
  EXPECT_GE(names, 110);
}

TEST(CatalogIdentify, EveryCardsPciDeviceIdsIdentifyItWithItsMemory) {
  int ids = 0;
  for (const Gpu& gpu : Catalog::builtin().gpus()) {
    for (const std::string& pci : gpu.pci_device_ids) {
      const Identification id = nvml("a name no card has", gpu.memory_gb, pci);
      ASSERT_NE(id.gpu, nullptr) << gpu.id << " " << pci;
      EXPECT_EQ(id.gpu->id, gpu.id) << pci;
      EXPECT_EQ(id.note, "") << pci;
      ++ids;
    }
  }
  EXPECT_GE(ids, 70);
}

TEST(CatalogIdentify, TheNamesDriversReallyReport) {
  const std::vector<std::tuple<std::string, double, std::string>> cases{
      {"NVIDIA GeForce RTX 3080", 12, "rtx3080-12gb"},
      {"NVIDIA GeForce RTX 3080", 10, "rtx3080-10gb"},
      {"NVIDIA GeForce RTX 5060 Ti", 16, "rtx5060ti-16gb"},
      {"NVIDIA GeForce RTX 5060 Ti", 8, "rtx5060ti-8gb"},
      {"NVIDIA GeForce RTX 4060 Ti", 8, "rtx4060ti-8gb"},
      {"NVIDIA GeForce RTX 3060", 12, "rtx3060-12gb"},
      {"NVIDIA GeForce RTX 3060", 8, "rtx3060-8gb"},
      {"NVIDIA GeForce RTX 4090 Laptop GPU", 16, "rtx4090-laptop"},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", 16, "rtx3080-laptop-16gb"},
      {"NVIDIA H100 80GB HBM3", 80, "h100-sxm5-80gb"},
      {"NVIDIA H100 PCIe", 80, "h100-pcie-80gb"},
      {"NVIDIA H100 NVL", 94, "h100-nvl"},
      {"NVIDIA H800", 80, "h800-sxm5-80gb"},
      {"NVIDIA H800 PCIe", 80, "h800-pcie-80gb"},
      {"NVIDIA A100-SXM4-80GB", 80, "a100-sxm4-80gb"},
      {"NVIDIA A100-SXM4-40GB", 40, "a100-sxm4-40gb"},
      {"NVIDIA A100-PCIE-40GB", 40, "a100-pcie-40gb"},
      {"NVIDIA A100 80GB PCIe", 80, "a100-pcie-80gb"},
      {"NVIDIA A800-SXM4-80GB", 80, "a800-sxm4-80gb"},
      {"Tesla V100-SXM2-16GB", 16, "v100-sxm2-16gb"},
      {"Tesla V100-PCIE-16GB", 16, "v100-pcie-16gb"},
      {"Tesla P100-PCIE-12GB", 12, "p100-pcie-12gb"},
      {"Tesla P40", 24, "p40"},
      {"Tesla T4", 16, "t4"},
      {"NVIDIA L40", 48, "l40"},
      {"NVIDIA L40S", 48, "l40s"},
      {"NVIDIA A30", 24, "a30"},
      {"NVIDIA GeForce RTX 2080 Ti", 11, "rtx2080ti"},
      {"NVIDIA TITAN RTX", 24, "titan-rtx"},
      {"NVIDIA GeForce GTX 1080 Ti", 11, "gtx1080ti"},
      {"GeForce GTX 1080 Ti", 11, "gtx1080ti"},
      {"NVIDIA B200", 180, "b200"},
  };
  for (const auto& [name, gb, expected] : cases) {
    const Identification id = nvml(name, gb);
    ASSERT_NE(id.gpu, nullptr) << name;
    EXPECT_EQ(id.gpu->id, expected) << name << " " << gb;
    EXPECT_EQ(id.note, "") << name << " " << gb;
  }
}

TEST(CatalogIdentify, ThePciDeviceIdDecidesBeforeTheName) {
  EXPECT_EQ(nvml("NVIDIA GeForce RTX 3080", 12, "220a").gpu->id, "rtx3080-12gb");
  EXPECT_EQ(nvml("NVIDIA H100", 80, "2330").gpu->id, "h100-sxm5-80gb");  // a name that fits two cards
}

TEST(CatalogIdentify, AGuessIsSaid) {
  const Identification no_memory = nvml("NVIDIA GeForce RTX 3080");
  EXPECT_EQ(no_memory.gpu->id, "rtx3080-10gb");
  EXPECT_EQ(no_memory.note,
            "'NVIDIA GeForce RTX 3080' fits rtx3080-10gb, rtx3080-12gb and its memory is unknown: took rtx3080-10gb");
  const Identification modified = nvml("NVIDIA GeForce RTX 4090", 48);
  EXPECT_EQ(modified.gpu->id, "rtx4090@48gb");
  EXPECT_EQ(modified.gpu->memory_gb, 48);
  EXPECT_EQ(modified.note,
            "'NVIDIA GeForce RTX 4090' reports 47.8 GiB, the catalog's rtx4090 has 24 GB: planned as a "
            "memory-modified rtx4090@48gb");
  const Identification unknown = nvml("NVIDIA GeForce RTX 9090");
  EXPECT_EQ(unknown.gpu, nullptr);
  EXPECT_EQ(unknown.note, "'NVIDIA GeForce RTX 9090' is not a card of the GPU catalog");
}

}  // namespace
}  // namespace gpusage::catalog
