// gpu.hpp's definitions: the enums' names and what a Gpu answers about its own figures.
#include "core/catalog/gpu.hpp"

#include <algorithm>
#include <cstdlib>

namespace gpusage::catalog {

const char* to_string(Family family) {
  switch (family) {
    case Family::rtx50: return "rtx50";
    case Family::rtx40: return "rtx40";
    case Family::rtx30: return "rtx30";
    case Family::rtx20: return "rtx20";
    case Family::gtx: return "gtx";
    case Family::laptop: return "laptop";
    case Family::datacenter: return "datacenter";
    case Family::workstation: return "workstation";
  }
  return "?";
}

std::string family_names() {
  std::string out;
  for (Family f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(to_string(f));
  return out;
}

const char* to_string(FigureStatus status) {
  switch (status) {
    case FigureStatus::sourced: return "sourced";
    case FigureStatus::derived: return "derived";
    case FigureStatus::unpublished: return "unpublished";
    case FigureStatus::unsupported: return "unsupported";
  }
  return "?";
}

const Derivation* Gpu::derivation(std::string_view field) const {
  for (const auto& d : derivations) {
    if (d.field == field) return &d;
  }
  return nullptr;
}

bool Gpu::is_unsupported(std::string_view field) const {
  return std::find(unsupported.begin(), unsupported.end(), field) != unsupported.end();
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

std::optional<double> Gpu::matmul_tflops(Precision precision) const {
  switch (precision) {
    case Precision::fp32: return fp32_tflops;
    case Precision::tf32: return tf32_tflops;
    case Precision::fp16: return fp16_tflops;
    case Precision::bf16: return bf16_tflops;
    case Precision::fp8: return fp8_tflops;
  }
  return std::nullopt;
}

double Gpu::compute_capability_value() const { return std::strtod(compute_capability.c_str(), nullptr); }

}  // namespace gpusage::catalog
