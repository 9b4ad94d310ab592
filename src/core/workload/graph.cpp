#include "core/workload/graph.hpp"

#include <functional>
#include <numeric>
#include <stdexcept>

namespace gpusage::workload::detail {

double Tensor::elements() const {
  return std::accumulate(shape.begin(), shape.end(), 1.0,
                         [](double acc, std::int64_t d) { return acc * static_cast<double>(d); });
}

Tensor Graph::make_tensor(std::vector<std::int64_t> shape, int producer) {
  Tensor t{static_cast<int>(tensors_.size()), std::move(shape)};
  tensors_.push_back(TensorInfo{producer, t.elements(), -1});
  return t;
}

Tensor Graph::input(std::vector<std::int64_t> shape) { return make_tensor(std::move(shape), -1); }

void Graph::mark_saved(const Tensor& t, int saver) {
  if (t.id < 0 || t.id >= static_cast<int>(tensors_.size())) {
    throw std::logic_error("workload graph: saved tensor does not belong to this graph");
  }
  TensorInfo& info = tensors_[static_cast<std::size_t>(t.id)];
  if (info.first_saver < 0) info.first_saver = saver;
}

Tensor Graph::add(LayerSpec spec) {
  const int index = static_cast<int>(layers_.size());
  Layer layer;
  layer.name = std::move(spec.name);
  layer.op = spec.op;
  layer.output_shape = spec.output_shape;
  layer.params = spec.params;
  layer.forward_flops = spec.forward_flops;
  layer.backward_flops = spec.backward_flops;
  layer.forward_io_elements = spec.forward_io_elements;
  layer.saved_elements = spec.internal_saved_elements;
  layer.saved_fixed_bytes = spec.saved_fixed_bytes;
  layer.autocast_extra_saved_bytes = spec.autocast_extra_saved_bytes;
  layer.autocast_extra_io_bytes = spec.autocast_extra_io_bytes;
  layer.autocast_extra_kernels = spec.autocast_extra_kernels;
  layer.layer_norm_columns = spec.layer_norm_columns;
  layer.serial_io_elements = spec.serial_io_elements;
  layer.serial_fixed_bytes = spec.serial_fixed_bytes;
  layer.serial_autocast_extra_bytes = spec.serial_autocast_extra_bytes;
  layer.serial_kernels = spec.serial_kernels;
  layer.eager_extra_elements = spec.eager_extra_elements;
  layer.eager_extra_fp32_elements = spec.eager_extra_fp32_elements;
  layer.eager_extra_kernels = spec.eager_extra_kernels;
  layer.score_elements = spec.score_elements;
  layer.segment = segment_;
  for (const Tensor& in : spec.inputs) layer.input_elements += in.elements();
  layer.lora_targets = std::move(spec.lora_targets);
  layers_.push_back(std::move(layer));

  for (const Tensor& t : spec.saved_inputs) mark_saved(t, index);
  Tensor out = make_tensor(std::move(spec.output_shape), index);
  if (spec.saves_output) mark_saved(out, index);
  return out;
}

std::vector<Layer> Graph::finish() {
  for (const TensorInfo& info : tensors_) {
    if (info.first_saver < 0) continue;  // nobody keeps it: a transient, freed during forward
    const int owner = info.producer >= 0 ? info.producer : info.first_saver;
    layers_[static_cast<std::size_t>(owner)].saved_elements += info.elements;
  }
  tensors_.clear();
  return std::move(layers_);
}

}  // namespace gpusage::workload::detail
