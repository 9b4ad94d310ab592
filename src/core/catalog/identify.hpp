// Which catalog card a device is, from what the driver reports (NVML: the name, the memory, the PCI device
// id): the one door run, monitor, doctor, bench and calibration files use to name the card they see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/catalog/catalog.hpp"

namespace gpusage::catalog {

struct DeviceReport {
  std::string name;                           // "NVIDIA GeForce RTX 3080", as NVML or CUDA reports it
  std::optional<std::uint64_t> memory_bytes;  // total memory NVML reports
  std::optional<std::string> pci_device_id;   // "2206": the PCI device id, lower-case hex
};

struct Identification {
  const Gpu* gpu = nullptr;  // null when nothing in the catalog is this device
  // Said to the user when the card was not known for certain: the name fits several variants and the
  // memory did not tell them apart, or nothing fits; empty when the device id or name and memory decided.
  std::string note;
  bool guessed() const { return !note.empty(); }
};

// By PCI device id where the catalog carries it, then by name (the card's NVML names, then its model: the name's
// words without memory sizes and form factors) and memory: a name that fits several variants takes the one whose
// memory matches. Never a different variant in silence: when the memory cannot decide, the base card (the one
// named exactly so) is taken and the note says which others it could be.
Identification identify(const Catalog& catalog, const DeviceReport& device);

// identify(), or InputError naming the device when nothing fits (what callers that need a card want).
const Gpu& identify_or_throw(const Catalog& catalog, const DeviceReport& device);

}  // namespace gpusage::catalog
