// The catalog's fields and derived metrics as data: one list that JSON output, `gpus show`, `--sort`,
// `--metrics` and the `sources[].fields` check all read, so that a field added to Gpu is added once here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/catalog/gpu.hpp"

namespace gpusage::catalog {

enum class FieldKind { text, integer, number };

struct Field {
  const char* name;   // the TOML and JSON key
  const char* label;  // what a person reads: "FP16 tensor"
  const char* unit;   // "TFLOPS"; empty for counts and text
  FieldKind kind;
  int decimals;  // how many decimals a table shows
  // Exactly one of these is set, by kind: text fields have `text`, numeric ones `number`.
  std::optional<std::string> (*text)(const Gpu&);
  std::optional<double> (*number)(const Gpu&);
};

// Every field of data/gpus.toml except `sources`, in the schema's order.
const std::vector<Field>& fields();
const Field* find_field(std::string_view name);

// A figure computed from the catalog (never stored in it).
struct DerivedMetric {
  const char* name;  // the key in JSON's "derived" object
  const char* label;
  const char* unit;
  int decimals;
  std::optional<double> Derived::*member;
  const char* tensor_input;  // the tensor rate it is computed from ("fp16_tflops"), or nullptr
};
const std::vector<DerivedMetric>& derived_metrics();

// A number that `--sort` and `--metrics` accept: a numeric catalog field or a derived metric.
struct Metric {
  std::string name;
  std::string label;
  std::string unit;
  int decimals = 0;
  const Field* field = nullptr;            // set for catalog fields
  const DerivedMetric* derived = nullptr;  // set for derived metrics
  std::optional<double> value(const Gpu& gpu) const;
  // A catalog field's own status; a derived metric is derived when its tensor input is, and unsupported
  // when that input is.
  FigureStatus status(const Gpu& gpu) const;
};
// Every accepted metric name, catalog fields first.
std::vector<std::string> metric_names();
// Throws InputError naming `name`, the closest names and every accepted one; `option` names the flag.
Metric find_metric(std::string_view name, std::string_view option);

// Up to `limit` of `names` that `wanted` may have meant: names containing it first, then small edits.
// (text::closest also matches names *contained in* what was typed, which makes "id" a guess for
// "memory_bandwidth"; field names need the stricter rule.)
std::vector<std::string> suggest_names(std::string_view wanted, const std::vector<std::string>& names,
                                       std::size_t limit);

// Sourced, derived (the loader computed it), unsupported (a support rule says the hardware lacks it) or
// unpublished (empty otherwise).
FigureStatus figure_status(const Gpu& gpu, const Field& field);

// The sources that back `field` on `gpu`: those listing it in `fields`, else those with no `fields` list.
std::vector<const Source*> sources_for(const Gpu& gpu, std::string_view field);

}  // namespace gpusage::catalog
