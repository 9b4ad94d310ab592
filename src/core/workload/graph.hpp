// Internal to the workload module: a small graph builder that turns "layer reads these tensors and
// saves these for backward" into the per-layer fields of workload.hpp.
//
// Why a graph and not hand-written per-layer numbers: the saved-activation convention (each saved
// tensor counted once, on the layer that produces it) needs to know who produced what. A ReLU output
// saved by the ReLU itself and by the next convolution, or one hidden state saved by the query, key
// and value projections, is then counted once without any bookkeeping in the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/workload/workload.hpp"

namespace gpusage::workload::detail {

// A tensor flowing between layers, per sample.
struct Tensor {
  int id = -1;
  std::vector<std::int64_t> shape;
  double elements() const;
};

// What one layer does, as the op helpers in layers.hpp describe it.
struct LayerSpec {
  std::string name;
  OpClass op = OpClass::elementwise;
  std::vector<Tensor> inputs;
  std::vector<std::int64_t> output_shape;
  std::int64_t params = 0;
  double forward_flops = 0;
  double backward_flops = 0;
  double forward_io_elements = 0;
  std::vector<Tensor> saved_inputs;    // inputs autograd keeps for this layer's backward
  bool saves_output = false;           // autograd keeps this layer's output for its own backward
  double internal_saved_elements = 0;  // tensors made and kept inside the layer (unfused attention s^2)
  double saved_fixed_bytes = 0;
  double autocast_extra_saved_bytes = 0;  // see Layer::autocast_extra_saved_bytes
  double autocast_extra_io_bytes = 0;     // see Layer::autocast_extra_io_bytes
  int autocast_extra_kernels = 0;
  double layer_norm_columns = 0;  // see Layer::layer_norm_columns
  double serial_io_elements = 0;  // see Layer::serial_io_elements
  double serial_fixed_bytes = 0;
  double serial_autocast_extra_bytes = 0;
  int serial_kernels = 0;
  double eager_extra_elements = 0;  // see Layer::eager_extra_elements
  double eager_extra_fp32_elements = 0;
  int eager_extra_kernels = 0;
  double score_elements = 0;  // see Layer::score_elements
  std::vector<Matrix> lora_targets;
};

class Graph {
 public:
  // The model input (an image, or token ids): a tensor no layer produces.
  Tensor input(std::vector<std::int64_t> shape);
  // Appends a layer in the current segment and returns its output tensor.
  Tensor add(LayerSpec spec);
  void set_segment(int segment) { segment_ = segment; }

  // Resolves the saved-tensor convention and hands over the layers: each tensor that any layer
  // saves is counted once, on the layer that produced it; a saved model input is counted on the first
  // layer that saves it.
  std::vector<Layer> finish();

 private:
  struct TensorInfo {
    int producer = -1;  // layer index; -1 for a model input
    double elements = 0;
    int first_saver = -1;
  };
  Tensor make_tensor(std::vector<std::int64_t> shape, int producer);
  void mark_saved(const Tensor& t, int saver);

  std::vector<Layer> layers_;
  std::vector<TensorInfo> tensors_;
  int segment_ = -1;
};

}  // namespace gpusage::workload::detail
