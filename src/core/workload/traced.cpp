// gpusage-trace's workload JSON -> Workload. Every field is checked: a traced file is user input, and a
// number that overflows, a negative count or a wrong type must end in one line naming it, never in a
// prediction made from garbage (docs/MODEL.md, "How traced workloads are priced", has the format).
#include "core/workload/traced.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"

namespace gpusage::workload {

namespace {

using nlohmann::json;

// Bounds, far above any real model, that keep every product the estimators form finite: ViT-H/14 at 518
// pixels is about 1.2e12 forward FLOPs per sample and a 405B-parameter model has 4e11 parameters.
constexpr double kMaxPerSample = 1e18;                   // FLOPs, elements, bytes per sample
constexpr std::int64_t kMaxParams = 10'000'000'000'000;  // parameters per layer
constexpr std::int64_t kMaxDimension = 1LL << 40;
constexpr std::size_t kMaxLayers = 1'000'000;
constexpr int kMaxSegment = 1'000'000;
constexpr int kMaxSide = 1 << 20;  // resolution, sequence length
constexpr std::size_t kMaxNotes = 100;
constexpr std::size_t kMaxNoteLength = 500;

const std::map<std::string, OpClass>& op_classes() {
  static const std::map<std::string, OpClass> classes = {
      {"conv", OpClass::conv},
      {"matmul", OpClass::matmul},
      {"attention", OpClass::attention},
      {"normalization", OpClass::normalization},
      {"elementwise", OpClass::elementwise},
      {"pooling", OpClass::pooling},
      {"embedding", OpClass::embedding},
      {"loss", OpClass::loss},
  };
  return classes;
}

std::string known_classes() {
  std::string list;
  for (const auto& [name, op] : op_classes()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// Reads fields of one JSON object, each error naming the file and the path to the field.
class Reader {
 public:
  Reader(const json& object, std::string file, std::string path)
      : j_(object), file_(std::move(file)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "is " + j_.dump(), "an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& accepted) const {
    std::string where = path_.empty() ? key : key.empty() ? path_ : path_ + "." + key;
    if (where.empty()) where = "the document";
    throw InputError(fmt::format("workload {}: {} {}; accepted: {}", file_, where, what, accepted));
  }

  const json* find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& required(const char* key, const std::string& accepted) const {
    const json* v = find(key);
    if (!v) fail(key, "is missing", accepted);
    return *v;
  }

  std::string text(const char* key, bool needed) const {
    const json* v = needed ? &required(key, "a string") : find(key);
    if (!v) return "";
    if (!v->is_string()) fail(key, "is " + clip(v->dump()), "a string");
    return v->get<std::string>();
  }

  double amount(const char* key, double max = kMaxPerSample) const {
    const json* v = find(key);
    if (!v) return 0;
    const std::string accepted = fmt::format("a number from 0 to {:g}", max);
    if (!v->is_number()) fail(key, "is " + clip(v->dump()), accepted);
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < 0 || d > max) fail(key, "is " + v->dump(), accepted);
    return d;
  }

  std::int64_t whole(const char* key, std::int64_t min, std::int64_t max, std::int64_t fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    return whole_value(*v, key, min, max);
  }

  std::int64_t whole_value(const json& v, const std::string& key, std::int64_t min, std::int64_t max) const {
    const std::string accepted = fmt::format("a whole number from {} to {}", min, max);
    if (!v.is_number()) fail(key, "is " + clip(v.dump()), accepted);
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(key, "is " + v.dump(), accepted);
    }
    return v.is_number_unsigned()  ? static_cast<std::int64_t>(v.get<std::uint64_t>())
           : v.is_number_integer() ? v.get<std::int64_t>()
                                   : static_cast<std::int64_t>(d);
  }

  const json& object() const { return j_; }
  const std::string& file() const { return file_; }
  std::string child(const std::string& name) const { return path_.empty() ? name : path_ + "." + name; }

 private:
  static std::string clip(const std::string& s) { return s.size() > 60 ? s.substr(0, 57) + "..." : s; }

  const json& j_;
  std::string file_;
  std::string path_;
};

std::vector<std::int64_t> read_shape(const Reader& r) {
  std::vector<std::int64_t> shape;
  const json* v = r.find("output_shape");
  if (!v) return shape;
  if (!v->is_array() || v->size() > 16)
    r.fail("output_shape", "is " + v->dump().substr(0, 60), "a list of up to 16 sizes");
  for (std::size_t i = 0; i < v->size(); ++i) {
    shape.push_back(r.whole_value((*v)[i], fmt::format("output_shape[{}]", i), 1, kMaxDimension));
  }
  return shape;
}

std::vector<Matrix> read_lora_targets(const Reader& r) {
  std::vector<Matrix> targets;
  const json* v = r.find("lora_targets");
  if (!v) return targets;
  if (!v->is_array()) r.fail("lora_targets", "is " + v->dump().substr(0, 60), "a list of {in, out, attention}");
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Reader m((*v)[i], r.file(), r.child(fmt::format("lora_targets[{}]", i)));
    Matrix matrix;
    matrix.in = m.whole("in", 1, kMaxDimension, 0);
    matrix.out = m.whole("out", 1, kMaxDimension, 0);
    if (matrix.in == 0 || matrix.out == 0) m.fail(matrix.in == 0 ? "in" : "out", "is missing", "a whole number");
    const json* attention = m.find("attention");
    if (attention && !attention->is_boolean()) m.fail("attention", "is " + attention->dump(), "true or false");
    matrix.attention = attention && attention->get<bool>();
    targets.push_back(matrix);
  }
  return targets;
}

Layer read_layer(const Reader& r, std::map<std::string, std::pair<int, double>>& unknown) {
  Layer layer;
  layer.name = r.text("name", true);
  const std::string op = r.text("op", true);
  const auto known = op_classes().find(op);
  layer.op = known == op_classes().end() ? OpClass::elementwise : known->second;
  layer.output_shape = read_shape(r);
  layer.params = r.whole("params", 0, kMaxParams, 0);
  layer.frozen_params = r.whole("frozen_params", 0, kMaxParams, 0);
  layer.forward_flops = r.amount("forward_flops");
  layer.backward_flops = r.amount("backward_flops");
  layer.forward_io_elements = r.amount("forward_io_elements");
  layer.saved_elements = r.amount("saved_elements");
  layer.saved_fixed_bytes = r.amount("saved_fixed_bytes");
  layer.autocast_extra_saved_bytes = r.amount("autocast_extra_saved_bytes");
  layer.input_elements = r.amount("input_elements");
  layer.score_elements = r.amount("score_elements");
  layer.segment = static_cast<int>(r.whole("segment", -1, kMaxSegment, -1));
  layer.lora_targets = read_lora_targets(r);
  if (known == op_classes().end()) {
    auto& [count, flops] = unknown[op];
    ++count;
    flops += layer.forward_flops;
  }
  return layer;
}

json parse(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann names the position and, for a number like 1e999, the number itself.
    throw InputError(fmt::format("workload {} is not valid JSON: {}", file, e.what()));
  }
}

}  // namespace

Workload from_traced_workload(const std::string& json_text, const std::string& file) {
  const json doc = parse(json_text, file);
  const Reader r(doc, file, "");
  if (r.text("format", true) != kTracedFormat) {
    r.fail("format", "is '" + r.text("format", true) + "'",
           fmt::format("'{}' (a file gpusage-trace wrote)", kTracedFormat));
  }
  const std::int64_t version = r.whole("version", 0, 1'000'000, -1);
  if (version != kTracedVersion) {
    r.fail("version", version < 0 ? "is missing" : fmt::format("is {}", version),
           fmt::format("{} (trace the model again with this gpusage's gpusage-trace)", kTracedVersion));
  }
  Workload w;
  w.id = r.text("id", true);
  w.display_name = r.text("display_name", false);
  if (w.display_name.empty()) w.display_name = w.id;
  const std::string domain = r.text("domain", true);
  if (domain != "vision" && domain != "language") r.fail("domain", "is '" + domain + "'", "vision or language");
  w.domain = domain == "vision" ? Domain::vision : Domain::language;
  w.resolution = static_cast<int>(r.whole("resolution", 0, kMaxSide, 0));
  w.seq_len = static_cast<int>(r.whole("seq_len", 0, kMaxSide, 0));
  if (w.domain == Domain::language && w.seq_len == 0)
    r.fail("seq_len", "is missing", "the tokens per sample, 1 or more");
  w.architecture_source = r.text("source", false);
  if (w.architecture_source.empty()) w.architecture_source = "traced by gpusage-trace (" + file + ")";

  const json& layers = r.required("layers", "a list of layers");
  if (!layers.is_array() || layers.empty() || layers.size() > kMaxLayers) {
    r.fail("layers", layers.is_array() ? fmt::format("has {} entries", layers.size()) : "is not a list",
           fmt::format("a list of 1 to {} layers", kMaxLayers));
  }
  std::map<std::string, std::pair<int, double>> unknown;  // op -> layers, forward FLOPs
  for (std::size_t i = 0; i < layers.size(); ++i) {
    w.layers.push_back(read_layer(Reader(layers[i], file, fmt::format("layers[{}]", i)), unknown));
  }
  if (const json* notes = r.find("notes")) {
    // What gpusage-trace had to tell (custom autograd Functions, a CPU fallback): plan repeats it.
    if (!notes->is_array() || notes->size() > kMaxNotes) r.fail("notes", "is not a short list", "a list of strings");
    for (const json& note : *notes) {
      if (!note.is_string()) r.fail("notes", "holds " + note.dump().substr(0, 60), "a list of strings");
      w.notes.push_back("gpusage-trace: " + note.get<std::string>().substr(0, kMaxNoteLength));
    }
  }
  const double total = w.forward_flops();
  for (const auto& [op, share] : unknown) {
    w.notes.push_back(fmt::format(
        "traced op class '{}' ({} layer{}, {:.1f}% of the forward FLOPs) is not one gpusage knows ({}): priced "
        "as a memory-bound elementwise kernel",
        op, share.first, share.first == 1 ? "" : "s", total > 0 ? 100 * share.second / total : 0.0, known_classes()));
  }
  return w;
}

}  // namespace gpusage::workload
