// One GPU's specification, as the catalog (data/gpus.toml) states it. A figure is one of four kinds:
// sourced (stored with a source), derived (computed by the loader from a published figure and a ratio rule
// of the catalog), unpublished (empty), or unsupported (empty: the hardware lacks the precision).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/units.hpp"

namespace gpusage::catalog {

enum class Family { rtx50, rtx40, rtx30, rtx20, gtx, laptop, datacenter, workstation };
inline constexpr Family kFamilies[] = {Family::rtx50, Family::rtx40,  Family::rtx30,      Family::rtx20,
                                       Family::gtx,   Family::laptop, Family::datacenter, Family::workstation};
const char* to_string(Family family);
// "rtx50, rtx40, …, workstation": the accepted family names, for messages.
std::string family_names();
// GeForce boards (consumer cards, desktop and laptop, and the TITAN RTX): GPU Boost clocks, no PCIe
// peer-to-peer.
inline bool is_geforce(Family family) { return family != Family::datacenter && family != Family::workstation; }

// Where a figure comes from. `fields` empty: the source backs every figure no other source claims.
struct Source {
  std::string title;
  std::string url;
  std::vector<std::string> fields;
};

// What kind of value a figure is; see the file comment.
enum class FigureStatus { sourced, derived, unpublished, unsupported };
const char* to_string(FigureStatus status);

// A figure the loader computed: value = basis x ratio, the rule and its whitepaper in the catalog.
struct Derivation {
  std::string field;        // the figure computed, "fp16_tflops"
  std::string rule;         // the catalog rule's id, "blackwell-geforce"
  std::string basis_field;  // the published figure it starts from, "ai_tops"
  double basis = 0;         // its value, 759
  double ratio = 0;         // 1/16
  double value() const { return basis * ratio; }
};

// Which tensor-core (or CUDA-core) rate a precision runs at.
enum class Precision { fp32, tf32, fp16, bf16, fp8 };
const char* to_string(Precision precision);

struct Gpu {
  std::string id;
  std::string name;
  Family family = Family::datacenter;
  std::string architecture;
  std::string chip;
  std::string compute_capability;
  std::optional<std::string> form_factor;
  int sm_count = 0;
  int cuda_cores = 0;
  std::optional<int> tensor_cores;
  std::optional<int> tensor_core_generation;
  std::optional<double> base_clock_mhz;
  std::optional<double> boost_clock_mhz;  // empty where NVIDIA publishes none (B300, GB10, H20)
  double memory_gb = 0;
  std::string memory_type;
  int memory_bus_bits = 0;
  double memory_bandwidth_gbs = 0;
  std::optional<double> l2_cache_mb;
  double tdp_w = 0;  // a laptop GPU: the top of its power range (the laptop maker sets the limit within it)
  std::optional<double> power_min_w;  // a laptop GPU: the bottom of its power range
  std::optional<int> pcie_gen;
  std::optional<int> pcie_lanes;
  std::optional<double> nvlink_gbs;
  // The network of the card's NVIDIA reference server (DGX), its NICs together, Gb/s: what a run across nodes
  // is priced with when no --network-gbps is given.
  std::optional<double> node_network_gbps;
  std::optional<double> fp64_tflops;
  double fp32_tflops = 0;
  std::optional<double> tf32_tflops;        // tensor, dense
  std::optional<double> fp16_tflops;        // tensor, dense, FP32 accumulate
  std::optional<double> fp16_acc16_tflops;  // tensor, dense, FP16 accumulate (where listed apart)
  std::optional<double> bf16_tflops;        // tensor, dense, FP32 accumulate
  std::optional<double> fp8_tflops;         // tensor, dense, FP32 accumulate
  std::optional<double> fp8_acc16_tflops;   // tensor, dense, FP16 accumulate
  std::optional<double> fp4_tflops;         // tensor, dense
  std::optional<double> int8_tops;          // tensor, dense
  std::optional<double> ai_tops;            // NVIDIA's "AI TOPS": a sparse rate, the precision per its rule
  std::optional<std::string> ai_tops_rule;  // the catalog rule that turns ai_tops into dense rates
  std::optional<std::string> tensor_rule;   // a rule that derives the tensor rates from fp32_tflops (Turing)
  std::string launch_date;
  std::optional<double> msrp_usd;
  std::optional<std::string> market;      // where it is sold when that is not worldwide ("China")
  std::optional<std::string> variant_of;  // the catalog id of the card this is a regional variant of
  // How the driver names the card and which PCI device ids it has (catalog::identify): NVML's names where
  // they differ from `name` ("NVIDIA H100 80GB HBM3"), the ids in lower-case hex ("2684").
  std::vector<std::string> nvml_names;
  std::vector<std::string> pci_device_ids;
  // A name that fits this card and its variants alike ("H800": the SXM5 and the PCIe card) is taken as this
  // card when every other card it fits is listed here (data/gpus.toml's default_over, with default_why and a
  // source): variants that differ in a way a user may not know (form factor, a laptop part's memory).
  std::vector<std::string> default_over;
  std::optional<std::string> default_why;
  // Set on the copy resolve() returns when it took a name as this card by default (default_over): the note
  // that says so and names the other variants' ids.
  std::optional<std::string> default_note;
  // Set when the user changed the card (ID@48gb, ID@115w: catalog::resolve_modified): what differs from
  // the catalog's card, as a person reads it.
  std::optional<std::string> modification;
  std::vector<Source> sources;
  std::vector<Derivation> derivations;   // figures the loader computed (their values are set above)
  std::vector<std::string> unsupported;  // fields the hardware cannot do (the catalog's support rules)
  // The flagship of this card's compute capability: the catalog's card of that capability with the most
  // watts (ties: the higher FP16 rate), whose TDP is set to hold its rated clocks. Its FP16 tensor FLOPs
  // per watt bound what a card binned for fewer watts can sustain (step_time.cpp). Filled by the
  // catalog loader; empty for a card without a TDP or an FP16 rate.
  std::optional<std::string> power_flagship;
  std::optional<double> power_flagship_fp16_tflops_per_watt;

  const Derivation* derivation(std::string_view field) const;
  bool is_unsupported(std::string_view field) const;

  // The dense matrix rate training at `precision` can use: tensor cores for tf32/fp16/bf16/fp8
  // (FP32 accumulate, as autocast's GEMMs do), CUDA cores for fp32. Empty when the GPU lacks it.
  std::optional<double> matmul_tflops(Precision precision) const;
  // Memory capacity in bytes. Marketed "GB" of GPU memory are binary (GiB) for every card here.
  double memory_bytes() const { return memory_gb * units::kGiB; }
  double compute_capability_value() const;  // "12.0" -> 12.0
  bool supports(Precision precision) const { return matmul_tflops(precision).has_value(); }
  bool is_laptop() const { return family == Family::laptop; }
};

}  // namespace gpusage::catalog
