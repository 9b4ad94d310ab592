// The model zoo: ids, reference figures with their sources, option checks, and build().
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/workload/hub_models.hpp"
#include "core/workload/models.hpp"
#include "core/workload/workload.hpp"
#include "core/workload/zoo_table.hpp"

namespace gpusage::workload {

namespace {

using detail::zoo_models;
using detail::ZooKind;
using detail::ZooModel;

const ZooModel& find_model(const std::string& id) {
  for (const ZooModel& m : zoo_models()) {
    if (m.entry.id == id) return m;
  }
  throw std::logic_error("no zoo model " + id);
}

// One line with the three nearest names, never the whole list (issue 50).
[[noreturn]] void unknown_model(const std::string& name) {
  std::string message = "unknown model '" + name + "'";
  const std::vector<std::string> close = detail::nearest_names(name);
  if (!close.empty()) message += "; did you mean " + text::join(close, ", ") + "?";
  message +=
      " Give a zoo id, a Hugging Face id (e.g. meta-llama/Llama-3.1-8B) or --hf-config FILE; `gpusage plan "
      "--help` lists the zoo";
  throw InputError(message);
}

detail::VisionShape vision_shape(const std::string& id, const WorkloadOptions& o, int multiple,
                                 const std::string& why) {
  if (o.seq_len) {
    throw InputError("seq_len applies to language models; " + id + " is a vision model (set resolution instead)");
  }
  detail::VisionShape shape;
  shape.flash_attention = o.flash_attention;
  if (o.resolution) {
    const int r = *o.resolution;
    if (r < multiple || r % multiple != 0) {
      throw InputError("resolution " + std::to_string(r) + " is not accepted for " + id +
                       ": give a positive multiple of " + std::to_string(multiple) + " (" + why + "), e.g. 224");
    }
    shape.resolution = r;
  }
  if (o.num_classes) {
    if (*o.num_classes < 1) {
      throw InputError("num_classes " + std::to_string(*o.num_classes) + " is not accepted: give at least 1");
    }
    shape.num_classes = *o.num_classes;
  }
  return shape;
}

int language_seq_len(const std::string& id, const detail::TransformerConfig& c, const WorkloadOptions& o) {
  if (o.resolution || o.num_classes) {
    throw InputError(std::string(o.resolution ? "resolution" : "num_classes") + " applies to vision models; " + id +
                     " is a language model (set seq_len instead)");
  }
  if (!o.seq_len) return c.default_seq_len;
  const int s = *o.seq_len;
  if (s < 1) {
    throw InputError("seq_len " + std::to_string(s) + " is not accepted for " + id + ": give at least 1 token");
  }
  if (c.learned_positions && s > c.max_positions) {
    throw InputError("seq_len " + std::to_string(s) + " is not accepted for " + id + ": it has " +
                     std::to_string(c.max_positions) + " learned position embeddings, so give 1 to " +
                     std::to_string(c.max_positions));
  }
  return s;
}

Workload language_workload(const std::string& id, const detail::TransformerConfig& c, const WorkloadOptions& o) {
  Workload w;
  w.id = id;
  w.domain = Domain::language;
  w.seq_len = language_seq_len(id, c, o);
  w.causal_lm = c.family != detail::Family::bert;
  w.layers = detail::transformer(c, w.seq_len, o.flash_attention, o.head);
  return w;
}

}  // namespace

const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> entries = [] {
    std::vector<ZooEntry> e;
    for (const ZooModel& m : zoo_models()) e.push_back(m.entry);
    return e;
  }();
  return entries;
}

namespace {

Workload build_zoo(const std::string& id, const WorkloadOptions& options) {
  const ZooModel& m = find_model(id);
  Workload w;
  if (m.kind == ZooKind::transformer) {
    w = language_workload(id, detail::parse_hf_config(detail::zoo_hf_config(id)), options);
  } else {
    constexpr int kCnnMultiple = 32;  // five stride-2 stages: the last feature map is resolution / 32
    const bool is_vit = m.kind == ZooKind::vit;
    const detail::VisionShape shape = is_vit ? vision_shape(id, options, m.vit.patch, "the patch size")
                                             : vision_shape(id, options, kCnnMultiple, "the network downsamples by 32");
    w.id = id;
    w.domain = Domain::vision;
    w.resolution = shape.resolution;
    switch (m.kind) {
      case ZooKind::resnet: w.layers = detail::resnet(m.resnet, shape); break;
      case ZooKind::vgg: w.layers = detail::vgg(m.vgg, shape); break;
      case ZooKind::mobilenet_v2: w.layers = detail::mobilenet_v2(shape); break;
      case ZooKind::efficientnet_b0: w.layers = detail::efficientnet_b0(shape); break;
      case ZooKind::vit: w.layers = detail::vit(m.vit, shape); break;
      case ZooKind::transformer: break;
    }
  }
  w.display_name = m.entry.display_name;
  w.architecture_source = m.architecture_source;
  return w;
}

}  // namespace

Workload build(const std::string& name, const WorkloadOptions& options) {
  const std::optional<detail::ResolvedName> r = detail::resolve_name(name);
  if (!r) unknown_model(name);
  if (!r->zoo_id.empty()) return build_zoo(r->zoo_id, options);
  const detail::TransformerConfig c = detail::parse_hf_config(r->config_json);
  Workload w = language_workload(r->hub_id, c, options);
  w.display_name = r->hub_id;
  w.architecture_source =
      std::string("Hugging Face ") + detail::hf_class(c.family) + " from the config.json in " + r->origin;
  if (r->hub && !r->hub->note.empty()) w.architecture_source += "; " + r->hub->note;
  return w;
}

Workload from_hf_config(const std::string& config_json_text, const WorkloadOptions& options) {
  const detail::TransformerConfig c = detail::parse_hf_config(config_json_text);
  Workload w = language_workload(std::string("hf:") + detail::to_string(c.family), c, options);
  w.display_name = c.name;
  w.architecture_source = std::string("Hugging Face ") + detail::hf_class(c.family) + " from config.json";
  return w;
}

}  // namespace gpusage::workload
