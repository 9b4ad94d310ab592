// A validation row made ready for prediction (prepare: the workload, the training config and the card from
// its columns, as plan builds them from its options) and predicted (predict_row).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/common/error.hpp"
#include "core/estimate/gpu_rates.hpp"
#include "core/estimate/planner.hpp"
#include "core/estimate/validate_detail.hpp"

namespace gpusage::estimate {

namespace {

// PyTorch 2.0 (March 2023) brought scaled_dot_product_attention with fused (flash / memory-efficient)
// kernels; software before it runs attention unfused, keeping the s^2 probabilities.
constexpr const char* kFusedAttentionSince = "2023-03";
// PyTorch 2.0 (March 2023) also made optimizer.zero_grad() free the gradients (set_to_none=True by default) and
// torch.optim step CUDA parameters with its foreach implementations by default.
constexpr const char* kGradientsFreedSince = "2023-03";
// PyTorch 2.8 (August 2025) reduces a LayerNorm's weight and bias gradients with the rows split among blocks
// (PR 148605); before it, one block per 32 columns did all the rows (TrainingConfig::column_block_layer_norm_backward).
constexpr const char* kRowSplitLayerNormSince = "2025-08";

// NVIDIA's BERT (DeepLearningExamples, which Lambda's and NVIDIA's NGC runs use) normalizes with apex's
// FusedLayerNorm, whose weight gradients are reduced in two passes over all the SMs, not with PyTorch's kernel.
bool native_layer_norm(const Measurement& m) {
  return !(m.model.rfind("bert", 0) == 0 && m.framework.find("NGC") != std::string::npos);
}

// A row that does not say how its GPUs were spread over nodes ran on servers of up to 8 (DGX, HGX).
constexpr int kDefaultGpusPerNode = 8;

}  // namespace

namespace detail {

std::optional<Prepared> prepare(const Measurement& m, const catalog::Catalog& catalog, std::string& skipped) {
  try {
    workload::WorkloadOptions options;
    options.resolution = m.resolution;
    options.seq_len = m.seq_len;
    options.flash_attention =
        m.flash_attention.value_or(!m.software_date.empty() && m.software_date >= kFusedAttentionSince);
    if (m.task == "squad") options.head = workload::Head::question_answering;
    workload::WorkloadOptions timed_options = options;
    if (m.tokens) timed_options.seq_len = m.tokens;
    // A stated power limit is plan's --gpu-power (ID@Nw): the same checks, and a card id of its own.
    const std::string card = catalog.with_modifications(m.gpu, m.gpu_power_w, std::nullopt);
    Prepared p{
        workload::build(m.model, options), {}, {}, complete_tensor_rates(catalog.resolve(card), catalog).gpu, {}};
    p.timed_workload = m.tokens ? workload::build(m.model, timed_options) : p.workload;
    auto precision = catalog::parse_precision(m.precision);
    if (!precision) throw InputError(fmt::format("unknown precision '{}'", m.precision));
    p.config.precision = *precision;
    p.config.batch_per_gpu = m.batch_per_gpu;
    p.config.accumulation_steps = m.accumulation;
    p.config.optimizer =
        m.optimizer.value_or(p.workload.domain == workload::Domain::vision ? Optimizer::momentum : Optimizer::adamw);
    p.config.master_weights = m.master_weights;
    p.config.loss = m.loss;
    p.config.lora_rank = m.lora_rank;
    p.config.qlora = m.qlora;
    p.config.kbit_upcast = m.kbit_upcast;
    p.config.lora_targets = m.lora_targets;
    p.config.lora_dropout = m.lora_dropout;
    p.config.optimizer_in_backward = m.optimizer_in_backward;
    p.config.clip_grad_norm = m.clip_grad_norm;
    p.config.gpus_per_node = m.gpus_per_node.value_or(std::min(m.num_gpus, kDefaultGpusPerNode));
    p.config.nodes = std::max(1, m.num_gpus / p.config.gpus_per_node);
    p.config.parallel = m.parallel;
    p.config.offload = m.offload;
    p.config.interconnect = m.interconnect;
    p.config.channels_last = m.channels_last.value_or(false);
    p.config.pure_16bit = m.pure_16bit;
    p.config.checkpointing = !m.checkpointing.empty() && m.checkpointing != "none";
    p.config.selective_checkpointing = m.checkpointing == "selective";
    if (m.checkpointing.starts_with("every:")) p.config.checkpoint_every = std::stoi(m.checkpointing.substr(6));
    if (m.gpu_memory_gb) p.gpu.memory_gb = *m.gpu_memory_gb;
    p.config.eager_module_loading = m.loads_modules_eagerly();
    p.config.column_block_layer_norm_backward = !m.other_framework() && !m.software_date.empty() &&
                                                m.software_date < kRowSplitLayerNormSince && native_layer_norm(m);
    const bool pytorch2 = !m.other_framework() && !m.software_date.empty() && m.software_date >= kGradientsFreedSince;
    p.config.gradients_freed_between_steps = pytorch2;
    p.config.optimizer_impl = m.optimizer_impl.value_or(m.other_framework() ? OptimizerImpl::fused
                                                        : pytorch2          ? OptimizerImpl::foreach
                                                                            : OptimizerImpl::loop);
    p.config.eager_kernels = !m.fused_kernels;
    p.config.fp8_recipe = m.fp8_recipe;
    p.config.low_precision_norm = m.low_precision_norm;
    // The kernel a row names (attention_kernel); empty: FlashAttention 2, the constants' own. PyTorch's SDPA ran
    // FlashAttention 1's generation before 2.2 (2024-01), but taking that from the date alone moved the fitted
    // constants and the held-out figures the wrong way (docs/MODEL.md, issue 56): rows name it where they know it.
    p.config.attention_kernel = m.attention_kernel.value_or(AttentionKernelGeneration::flash2);
    p.inputs = {m.model, options, timed_options, p.config, p.gpu.id, p.gpu.memory_gb};
    return p;
  } catch (const InputError& e) {
    skipped = e.what();
    return std::nullopt;
  }
}

// Samples per second per GPU over whole optimizer steps (every accumulated micro-batch counts).
double predict_throughput(const Prepared& p, const Calibration& calibration) {
  return p.config.batch_per_gpu * p.config.accumulation_steps /
         estimate_step_time(p.timed_workload, p.config, p.gpu, &calibration).step_s;
}

// A max_batch row's verdict: plan's largest batch ran (value) and is below the one that failed (fails_at).
bool in_bracket(const Measurement& m, int predicted) {
  return predicted >= m.value && (!m.fails_at || predicted < *m.fails_at);
}

// Fills a row's prediction and error from one set of constants.
void predict_row(ValidationRow& row, const Prepared& p, const Calibration& calibration) {
  const Measurement& m = row.measurement;
  if (m.metric == Metric::max_batch) {
    const int predicted = max_batch(p.workload, p.config, p.gpu, &calibration);
    row.predicted = predicted;
    row.bracket_hit = in_bracket(m, predicted);
  } else {
    // A throughput or peak-memory row is a run that ran: its memory says whether plan has it fit.
    const MemoryBreakdown memory = estimate_memory(p.workload, p.config, p.gpu, &calibration);
    switch (m.metric) {
      case Metric::peak_memory: row.predicted = memory.total_bytes(); break;
      case Metric::peak_allocated: row.predicted = memory.allocated_bytes(); break;
      case Metric::peak_reserved: row.predicted = memory.reserved_bytes(); break;
      default: row.predicted = predict_throughput(p, calibration); break;
    }
    row.predicted_oom = !memory.fits(p.gpu.memory_bytes());
  }
  row.error = (*row.predicted - m.value) / m.value;
}

const char* gpu_class(const catalog::Gpu& gpu) {
  switch (gpu.family) {
    case catalog::Family::rtx50:
    case catalog::Family::rtx40:
    case catalog::Family::rtx30:
    case catalog::Family::rtx20:
    case catalog::Family::gtx:
    case catalog::Family::laptop: return "geforce";
    case catalog::Family::workstation: return "workstation";
    case catalog::Family::datacenter: return "datacenter";
  }
  return "?";
}

}  // namespace detail

}  // namespace gpusage::estimate
