// catalog::identify: the device a driver reports, matched to a catalog card (identify.hpp).
#include "core/catalog/identify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/common/units.hpp"

namespace gpusage::catalog {

namespace {

// A name's words split into the model and its qualifiers: memory sizes ("80 gb"), memory types ("hbm 3"),
// form factors ("sxm 5", "pcie") and the words NVML adds. "NVIDIA H100 80GB HBM3" -> model {h100}, memory 80.
struct NameParts {
  std::vector<std::string> model;
  std::set<std::string> form;       // pcie, sxm
  std::optional<double> memory_gb;  // a size the name states
};

NameParts split_name(std::string_view name) {
  static const std::set<std::string> kForms{"pcie", "sxm", "fhhl", "dgxs"};
  const std::vector<std::string> tokens = name_tokens(name);
  NameParts parts;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool number = std::isdigit(static_cast<unsigned char>(t[0]));
    if (number && i + 1 < tokens.size() && tokens[i + 1] == "gb") {
      parts.memory_gb = std::strtod(t.c_str(), nullptr);
      ++i;
    } else if (kForms.count(t)) {
      parts.form.insert(t);
      if (i + 1 < tokens.size() && std::isdigit(static_cast<unsigned char>(tokens[i + 1][0]))) ++i;  // sxm 5
    } else if (t == "hbm" || t == "gddr") {
      if (i + 1 < tokens.size() && std::isdigit(static_cast<unsigned char>(tokens[i + 1][0]))) ++i;  // hbm 3
      if (i + 1 < tokens.size() && tokens[i + 1] == "e") ++i;                                        // hbm 3 e
    } else if (t != "gb") {
      parts.model.push_back(t);
    }
  }
  return parts;
}

// How far a device's memory is from a card's, as a fraction: NVML reports a little less than the marketed size
// (an 80 GB H100 shows 79.6 GiB), a memory-modified board far more.
double memory_distance(const Gpu& gpu, double device_gib) {
  return std::abs(gpu.memory_gb - device_gib) / gpu.memory_gb;
}

std::string ids_text(const std::vector<const Gpu*>& gpus) {
  std::vector<std::string> ids;
  for (const Gpu* gpu : gpus) ids.push_back(gpu->id);
  return text::join(ids);
}

// The candidates the memory decides between: the closest within 10% of the device's size, if one is.
std::vector<const Gpu*> by_memory(const std::vector<const Gpu*>& candidates, std::optional<double> device_gib) {
  if (!device_gib || candidates.size() < 2) return candidates;
  double best = 0.1;
  std::vector<const Gpu*> out;
  for (const Gpu* gpu : candidates) {
    const double d = memory_distance(*gpu, *device_gib);
    if (d < best - 1e-9) {
      best = d;
      out = {gpu};
    } else if (std::abs(d - best) <= 1e-9) {
      out.push_back(gpu);
    }
  }
  return out.empty() ? candidates : out;
}

}  // namespace

Identification identify(const Catalog& catalog, const DeviceReport& device) {
  std::optional<double> device_gib;
  if (device.memory_bytes) device_gib = static_cast<double>(*device.memory_bytes) / units::kGiB;
  std::vector<const Gpu*> candidates;
  // 1. The PCI device id (hwdata's pci.ids): one die configuration, sometimes in two memory sizes.
  if (device.pci_device_id) {
    const std::string pci = text::to_lower(*device.pci_device_id);
    for (const Gpu& gpu : catalog.gpus()) {
      if (std::find(gpu.pci_device_ids.begin(), gpu.pci_device_ids.end(), pci) != gpu.pci_device_ids.end()) {
        candidates.push_back(&gpu);
      }
    }
  }
  const NameParts reported = split_name(device.name);
  if (!device_gib && reported.memory_gb) device_gib = reported.memory_gb;
  // 2. The names the driver gives the card, exactly.
  if (candidates.empty()) {
    const std::string lower = text::to_lower(text::trim(device.name));
    for (const Gpu& gpu : catalog.gpus()) {
      for (const auto& nvml : gpu.nvml_names) {
        if (text::to_lower(nvml) == lower) candidates.push_back(&gpu);
      }
    }
  }
  // 3. The model: the same words once memory sizes and form factors are set aside, the form factor the name
  // states (if any) among the card's.
  if (candidates.empty() && !reported.model.empty()) {
    for (const Gpu& gpu : catalog.gpus()) {
      const NameParts card = split_name(gpu.name);
      if (card.model != reported.model) continue;
      if (!std::includes(card.form.begin(), card.form.end(), reported.form.begin(), reported.form.end())) continue;
      candidates.push_back(&gpu);
    }
  }
  Identification id;
  if (candidates.empty()) {
    id.note = fmt::format("'{}' is not a card of the GPU catalog", device.name);
    return id;
  }
  const std::vector<const Gpu*> fitting = by_memory(candidates, device_gib);
  id.gpu = fitting.front();
  if (fitting.size() > 1) {
    // The memory did not decide: the card named exactly so, else the first, and the others said.
    for (const Gpu* gpu : fitting) {
      if (split_name(gpu->name).memory_gb == std::nullopt) id.gpu = gpu;
    }
    id.note = fmt::format("'{}' fits {}{}: took {}", device.name, ids_text(fitting),
                          device_gib ? fmt::format(" (its {:.1f} GiB did not tell them apart)", *device_gib)
                                     : std::string(" and its memory is unknown"),
                          id.gpu->id);
  } else if (device_gib && *device_gib > id.gpu->memory_gb * 1.1) {
    // More memory than the card was sold with: a memory-modified board (an RTX 4090 with 48 GB), planned as
    // the card with the memory it has.
    const std::string modified = fmt::format("{}@{:.0f}gb", id.gpu->id, std::round(*device_gib));
    id.note = fmt::format(
        "'{}' reports {:.1f} GiB, the catalog's {} has {:g} GB: planned as a memory-modified "
        "{}",
        device.name, *device_gib, id.gpu->id, id.gpu->memory_gb, modified);
    id.gpu = &catalog.resolve(modified);
  } else if (device_gib && memory_distance(*id.gpu, *device_gib) > 0.1) {
    id.note = fmt::format(
        "'{}' reports {:.1f} GiB, less than the {:g} GB of the catalog's {}: took it (a MIG "
        "slice or a card the catalog lacks?)",
        device.name, *device_gib, id.gpu->memory_gb, id.gpu->id);
  }
  return id;
}

const Gpu& identify_or_throw(const Catalog& catalog, const DeviceReport& device) {
  Identification id = identify(catalog, device);
  if (!id.gpu) throw InputError(id.note);
  return *id.gpu;
}

}  // namespace gpusage::catalog
