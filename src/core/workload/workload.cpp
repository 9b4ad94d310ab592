#include "core/workload/workload.hpp"

#include <algorithm>

namespace gpusage::workload {

const char* to_string(OpClass op) {
  switch (op) {
    case OpClass::conv: return "conv";
    case OpClass::matmul: return "matmul";
    case OpClass::attention: return "attention";
    case OpClass::normalization: return "normalization";
    case OpClass::elementwise: return "elementwise";
    case OpClass::pooling: return "pooling";
    case OpClass::embedding: return "embedding";
    case OpClass::loss: return "loss";
  }
  return "?";
}

namespace {

template <typename T>
T sum(const std::vector<Layer>& layers, T Layer::*field) {
  T total{};
  for (const Layer& l : layers) total += l.*field;
  return total;
}

}  // namespace

std::int64_t Workload::params() const { return sum(layers, &Layer::params); }
std::int64_t Workload::frozen_params() const { return sum(layers, &Layer::frozen_params); }
double Workload::forward_flops() const { return sum(layers, &Layer::forward_flops); }
double Workload::backward_flops() const { return sum(layers, &Layer::backward_flops); }
double Workload::saved_elements() const { return sum(layers, &Layer::saved_elements); }
double Workload::saved_fixed_bytes() const { return sum(layers, &Layer::saved_fixed_bytes); }

int Workload::segment_count() const {
  int count = 0;
  for (const Layer& l : layers) count = std::max(count, l.segment + 1);
  return count;
}

}  // namespace gpusage::workload
