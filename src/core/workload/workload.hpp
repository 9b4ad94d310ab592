// A training workload as the estimators see it: a list of layers, each with what it costs per sample.
//
// Every per-sample quantity is counted in elements (not bytes) so that one graph serves every precision:
// the estimators multiply by the element size of the precision in use. Quantities that do not scale
// with the compute precision (boolean masks, integer indices) are counted in bytes.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/common/units.hpp"

namespace gpusage::workload {

// What kind of kernel a layer runs: each class has its own efficiency in the step-time model.
enum class OpClass {
  conv,           // convolution (cuDNN); tensor cores when the precision allows
  matmul,         // dense / linear / projection (cuBLAS GEMM); tensor cores when the precision allows
  attention,      // softmax(QK^T)V core: the s^2 part of attention (FlashAttention or unfused)
  normalization,  // batch norm, layer norm, RMS norm: memory-bound
  elementwise,    // activations, residual adds, dropout, scaling: memory-bound
  pooling,        // max / average pooling: memory-bound
  embedding,      // token / position embedding lookups: memory-bound gather
  loss,           // softmax cross-entropy over the output
};
const char* to_string(OpClass op);

enum class Domain { vision, language };

// A linear map inside a layer, recorded so LoRA can attach adapters of rank r: r*(in+out) params.
struct Matrix {
  std::int64_t in = 0;
  std::int64_t out = 0;
  bool attention = false;  // an attention projection (q/k/v/o); else an MLP matrix (--lora-targets)
  // Identical matrices side by side: a mixture-of-experts layer's experts, one adapter each. The layer's
  // rows are split among them (each token goes through the experts it is routed to).
  std::int64_t copies = 1;
};

struct Layer {
  std::string name;  // torchvision / Hugging Face module path, e.g. "layer1.0.conv1"
  OpClass op = OpClass::elementwise;
  std::vector<std::int64_t> output_shape;  // per sample, e.g. {64, 56, 56} or {seq, hidden}
  // Elements of one sample's output: the product of output_shape, 0 when the shape is unknown.
  double output_elements() const {
    if (output_shape.empty()) return 0;
    double elements = 1;
    for (auto d : output_shape) elements *= static_cast<double>(d);
    return elements;
  }

  std::int64_t params = 0;  // trainable parameters owned by this layer
  // Parameters owned by this layer that do not train (requires_grad=False in a traced model: a frozen
  // backbone): they take weight memory but no gradient or optimizer state. The zoo's models have none.
  std::int64_t frozen_params = 0;

  double forward_flops = 0;  // per sample; a multiply-add counts as 2 FLOPs
  // Backward FLOPs per sample. Matmul/conv: 2x forward (input grad + weight grad); 1x for a layer whose
  // input needs no gradient (the first conv). Memory-bound ops: about 1x.
  double backward_flops = 0;

  // Elements read and written by the forward kernel per sample (inputs + outputs; weights are
  // counted once per step, from params, not per sample).
  double forward_io_elements = 0;
  // Elements of activation tensors this layer keeps alive for backward, per sample, in the compute
  // precision. A tensor saved by two layers (e.g. a conv output that is also the BN input) is counted by
  // exactly one of them.
  // Convention: each saved tensor is counted ONCE, on the layer that PRODUCES it, whoever saves it
  // (a ReLU output kept by the ReLU and by the next conv is counted on the ReLU; a conv output kept by
  // the following BN is counted on the conv; the hidden state kept by q, k and v is counted on the
  // layer before them). The model input, which no layer produces, is counted on the first layer that
  // saves it (the first conv). Tensors a layer makes and keeps inside itself (unfused attention's
  // s^2 probabilities) are counted on it. The per-op rules are in layers.cpp.
  double saved_elements = 0;
  // Bytes kept for backward that do not scale with the precision (ReLU masks, dropout masks, max-pool
  // indices), per sample.
  double saved_fixed_bytes = 0;
  // Bytes kept for backward only under 16-bit autocast, beyond saved_elements at 2 bytes, per sample:
  // autocast runs softmax and layer/RMS norm in fp32 (torch.amp's fp32 op list), so their saved
  // tensors are 4 bytes wide, and a matmul that consumes an fp32 tensor keeps its own 16-bit cast.
  double autocast_extra_saved_bytes = 0;
  // Traffic only 16-bit autocast adds, per sample in one forward pass, beyond forward_io_elements at the
  // activation's width: the fp32 residual stream of a transformer (layer_norm, on autocast's fp32 list, reads and
  // writes 4-byte elements and the linear after it casts its input to 16 bits in a kernel of its own; each
  // residual add reads and writes the fp32 stream) and the kernels it adds. Backward: twice the bytes.
  double autocast_extra_io_bytes = 0;
  int autocast_extra_kernels = 0;
  // PyTorch's native LayerNorm: its normalized width (the columns its weight and bias gradients reduce over
  // the rows). Before PyTorch 2.8 that reduction ran one block per 32 columns (step_time.cpp); 0: any other op.
  double layer_norm_columns = 0;

  // Separate memory-bound kernels the layer runs one after the other, apart from its GEMMs (unfused
  // attention's scale, mask, softmax and dropout between QK^T and PV): elements they read and write per
  // sample in one forward pass, the extra bytes under 16-bit autocast (fp32 softmax output and the
  // 16-bit cast PV needs), and how many kernels. step_time adds their time to the GEMMs' instead of
  // hiding it under them (their s^2 traffic cannot overlap a GEMM that waits for it). Backward: twice.
  double serial_io_elements = 0;
  double serial_fixed_bytes = 0;  // e.g. the dropout mask, 1 byte per score whatever the precision
  double serial_autocast_extra_bytes = 0;
  int serial_kernels = 0;
  // What Hugging Face's eager Python code for this op moves beyond the one fused kernel counted above, per
  // sample in one forward pass: elements at the activation's width, fp32 elements (4 bytes), and its extra
  // kernels. RMSNorm: x.to(float32), pow, mean, rsqrt, mul, to(dtype), the weight's mul; rotary: rotate_half's
  // neg and cat, the two products and their sum, for q and for k. step_time adds them under --kernels eager
  // (twice the traffic in backward); a compiled or fused model (torch.compile, Liger, TE, llm.q) has none.
  double eager_extra_elements = 0;
  double eager_extra_fp32_elements = 0;
  int eager_extra_kernels = 0;
  // Attention cores: the scores they compute, heads x the query-key pairs visited, per sample and pass. Fused
  // (flash) attention computes each one's softmax on the CUDA cores between its matmuls; unfused attention's
  // two batched matmuls reduce over head_dim and over the keys (step_time.cpp). 0: not known (a traced model).
  double score_elements = 0;

  // Checkpointing segment this layer belongs to (a ResNet stage block, a transformer block); -1 when it
  // sits outside every segment (stem, head). With --checkpointing, a segment keeps only its input.
  int segment = -1;
  // Elements of this layer's input, per sample: what a segment keeps when its first layer is checkpointed.
  double input_elements = 0;

  // Linear maps inside this layer that LoRA may adapt (attention q/k/v/o, MLP up/gate/down).
  std::vector<Matrix> lora_targets;
};

struct Workload {
  std::string id;            // zoo id: "resnet50", or "hf:<model_type>" for imported configs
  std::string display_name;  // "ResNet-50"
  Domain domain = Domain::vision;
  int resolution = 0;  // vision: input side in pixels
  int seq_len = 0;     // language: tokens per sample
  // A causal language model (every transformer family but BERT): the LLMs people fine-tune, whose
  // full-parameter plans take the full fine-tuning runs' interval (estimate/uncertainty.hpp).
  bool causal_lm = false;
  std::string architecture_source;  // where the architecture comes from (paper, torchvision, HF config)
  std::vector<Layer> layers;
  // What the user should know about how this workload was built (a traced model's op classes that gpusage
  // does not know, and their share of the FLOPs): plan prints them with its notes.
  std::vector<std::string> notes;

  std::int64_t params() const;
  std::int64_t frozen_params() const;
  double forward_flops() const;      // per sample
  double backward_flops() const;     // per sample
  double saved_elements() const;     // per sample, sum over layers
  double saved_fixed_bytes() const;  // per sample, sum over layers
  int segment_count() const;         // number of checkpointing segments (blocks)
  int tokens_per_sample() const { return domain == Domain::language ? seq_len : 0; }
  // What one sample is when a throughput is printed: "img/s" or "seq/s".
  const char* throughput_unit() const {
    return units::per_second(domain == Domain::vision ? units::SampleKind::image : units::SampleKind::sequence);
  }
};

// The task head on a language encoder: BERT's pre-training heads (masked LM over the vocabulary + next
// sentence) or a question-answering span head (BertForQuestionAnswering: start/end logits, SQuAD).
enum class Head { pretraining, question_answering };

// What the user may change about a zoo model.
struct WorkloadOptions {
  std::optional<int> resolution;   // vision models; default 224
  std::optional<int> seq_len;      // language models; default the model's usual training length
  std::optional<int> num_classes;  // vision heads; default 1000 (ImageNet-1k)
  bool flash_attention = true;     // attention keeps no s^2 probabilities when true
  Head head = Head::pretraining;   // encoders (BERT) only
  // Member by member: validate predicts each distinct configuration once (estimate/validate_detail.hpp).
  auto operator<=>(const WorkloadOptions&) const = default;
};

struct ZooEntry {
  std::string id;
  std::string display_name;
  Domain domain;
  std::string description;
  // Reference figures for the default shape, each from the named source (tests compare against them).
  std::int64_t reference_params;
  std::optional<double> reference_gflops;  // forward GFLOPs per sample as the source counts them
  std::string reference_source;
};

// The zoo, in display order.
const std::vector<ZooEntry>& zoo();

// Builds a zoo model. Throws InputError for an unknown id (listing close ids) or a bad option.
Workload build(const std::string& id, const WorkloadOptions& options = {});

// Builds a transformer from the text of a Hugging Face config.json (the model_types docs/MODEL.md lists:
// llama, mistral, qwen2/3, gemma 1/2/3, phi3, phi, stablelm, falcon, mixtral, qwen2_moe, qwen3_moe, gpt2,
// bert). Throws InputError naming the field when the config is unusable or the architecture unknown.
Workload from_hf_config(const std::string& config_json_text, const WorkloadOptions& options = {});

}  // namespace gpusage::workload
