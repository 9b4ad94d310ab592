// The memory-bound work LoRA's adapters and QLoRA's dequantization add beside a layer's base GEMM (adapters.hpp).
#include "core/estimate/adapters.hpp"

namespace gpusage::estimate {

bool kbit_upcast_applies(const TrainingConfig& config) {
  return config.qlora && config.kbit_upcast && config.master_weights == MasterWeights::fp32;
}

AdapterCost adapter_cost(const workload::Layer& layer, const TrainingConfig& config, const ModelConstants& k,
                         double batch, double element) {
  AdapterCost c;
  if (lora_rank(config) <= 0) return c;
  for (const workload::Matrix& m : layer.lora_targets) {
    // An MoE layer's experts (m.copies) are each dequantized and adapted; its rows are split among them.
    const double copies = static_cast<double>(m.copies);
    if (config.qlora) {
      const double dequant_bytes =
          copies * static_cast<double>(m.in) * static_cast<double>(m.out) * (k.qlora_bits_per_param / 8 + 2);
      c.forward_bytes += dequant_bytes;
      c.backward_bytes += dequant_bytes;
      c.forward_kernels += 2 * copies;
      c.backward_kernels += 2 * copies;
      // After the k-bit preparation the hidden state is fp32: Linear4bit casts its input to the 16-bit compute
      // dtype (read 4 B, write 2) and its output back to fp32 (read 2, write 4), and backward casts both gradients
      // the other way: two kernels each way.
      const double compute_element = activation_element_bytes(config.precision);
      if (kbit_upcast_applies(config) && compute_element < 4 && m.in > 0) {
        const double rows = batch * layer.input_elements / static_cast<double>(m.in);
        const double cast_bytes = rows * static_cast<double>(m.in + m.out) * (4 + compute_element);
        c.forward_bytes += cast_bytes;
        c.backward_bytes += cast_bytes;
        c.forward_kernels += 2 * copies;
        c.backward_kernels += 2 * copies;
      }
    }
    if (!adapts(config, m) || m.in <= 0) continue;
    const double rows = batch * layer.input_elements / static_cast<double>(m.in);
    const double bytes = rows * static_cast<double>(m.in + 6 * m.out) * element;
    c.forward_bytes += bytes;
    c.backward_bytes += 2 * bytes;
    c.forward_kernels += 4 * copies;
    c.backward_kernels += 6 * copies;
    if (config.lora_dropout > 0) {
      // Dropout reads x and writes the dropped copy and its 1-byte mask; backward reads the gradient and
      // the mask and writes the input's gradient: one kernel each way.
      const double dropout_bytes = rows * static_cast<double>(m.in) * (2 * element + 1);
      c.forward_bytes += dropout_bytes;
      c.backward_bytes += dropout_bytes;
      c.forward_kernels += copies;
      c.backward_kernels += copies;
    }
  }
  return c;
}

}  // namespace gpusage::estimate
