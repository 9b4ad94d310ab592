#include "core/catalog/fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage::catalog {

namespace {

// Reads a Gpu member as an optional number or text, whatever its declared type.
template <auto Member>
std::optional<double> number_of(const Gpu& gpu) {
  const auto& value = gpu.*Member;
  if constexpr (requires { value.has_value(); }) {
    if (!value) return std::nullopt;
    return static_cast<double>(*value);
  } else {
    return static_cast<double>(value);
  }
}

template <auto Member>
std::optional<std::string> text_of(const Gpu& gpu) {
  return gpu.*Member;
}

std::optional<std::string> family_text(const Gpu& gpu) { return std::string(to_string(gpu.family)); }

constexpr auto kText = FieldKind::text;
constexpr auto kInt = FieldKind::integer;
constexpr auto kNum = FieldKind::number;
// Labels are English here and marked for the catalogs (po/); a view translates them where it shows them.
using i18n::N_;

}  // namespace

const std::vector<Field>& fields() {
  static const std::vector<Field> list{
      {"id", N_("ID"), "", kText, 0, &text_of<&Gpu::id>, nullptr},
      {"name", N_("Name"), "", kText, 0, &text_of<&Gpu::name>, nullptr},
      {"family", N_("Family"), "", kText, 0, &family_text, nullptr},
      {"architecture", N_("Architecture"), "", kText, 0, &text_of<&Gpu::architecture>, nullptr},
      {"chip", N_("Chip"), "", kText, 0, &text_of<&Gpu::chip>, nullptr},
      {"compute_capability", N_("Compute capability"), "", kText, 0, &text_of<&Gpu::compute_capability>, nullptr},
      {"form_factor", N_("Form factor"), "", kText, 0, &text_of<&Gpu::form_factor>, nullptr},
      {"sm_count", N_("SMs"), "", kInt, 0, nullptr, &number_of<&Gpu::sm_count>},
      {"cuda_cores", N_("CUDA cores"), "", kInt, 0, nullptr, &number_of<&Gpu::cuda_cores>},
      {"tensor_cores", N_("Tensor cores"), "", kInt, 0, nullptr, &number_of<&Gpu::tensor_cores>},
      {"tensor_core_generation", N_("Tensor core generation"), "", kInt, 0, nullptr,
       &number_of<&Gpu::tensor_core_generation>},
      {"base_clock_mhz", N_("Base clock"), "MHz", kNum, 0, nullptr, &number_of<&Gpu::base_clock_mhz>},
      {"boost_clock_mhz", N_("Boost clock"), "MHz", kNum, 0, nullptr, &number_of<&Gpu::boost_clock_mhz>},
      {"memory_gb", N_("VRAM"), "GB", kNum, 0, nullptr, &number_of<&Gpu::memory_gb>},
      {"memory_type", N_("Memory type"), "", kText, 0, &text_of<&Gpu::memory_type>, nullptr},
      {"memory_bus_bits", N_("Memory bus"), "bit", kInt, 0, nullptr, &number_of<&Gpu::memory_bus_bits>},
      {"memory_bandwidth_gbs", N_("Bandwidth"), "GB/s", kNum, 0, nullptr, &number_of<&Gpu::memory_bandwidth_gbs>},
      {"l2_cache_mb", N_("L2 cache"), "MB", kNum, 0, nullptr, &number_of<&Gpu::l2_cache_mb>},
      {"tdp_w", N_("TDP"), "W", kNum, 0, nullptr, &number_of<&Gpu::tdp_w>},
      {"power_min_w", N_("Power range from"), "W", kNum, 0, nullptr, &number_of<&Gpu::power_min_w>},
      {"pcie_gen", N_("PCIe generation"), "", kInt, 0, nullptr, &number_of<&Gpu::pcie_gen>},
      {"pcie_lanes", N_("PCIe lanes"), "", kInt, 0, nullptr, &number_of<&Gpu::pcie_lanes>},
      {"nvlink_gbs", N_("NVLink"), "GB/s", kNum, 0, nullptr, &number_of<&Gpu::nvlink_gbs>},
      {"node_network_gbps", N_("Reference server network"), "Gb/s", kNum, 0, nullptr,
       &number_of<&Gpu::node_network_gbps>},
      {"fp64_tflops", N_("FP64"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::fp64_tflops>},
      {"fp32_tflops", N_("FP32"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::fp32_tflops>},
      {"tf32_tflops", N_("TF32 tensor"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::tf32_tflops>},
      {"fp16_tflops", N_("FP16 tensor"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::fp16_tflops>},
      {"fp16_acc16_tflops", N_("FP16 tensor, FP16 accumulate"), "TFLOPS", kNum, 1, nullptr,
       &number_of<&Gpu::fp16_acc16_tflops>},
      {"bf16_tflops", N_("BF16 tensor"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::bf16_tflops>},
      {"fp8_tflops", N_("FP8 tensor"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::fp8_tflops>},
      {"fp8_acc16_tflops", N_("FP8 tensor, FP16 accumulate"), "TFLOPS", kNum, 1, nullptr,
       &number_of<&Gpu::fp8_acc16_tflops>},
      {"fp4_tflops", N_("FP4 tensor"), "TFLOPS", kNum, 1, nullptr, &number_of<&Gpu::fp4_tflops>},
      {"int8_tops", N_("INT8 tensor"), "TOPS", kNum, 0, nullptr, &number_of<&Gpu::int8_tops>},
      {"ai_tops", N_("AI TOPS (NVIDIA, sparse)"), "TOPS", kNum, 0, nullptr, &number_of<&Gpu::ai_tops>},
      {"ai_tops_rule", N_("AI TOPS rule"), "", kText, 0, &text_of<&Gpu::ai_tops_rule>, nullptr},
      {"tensor_rule", N_("Tensor rate rule"), "", kText, 0, &text_of<&Gpu::tensor_rule>, nullptr},
      {"launch_date", N_("Launch date"), "", kText, 0, &text_of<&Gpu::launch_date>, nullptr},
      {"msrp_usd", N_("Launch price"), "USD", kNum, 0, nullptr, &number_of<&Gpu::msrp_usd>},
      {"market", N_("Market"), "", kText, 0, &text_of<&Gpu::market>, nullptr},
      {"variant_of", N_("Variant of"), "", kText, 0, &text_of<&Gpu::variant_of>, nullptr},
  };
  return list;
}

const Field* find_field(std::string_view name) {
  for (const Field& field : fields()) {
    if (name == field.name) return &field;
  }
  return nullptr;
}

const std::vector<DerivedMetric>& derived_metrics() {
  static const std::vector<DerivedMetric> list{
      {"fp16_tflops_per_usd", N_("FP16 tensor per dollar"), "TFLOPS/USD", 4, &Derived::fp16_tflops_per_usd,
       "fp16_tflops"},
      {"fp16_tflops_per_watt", N_("FP16 tensor per watt"), "TFLOPS/W", 3, &Derived::fp16_tflops_per_watt,
       "fp16_tflops"},
      {"fp32_tflops_per_usd", N_("FP32 per dollar"), "TFLOPS/USD", 4, &Derived::fp32_tflops_per_usd, nullptr},
      {"fp32_tflops_per_watt", N_("FP32 per watt"), "TFLOPS/W", 3, &Derived::fp32_tflops_per_watt, nullptr},
      {"vram_gb_per_usd", N_("VRAM per dollar"), "GB/USD", 4, &Derived::vram_gb_per_usd, nullptr},
      {"bandwidth_gbs_per_fp16_tflop", N_("Bandwidth per FP16 TFLOPS"), "GB/s per TFLOPS", 2,
       &Derived::bandwidth_gbs_per_fp16_tflop, "fp16_tflops"},
      {"ridge_point_flop_per_byte", N_("Ridge point (FP16)"), "FLOP/byte", 0, &Derived::ridge_point_flop_per_byte,
       "fp16_tflops"},
  };
  return list;
}

std::optional<double> Metric::value(const Gpu& gpu) const {
  if (field) return field->number(gpu);
  if (derived) return derive(gpu).*(derived->member);
  return std::nullopt;
}

FigureStatus Metric::status(const Gpu& gpu) const {
  if (field) return figure_status(gpu, *field);
  const bool known = value(gpu).has_value();
  if (derived && derived->tensor_input) {
    const FigureStatus input = figure_status(gpu, *find_field(derived->tensor_input));
    if (known) return input == FigureStatus::derived ? FigureStatus::derived : FigureStatus::sourced;
    if (input == FigureStatus::unsupported) return FigureStatus::unsupported;
  }
  return known ? FigureStatus::sourced : FigureStatus::unpublished;
}

std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const Field& field : fields()) {
    if (field.number) names.emplace_back(field.name);
  }
  for (const DerivedMetric& metric : derived_metrics()) names.emplace_back(metric.name);
  return names;
}

Metric find_metric(std::string_view name, std::string_view option) {
  const std::string wanted = text::to_lower(text::trim(name));
  if (const Field* field = find_field(wanted); field && field->number) {
    return Metric{field->name, field->label, field->unit, field->decimals, field, nullptr};
  }
  for (const DerivedMetric& metric : derived_metrics()) {
    if (wanted == metric.name) return Metric{metric.name, metric.label, metric.unit, metric.decimals, nullptr, &metric};
  }
  const auto names = metric_names();
  const auto close = suggest_names(wanted, names, 3);
  std::string hint = close.empty() ? "" : fmt::format(" (did you mean {}?)", text::join(close, " or "));
  throw InputError(
      fmt::format("{}: '{}' is not a numeric field{}; accepted: {}", option, name, hint, text::join(names)));
}

std::vector<std::string> suggest_names(std::string_view wanted, const std::vector<std::string>& names,
                                       std::size_t limit) {
  const std::string key = text::to_lower(wanted);
  std::vector<std::tuple<int, std::size_t, std::string>> scored;  // (tier, distance, name)
  for (const auto& name : names) {
    std::size_t distance = text::edit_distance(key, name);
    if (key.size() >= 3 && name.find(key) != std::string::npos) {
      scored.emplace_back(0, distance, name);
    } else if (distance <= std::max<std::size_t>(2, key.size() / 3)) {
      scored.emplace_back(1, distance, name);
    }
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::string> out;
  for (const auto& entry : scored) {
    if (out.size() == limit) break;
    out.push_back(std::get<2>(entry));
  }
  return out;
}

FigureStatus figure_status(const Gpu& gpu, const Field& field) {
  if (gpu.derivation(field.name)) return FigureStatus::derived;
  const bool known = field.text ? field.text(gpu).has_value() : field.number(gpu).has_value();
  if (known) return FigureStatus::sourced;
  return gpu.is_unsupported(field.name) ? FigureStatus::unsupported : FigureStatus::unpublished;
}

std::vector<const Source*> sources_for(const Gpu& gpu, std::string_view field) {
  std::vector<const Source*> claimed, general;
  for (const Source& source : gpu.sources) {
    if (source.fields.empty()) {
      general.push_back(&source);
    } else {
      for (const auto& f : source.fields) {
        if (f == field) {
          claimed.push_back(&source);
          break;
        }
      }
    }
  }
  return claimed.empty() ? general : claimed;
}

}  // namespace gpusage::catalog
