// The op helpers. Each states what PyTorch autograd saves for the op in training mode (from
// tools/autograd/derivatives.yaml and the module code of torchvision / Hugging Face), because that is
// what the memory model sums. Saved tensors are declared here; graph.cpp counts each one once, on the
// layer that produced it.
#include "core/workload/layers.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpusage::workload::detail {

namespace {

// Arithmetic per element of the memory-bound kernels, counted ptflops-style (one FLOP per add, mul,
// compare; transcendental functions as a few). The step-time model treats these ops as bandwidth
// bound, so the counts matter only for honest totals; torchvision's published figures leave them out.
constexpr double kSimpleFlopsPerElement = 1;   // relu, add, mul, dropout's scaled mask multiply
constexpr double kSigmoidFlopsPerElement = 3;  // exp, add, divide
constexpr double kSiluFlopsPerElement = 4;     // sigmoid, then multiply
constexpr double kGeluFlopsPerElement = 8;     // erf / tanh polynomial
constexpr double kTanhFlopsPerElement = 3;
constexpr double kBatchNormFlopsPerElement = 2;     // normalise as one multiply-add (scale/shift per channel)
constexpr double kLayerNormFlopsPerElement = 5;     // mean, variance, normalise, scale, shift
constexpr double kRmsNormFlopsPerElement = 4;       // square-sum, normalise, scale
constexpr double kRotaryFlopsPerElement = 3;        // q*cos + rotate_half(q)*sin
constexpr double kCrossEntropyFlopsPerElement = 4;  // max, exp, sum, log of the log-softmax

// cuDNN / flash-attention keep statistics in fp32 whatever the compute precision.
constexpr double kFp32Bytes = 4;
// max_pool2d_with_indices keeps int64 indices; embedding backward keeps the int64 index tensor.
constexpr double kIndexBytes = 8;
// native_dropout keeps a bool mask.
constexpr double kMaskBytes = 1;

std::int64_t conv_out(std::int64_t in, int kernel, int stride, int padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

std::int64_t last_dim(const Tensor& x) { return x.shape.empty() ? 1 : x.shape.back(); }

// A memory-bound op: forward reads its inputs and writes its output; backward is about as costly.
LayerSpec elementwise_spec(const std::string& name, OpClass op, std::vector<Tensor> inputs,
                           std::vector<std::int64_t> out_shape, double flops_per_out_element) {
  LayerSpec s;
  s.name = name;
  s.op = op;
  s.output_shape = std::move(out_shape);
  const double out = Tensor{-1, s.output_shape}.elements();
  double in = 0;
  for (const Tensor& t : inputs) in += t.elements();
  s.inputs = std::move(inputs);
  s.forward_flops = flops_per_out_element * out;
  s.backward_flops = s.forward_flops;
  s.forward_io_elements = in + out;
  return s;
}

}  // namespace

std::string join_name(const std::string& prefix, const std::string& name) {
  if (prefix.empty()) return name;
  if (name.empty()) return prefix;
  return prefix + "." + name;
}

Tensor view(const Tensor& x, std::vector<std::int64_t> shape) {
  Tensor v{x.id, std::move(shape)};
  if (v.elements() != x.elements()) throw std::logic_error("workload graph: view changes the element count");
  return v;
}

Tensor select(const Tensor& base, std::vector<std::int64_t> shape) { return Tensor{base.id, std::move(shape)}; }

// Conv2d saves its input (for the weight gradient) and its weight (a parameter, not counted). Even
// the first conv saves its input image. Backward: input gradient + weight gradient, 2x forward; 1x
// when the input needs no gradient.
Tensor conv2d(Graph& g, const std::string& name, const Tensor& x, const ConvSpec& c) {
  const std::int64_t in_ch = x.shape.at(0);
  const std::int64_t h = conv_out(x.shape.at(1), c.kernel, c.stride, c.padding);
  const std::int64_t w = conv_out(x.shape.at(2), c.kernel, c.stride, c.padding);
  LayerSpec s;
  s.name = name;
  s.op = OpClass::conv;
  s.inputs = {x};
  s.output_shape = {c.out_channels, h, w};
  const double k2 = static_cast<double>(c.kernel) * c.kernel;
  const double weights = static_cast<double>(c.out_channels) * static_cast<double>(in_ch / c.groups) * k2;
  s.params = static_cast<std::int64_t>(weights) + (c.bias ? c.out_channels : 0);
  s.forward_flops = 2.0 * weights * static_cast<double>(h * w);  // a multiply-add is 2 FLOPs
  s.backward_flops = (c.input_needs_grad ? 2.0 : 1.0) * s.forward_flops;
  s.forward_io_elements = x.elements() + static_cast<double>(c.out_channels * h * w);
  s.saved_inputs = {x};
  return g.add(std::move(s));
}

// BatchNorm2d in training (cuDNN): saves its input plus per-channel mean and inverse std (2*C fp32
// per batch, not per sample: negligible and left out). Forward reads the input twice (statistics,
// then normalisation) and writes the output.
Tensor batch_norm(Graph& g, const std::string& name, const Tensor& x) {
  LayerSpec s = elementwise_spec(name, OpClass::normalization, {x}, x.shape, kBatchNormFlopsPerElement);
  s.params = 2 * x.shape.at(0);
  s.forward_io_elements = 2 * x.elements() + x.elements();
  s.saved_inputs = {x};
  return g.add(std::move(s));
}

// ReLU / ReLU6 (in place in torchvision): threshold_backward / hardtanh_backward use the result, so
// the output is saved. SiLU and GELU need their input. Sigmoid and tanh need their output.
Tensor activation(Graph& g, const std::string& name, const Tensor& x, Activation act) {
  double flops = kSimpleFlopsPerElement;
  bool saves_output = false;
  switch (act) {
    case Activation::none: return x;
    case Activation::relu:
    case Activation::relu6: saves_output = true; break;
    case Activation::silu: flops = kSiluFlopsPerElement; break;
    case Activation::gelu: flops = kGeluFlopsPerElement; break;
    case Activation::sigmoid:
      flops = kSigmoidFlopsPerElement;
      saves_output = true;
      break;
    case Activation::tanh:
      flops = kTanhFlopsPerElement;
      saves_output = true;
      break;
  }
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {x}, x.shape, flops);
  if (saves_output) {
    s.saves_output = true;
  } else {
    s.saved_inputs = {x};
  }
  return g.add(std::move(s));
}

Tensor conv_bn_act(Graph& g, const std::string& prefix, const Tensor& x, const ConvSpec& c, Activation act) {
  ConvSpec no_bias = c;
  no_bias.bias = false;  // Conv2dNormActivation drops the conv bias when a norm layer follows
  Tensor y = conv2d(g, join_name(prefix, "0"), x, no_bias);
  y = batch_norm(g, join_name(prefix, "1"), y);
  return activation(g, join_name(prefix, "2"), y, act);
}

// max_pool2d_with_indices saves its input and the int64 argmax indices (8 bytes per output element).
Tensor max_pool2d(Graph& g, const std::string& name, const Tensor& x, int kernel, int stride, int padding) {
  const std::int64_t h = conv_out(x.shape.at(1), kernel, stride, padding);
  const std::int64_t w = conv_out(x.shape.at(2), kernel, stride, padding);
  LayerSpec s = elementwise_spec(name, OpClass::pooling, {x}, {x.shape.at(0), h, w},
                                 static_cast<double>(kernel) * kernel);  // one compare per window element
  s.backward_flops = Tensor{-1, s.output_shape}.elements();              // scatter of the gradient through the indices
  s.saved_inputs = {x};
  s.saved_fixed_bytes = kIndexBytes * Tensor{-1, s.output_shape}.elements();
  return g.add(std::move(s));
}

// adaptive_avg_pool2d to 1x1 runs as mean over H and W (ATen's shortcut), whose backward needs only
// sizes: nothing saved. Any other output size runs _adaptive_avg_pool2d, which saves its input.
Tensor adaptive_avg_pool2d(Graph& g, const std::string& name, const Tensor& x, std::int64_t out_side) {
  const double window = static_cast<double>(x.shape.at(1) * x.shape.at(2)) / static_cast<double>(out_side * out_side);
  LayerSpec s =
      elementwise_spec(name, OpClass::pooling, {x}, {x.shape.at(0), out_side, out_side}, std::max(1.0, window));
  s.backward_flops = x.elements();
  if (out_side != 1) s.saved_inputs = {x};
  return g.add(std::move(s));
}

// Residual add: its backward passes the gradient through; nothing saved.
Tensor add(Graph& g, const std::string& name, const Tensor& a, const Tensor& b) {
  return g.add(elementwise_spec(name, OpClass::elementwise, {a, b}, a.shape, kSimpleFlopsPerElement));
}

// A transformer's residual add: under autocast the stream it adds into is fp32 (fp32 embeddings and positions,
// and fp32 + fp16 promotes), so it reads and writes 4-byte elements where the block's output is 2: 4 bytes more
// per element, in the same kernel.
Tensor residual_add(Graph& g, const std::string& name, const Tensor& stream, const Tensor& block_output) {
  LayerSpec s =
      elementwise_spec(name, OpClass::elementwise, {stream, block_output}, stream.shape, kSimpleFlopsPerElement);
  s.autocast_extra_io_bytes = 2 * (kFp32Bytes - 2) * stream.elements();
  return g.add(std::move(s));
}

// a * b with both requiring grad (SE scaling, SwiGLU's act(gate) * up): each gradient needs the
// other factor, so both are saved.
Tensor mul(Graph& g, const std::string& name, const Tensor& a, const Tensor& b) {
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {a, b}, a.shape, kSimpleFlopsPerElement);
  s.saved_inputs = {a, b};
  return g.add(std::move(s));
}

// Dropout in training (native_dropout): saves a 1-byte bool mask per element. With p == 0 ATen
// returns the input untouched, so no layer at all.
Tensor dropout(Graph& g, const std::string& name, const Tensor& x, double p) {
  if (p <= 0) return x;
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {x}, x.shape, kSimpleFlopsPerElement);
  s.saved_fixed_bytes = kMaskBytes * x.elements();
  return g.add(std::move(s));
}

// nn.Linear / HF Conv1D (addmm): saves its input for the weight gradient. Bias adds are left out of
// the FLOPs (rows x out, under 0.1% of the product). A tied weight is owned by the embedding.
Tensor linear(Graph& g, const std::string& name, const Tensor& x, const LinearSpec& l) {
  const std::int64_t in_features = last_dim(x);
  std::vector<std::int64_t> out_shape = x.shape;
  if (out_shape.empty()) out_shape.push_back(1);
  out_shape.back() = l.out_features;
  const double rows = x.elements() / static_cast<double>(in_features);
  const double weights = static_cast<double>(in_features) * static_cast<double>(l.out_features);
  LayerSpec s;
  s.name = name;
  s.op = OpClass::matmul;
  s.inputs = {x};
  s.output_shape = out_shape;
  s.params = l.experts * ((l.weight_tied ? 0 : static_cast<std::int64_t>(weights)) + (l.bias ? l.out_features : 0));
  s.forward_flops = 2.0 * rows * weights;
  s.backward_flops = (l.input_needs_grad ? 2.0 : 1.0) * s.forward_flops;
  s.forward_io_elements = x.elements() + rows * static_cast<double>(l.out_features);
  s.saved_inputs = {x};
  if (l.lora) s.lora_targets.push_back(Matrix{in_features, l.out_features, l.attention, l.experts});
  return g.add(std::move(s));
}

// A norm on autocast's fp32 residual stream, beyond its input and output at 2 bytes: 2 more bytes read and 2
// more written per element (4-byte elements), and the 16-bit cast the next linear makes of its output (read 4,
// write 2) in one more kernel: 10 bytes. PyTorch's autocast op reference lists layer_norm (and the fp32 ops of an
// eager RMSNorm) to run in float32; MosaicML's LPLayerNorm exists to avoid this traffic.
namespace {
void add_fp32_stream_norm_traffic(LayerSpec& s, double elements) {
  s.autocast_extra_io_bytes = 10 * elements;
  s.autocast_extra_kernels = 1;
}
}  // namespace

// LayerNorm saves its input and per-row mean and rstd (fp32: 2 x 4 bytes per row). One fused pass.
Tensor layer_norm(Graph& g, const std::string& name, const Tensor& x) {
  LayerSpec s = elementwise_spec(name, OpClass::normalization, {x}, x.shape, kLayerNormFlopsPerElement);
  const double rows = x.elements() / static_cast<double>(last_dim(x));
  s.params = 2 * last_dim(x);
  s.saved_inputs = {x};
  s.saved_fixed_bytes = 2 * kFp32Bytes * rows;
  // Under autocast the residual stream that feeds a norm is fp32 (embeddings and positions are fp32
  // parameters, and fp32 + fp16 promotes to fp32), and layer_norm runs in fp32: its saved input is 4
  // bytes wide, 2 more than saved_elements counts in 16-bit training.
  s.autocast_extra_saved_bytes = (kFp32Bytes - 2) * x.elements();
  add_fp32_stream_norm_traffic(s, x.elements());
  s.layer_norm_columns = static_cast<double>(last_dim(x));
  return g.add(std::move(s));
}

// HF's eager Python RMSNorm beyond the fused kernel's read and write (Layer::eager_extra_elements), per element:
// the cast to fp32 (read x, write 4 B), pow (4 B in and out), mean (4 B in), the product with rsqrt (4 B in and
// out) and the cast back (4 B in, x's width out), then the weight's product (x's width in and out): seven fp32
// accesses and four at x's width, two of which the fused kernel also makes; seven more kernels (rsqrt and the
// eps add run on one value per row).
namespace {
void add_eager_rms_norm(LayerSpec& s, double elements) {
  s.eager_extra_fp32_elements = 7 * elements;
  s.eager_extra_elements = 2 * elements;
  s.eager_extra_kernels = 7;
}
}  // namespace

// RMSNorm as a fused kernel (torch.nn.functional.rms_norm, apex / Liger): saves its input and the
// per-row rstd (fp32). HF's eager Python RMSNorm keeps more (an fp32 copy of the input and the
// normalised product); this counts the fused kernel's memory, and its extra traffic under --kernels eager.
Tensor rms_norm(Graph& g, const std::string& name, const Tensor& x) {
  LayerSpec s = elementwise_spec(name, OpClass::normalization, {x}, x.shape, kRmsNormFlopsPerElement);
  const double rows = x.elements() / static_cast<double>(last_dim(x));
  s.params = last_dim(x);
  s.saved_inputs = {x};
  s.saved_fixed_bytes = kFp32Bytes * rows;
  s.autocast_extra_saved_bytes = (kFp32Bytes - 2) * x.elements();  // fp32 residual stream (layer_norm)
  add_fp32_stream_norm_traffic(s, x.elements());
  add_eager_rms_norm(s, x.elements());
  return g.add(std::move(s));
}

// The same kernels with a row per head: fp32 rstd (and, for LayerNorm, mean) per head and token. The
// input is a projection's 16-bit output, not the fp32 residual stream: no autocast extra.
Tensor head_norm(Graph& g, const std::string& name, const Tensor& x, std::int64_t head_dim, std::int64_t params,
                 bool layer_norm) {
  LayerSpec s = elementwise_spec(name, OpClass::normalization, {x}, x.shape,
                                 layer_norm ? kLayerNormFlopsPerElement : kRmsNormFlopsPerElement);
  s.params = params;
  s.saved_inputs = {x};
  s.saved_fixed_bytes = (layer_norm ? 2 : 1) * kFp32Bytes * x.elements() / static_cast<double>(head_dim);
  if (!layer_norm) add_eager_rms_norm(s, x.elements());
  return g.add(std::move(s));
}

// Embedding backward (embedding_dense_backward) needs only the int64 indices: 8 bytes per token when
// the indices are per sample. Forward is a gather: reads and writes seq x dim; backward scatter-adds.
Tensor embedding(Graph& g, const std::string& name, std::int64_t seq, std::int64_t rows, std::int64_t dim,
                 bool per_sample_indices) {
  LayerSpec s;
  s.name = name;
  s.op = OpClass::embedding;
  s.output_shape = {seq, dim};
  s.params = rows * dim;
  const double out = static_cast<double>(seq * dim);
  s.forward_flops = 0;
  s.backward_flops = out;
  s.forward_io_elements = 2 * out;
  if (per_sample_indices) s.saved_fixed_bytes = kIndexBytes * static_cast<double>(seq);
  return g.add(std::move(s));
}

// torch.cat with a class token / add of a position embedding: backward splits or passes the gradient
// through, nothing saved.
Tensor add_parameter(Graph& g, const std::string& name, const Tensor& x, std::vector<std::int64_t> out_shape,
                     std::int64_t params) {
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {x}, std::move(out_shape), kSimpleFlopsPerElement);
  s.params = params;
  return g.add(std::move(s));
}

// q * cos + rotate_half(q) * sin: cos and sin need no gradient, so autograd saves only them (one
// broadcast row, not per sample). The rotated q and k are new tensors, saved by attention.
// Under --kernels eager (HF's apply_rotary_pos_emb), per element of q and k: rotate_half's neg (half read, half
// written) and cat (read and write), q x cos and rotate_half(q) x sin (read and write each), their sum (two reads,
// a write): ten accesses at the activation's width against the fused kernel's two, in five kernels per tensor.
Tensor rotary(Graph& g, const std::string& name, const Tensor& q, const Tensor& k) {
  std::vector<std::int64_t> qk_shape = q.shape;
  qk_shape.back() = q.shape.back() + k.shape.back();
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {q, k}, qk_shape, kRotaryFlopsPerElement);
  s.eager_extra_elements = 8 * (q.elements() + k.elements());
  s.eager_extra_kernels = 2 * 5 - 1;
  return g.add(std::move(s));
}

double attention_pairs(const AttentionSpec& a) {
  const double s = static_cast<double>(a.seq);
  if (!a.flash || !a.causal) return s * s;  // unfused kernels compute every score, then mask
  // FlashAttention skips key blocks a causal (or sliding-window) mask removes entirely, but computes a block the mask
  // cuts whole and masks it after (Dao 2023, "FlashAttention-2", section 3.1.1: the mask is applied to the blocks on
  // the diagonal only). With query blocks of kFlashMaskBlock rows (FlashAttention 2's forward at head dimension 128,
  // and FlashAttention 3, tile 128 queries; the paper's block sizes are {64, 128} x {64, 128}) a query computes on
  // average (block - 1) / 2 masked keys past each edge of its window: 6% more pairs than s (s + 1) / 2 at 2,048 tokens,
  // 1.5% at 8,192, a whole s x s block below 128. It is part of why causal attention runs further below the
  // non-causal rate at short sequences (the paper's Figure 4: 99 against 131 TFLOPs/s at 512 tokens on the A100).
  constexpr double kFlashMaskBlock = 128;
  const double edge = (std::min(kFlashMaskBlock, s) - 1) / 2;
  if (a.sliding_window > 0 && a.sliding_window < a.seq) {
    const double w = static_cast<double>(a.sliding_window);
    return std::min(s * s, w * (w + 1) / 2 + (s - w) * w + s * edge + (s - w) * edge);
  }
  return s * (s + 1) / 2 + s * edge;
}

// The s^2 core. Forward FLOPs: QK^T and PV, 2 x pairs x head_dim each, per head.
//  flash (FlashAttention / SDPA flash and memory-efficient kernels): saves q, k, v, the output and
//    the fp32 logsumexp (heads x seq); dropout is regenerated from the RNG seed, no mask. Backward
//    recomputes QK^T: 5 matmuls against forward's 2, 2.5x.
//  unfused (eager softmax(QK^T)V): the QK^T matmul saves q and k, softmax saves its output
//    (heads x s x s), dropout its 1-byte mask, and the PV matmul the dropped probabilities (a third
//    s^2 tensor when dropout is on) and v. Backward is 4 matmuls, 2x. Under autocast HF's eager
//    softmax runs in fp32, so its saved output is 4 bytes per element even in 16-bit training.
Tensor attention(Graph& g, const std::string& name, const std::vector<Tensor>& qkv, const AttentionSpec& a) {
  const double pairs = attention_pairs(a);
  const double heads = static_cast<double>(a.heads);
  const double score_elements = heads * pairs;
  const double matmul_flops = 2 * 2.0 * score_elements * static_cast<double>(a.head_dim);
  const std::vector<std::int64_t> out_shape = {a.seq, a.heads * a.head_dim};
  const double out = Tensor{-1, out_shape}.elements();

  LayerSpec s;
  s.name = name;
  s.op = OpClass::attention;
  s.inputs = qkv;
  s.output_shape = out_shape;
  s.forward_flops = matmul_flops;
  s.score_elements = score_elements;
  double qkv_elements = 0;
  for (const Tensor& t : s.inputs) qkv_elements += t.elements();
  s.forward_io_elements = qkv_elements + out;
  s.saved_inputs = s.inputs;
  if (a.flash) {
    s.backward_flops = 2.5 * matmul_flops;
    s.saves_output = true;
    s.saved_fixed_bytes = kFp32Bytes * heads * static_cast<double>(a.seq);
  } else {
    s.backward_flops = 2.0 * matmul_flops;
    // The matmuls write the scores (QK^T) and read the probabilities (PV). Between them run separate
    // kernels, each reading and writing every score: the 1/sqrt(d) scale, the mask (when there is
    // one), softmax and dropout (plus its 1-byte mask). Under autocast softmax writes fp32 (+2 bytes)
    // and PV casts that back to 16 bit (a kernel reading 4 and writing 2 bytes: +6).
    s.forward_io_elements += 2 * score_elements;
    const bool masked = a.additive_mask || a.causal;
    s.serial_io_elements = (2.0 + 2.0 + (masked ? 2.0 : 0.0) + (a.dropout > 0 ? 2.0 : 0.0)) * score_elements;
    s.serial_fixed_bytes = a.dropout > 0 ? kMaskBytes * score_elements : 0;
    s.serial_autocast_extra_bytes = 8.0 * score_elements;
    s.serial_kernels = 2 + (masked ? 1 : 0) + (a.dropout > 0 ? 1 : 0) + 1;
    s.internal_saved_elements = score_elements;  // softmax output
    if (a.dropout > 0) {
      s.internal_saved_elements += score_elements;        // dropped probabilities, saved by PV
      s.saved_fixed_bytes = kMaskBytes * score_elements;  // dropout mask
    }
    // Autocast: softmax's saved output is fp32 (+2 bytes), and PV's matmul keeps a 16-bit cast of the
    // fp32 probabilities (+2 bytes; with dropout that cast replaces the dropped probabilities above).
    s.autocast_extra_saved_bytes = (a.dropout > 0 ? 2.0 : 4.0) * score_elements;
  }
  return g.add(std::move(s));
}

Tensor expert_dispatch(Graph& g, const std::string& name, const Tensor& x, std::int64_t active) {
  std::vector<std::int64_t> shape = x.shape;
  shape.front() *= active;
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {x}, shape, kSimpleFlopsPerElement);
  s.saved_fixed_bytes = kIndexBytes * static_cast<double>(shape.front());
  return g.add(std::move(s));
}

Tensor expert_combine(Graph& g, const std::string& name, const Tensor& y, const Tensor& weights, std::int64_t tokens) {
  std::vector<std::int64_t> shape = y.shape;
  shape.front() = tokens;
  LayerSpec s = elementwise_spec(name, OpClass::elementwise, {y, weights}, shape, 0);
  s.forward_flops = 2 * y.elements();  // scale, then add into the token's row
  s.backward_flops = s.forward_flops;
  s.saved_inputs = {y, weights};
  return g.add(std::move(s));
}

// Cross-entropy: log_softmax saves its output, in fp32 (autocast runs it in fp32; fp32 training too),
// 4 bytes x classes per row; nll_loss keeps only the targets. The logits themselves are not kept.
void cross_entropy(Graph& g, const std::string& name, const Tensor& logits) {
  LayerSpec s = elementwise_spec(name, OpClass::loss, {logits}, {1}, 0);
  s.forward_flops = kCrossEntropyFlopsPerElement * logits.elements();
  s.backward_flops = logits.elements();
  s.forward_io_elements = 2 * logits.elements();
  s.saved_fixed_bytes = kFp32Bytes * logits.elements();
  g.add(std::move(s));
}

}  // namespace gpusage::workload::detail
