// Validation: predictions against measured training runs (data/validation/published.csv, or a user's
// own file), fitting the speed constants, and cross-validation that holds out one group (a GPU, a
// source, a model) at a time so that every reported error comes from rows outside the fit.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/planner.hpp"

namespace gpusage::estimate {

// train_throughput: samples/s per GPU. peak_memory: bytes in use on one GPU as nvidia-smi counts them
// (CUDA context + the caching allocator's reserve). max_batch: a bracket, the largest batch that ran
// (value) and the smallest that failed with out-of-memory (fails_at, when one was tried).
// peak_allocated / peak_reserved: torch.cuda.max_memory_allocated() / max_memory_reserved(), what training
// scripts print (LitGPT's "Memory used", torchtune's peak_memory_alloc / peak_memory_reserved); judged
// against MemoryBreakdown::allocated_bytes() / reserved_bytes() and summarised with peak_memory.
enum class Metric { train_throughput, peak_memory, max_batch, peak_allocated, peak_reserved };
const char* to_string(Metric metric);

// `plan` models today's software (PyTorch >= 2.x, cuDNN 8.9+). Rows measured with software released
// before this month are "legacy": reported as their own group, never fitted, never in the headline.
inline constexpr const char* kLegacySoftwareBefore = "2021-01";

struct Measurement {
  int line = 0;  // in the CSV file, for messages
  std::string model;
  std::string gpu;
  std::string precision;
  int batch_per_gpu = 0;
  int num_gpus = 1;
  // Column `gpus_per_node`: the GPUs in one node of the run's system (MLPerf's accelerators_per_node, a source's
  // "1 node with 16 GPUs"); empty: up to 8 a node, as NVIDIA's DGX and HGX servers have.
  std::optional<int> gpus_per_node;
  std::optional<int> resolution;
  std::optional<int> seq_len;
  // Column `tokens`: the tokens per sample the model really computes when the data are unpadded or
  // binned by length (MLPerf's BERT, DeepLearningExamples' LDDL loader), below seq_len; empty: seq_len.
  // Step time is predicted at this length, memory at seq_len (the longest sample still has to fit).
  std::optional<int> tokens;
  // Column `accumulation`: micro-batches per optimizer step (gradient accumulation); DDP all-reduces and
  // the optimizer steps once per `accumulation` micro-batches. Empty: 1.
  int accumulation = 1;
  Metric metric = Metric::train_throughput;
  double value = 0;             // samples/s per GPU, bytes, or the largest batch that ran
  std::optional<int> fails_at;  // max_batch: the smallest batch that failed
  // Column `attention`: flash or eager; empty: the software era's default (fused attention from
  // PyTorch 2.0, March 2023, on; unfused before).
  std::optional<bool> flash_attention;
  Parallel parallel = Parallel::ddp;  // column `parallel`: ddp (default), zero1, zero2, fsdp or hsdp
  Offload offload;                    // column `offload`: optimizer, params, activations, '+'-joined
  // Column `interconnect`: pcie (no NVLink bridge) or nvlink; empty: the catalog card's.
  Interconnect interconnect = Interconnect::card;
  std::optional<bool> channels_last;  // column `layout`: nhwc or nchw; empty: nchw (PyTorch's default)
  // Column `kernels`: fused (torch.compile, Liger, Transformer Engine, a C++ trainer) or eager (Hugging Face's
  // Python elementwise code, plan's default); empty: eager.
  bool fused_kernels = false;
  bool pure_16bit = false;  // column `amp`: o2 (pure 16-bit model) or autocast (default)
  // Column `checkpointing`: none (default), full (every block recomputed, plan's --checkpointing), selective
  // (torchtitan's and Megatron's: predicted as plan's --checkpointing selective) or every:N (every Nth block).
  std::string checkpointing;
  // The fine-tuning recipe, as plan's options: columns optimizer (plan's names; empty: momentum for vision,
  // adamw for language), master_weights (fp32|bf16), loss (plain|chunked|fused), lora_rank, qlora (yes|no;
  // yes implies rank 16 when lora_rank is empty), lora_targets (attn|mlp|all), lora_dropout (0 to 0.99).
  std::optional<Optimizer> optimizer;
  MasterWeights master_weights = MasterWeights::fp32;
  LossImpl loss = LossImpl::plain;
  std::optional<int> lora_rank;
  bool qlora = false;
  double lora_dropout = 0;  // column lora_dropout: PEFT's probability; empty: 0
  LoraTargets lora_targets = LoraTargets::all;
  // Column `optimizer_impl`: fused, foreach or loop (OptimizerImpl); empty: the software's default (the
  // framework's own fused step outside PyTorch, torch.optim's foreach from PyTorch 2.0, its loop before).
  std::optional<OptimizerImpl> optimizer_impl;
  // Column `fp8_recipe`: delayed or tensorwise (Fp8Recipe), for precision fp8 rows; empty: delayed.
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // Column `attention_kernel`: flash2, flash1 or cudnn (AttentionKernelGeneration); empty: flash2.
  std::optional<AttentionKernelGeneration> attention_kernel;
  // Column `low_precision_norm`: yes when the run's norms worked in 16 bits under autocast (TrainingConfig).
  bool low_precision_norm = false;
  // Column `kbit_upcast`: no when a QLoRA run's base was not prepared by PEFT's prepare_model_for_kbit_training
  // (TrainingConfig::kbit_upcast); empty or yes: prepared.
  bool kbit_upcast = true;
  bool optimizer_in_backward = false;  // column optimizer_in_backward: yes|no
  bool clip_grad_norm = false;         // column clip_grad_norm: yes|no (the run clipped its gradients' norm)
  // Column `task` finetune: a language model fine-tuned (full, LoRA or QLoRA): reported in its own cells.
  bool fine_tuning() const { return task == "finetune"; }
  // full, lora or qlora.
  const char* method() const { return qlora ? "qlora" : lora_rank ? "lora" : "full"; }
  // Column `gpu_memory_gb`: the memory of the card the run used when it is a variant the catalog maps to a
  // sibling (torchtitan's 96 GB H100 runs on h100-sxm5-80gb's rates): the fit is judged against it.
  std::optional<double> gpu_memory_gb;
  // Column `gpu_power_w`: the power limit the run's cards were held to, where its source states one below the
  // catalog card's board power (torchtitan's Grand Teton H100s at 500 W): the card as plan's --gpu-power prices it
  // (the step-time model's power limit).
  std::optional<double> gpu_power_w;
  std::string task;  // column `task`: squad (question-answering head), pretrain or finetune
  std::string data;  // column `data`: synthetic or real (informational)
  std::string framework;
  std::string software_date;  // YYYY-MM of the framework / container release; empty when unknown
  std::string source;

  bool legacy() const { return !software_date.empty() && software_date < kLegacySoftwareBefore; }
  // Set by parse_measurements: a data-parallel row whose per-GPU throughput beats the single-GPU row of the
  // same source, framework release and configuration by more than kSuperlinearTolerance. Each data-parallel
  // rank does the single-GPU step plus communication, so such a row measures something else (its harness's
  // accounting): it is reported as its own group, never fitted, never in the headline.
  bool superlinear = false;
  // A throughput row that counts: fitted, in the headline and in plan's intervals (neither legacy nor
  // superlinear, which are reported as their own groups, nor fine-tuning).
  // The fine-tuning rows (fine_tuning()) are neither fitted nor in the headline: they are reported in their
  // own cells, so every figure validate gives for them is out of sample, --cv or not (docs/MODEL.md).
  bool current_throughput() const {
    return metric == Metric::train_throughput && !legacy() && !superlinear && !fine_tuning();
  }
  // Measured under TensorFlow, MXNet, PaddlePaddle, JAX or a C++/CUDA trainer (llm.q, llm.c) rather than PyTorch. The
  // memory model is PyTorch's (autograd's saved tensors, the caching allocator, autocast's copies), so such rows'
  // memory figures are a group of their own; their throughput runs the same cuDNN and cuBLAS kernels and counts.
  bool other_framework() const;
  // Software that loads every kernel into the CUDA context at start (before lazy loading, PyTorch 1.13
  // with CUDA 11.7): from software_date, else from the versions `framework` names; unknown: today's.
  bool loads_modules_eagerly() const;
};

// How far a data-parallel row's per-GPU throughput may exceed its single-GPU counterpart before it is marked
// superlinear: run-to-run scatter of repeated published runs is about 5%.
constexpr double kSuperlinearTolerance = 0.10;

// Parses CSV with a header that has at least model,gpu,precision,batch_per_gpu,metric,value (optional:
// num_gpus, gpus_per_node, resolution, seq_len, tokens, accumulation, fails_at, attention, parallel, interconnect,
// layout, kernels, task, amp, checkpointing, gpu_memory_gb, gpu_power_w, data, framework, software_date, source;
// anything else ignored). Throws InputError naming the line and the column.
std::vector<Measurement> parse_measurements(const std::string& csv_text, const std::string& origin);

// How cross-validation groups rows: every group is predicted by constants fitted on all other groups.
enum class CvGroup { gpu, source, model };
std::optional<CvGroup> parse_cv_group(const std::string& name);
const char* to_string(CvGroup group);
// The group a row belongs to: its GPU id, its model id, or its source (the publishing repository or
// site: github.com/OWNER/REPO, else the host), so that one benchmark suite is held out whole.
std::string cv_group_of(const Measurement& m, CvGroup group);

// Which cards a row ran on: GeForce RTX 30/40/50 boards, or the rest (data-center and workstation cards).
// validate reports every throughput headline for both, since the two differ in clocks, L2 and memory.
inline constexpr const char* kGeForceCards = "GeForce";
inline constexpr const char* kDataCenterCards = "data center";

// The cell a row's error is reported in: model family, precision, GPU architecture and cards
// ("resnet · fp16 · Ada Lovelace · GeForce"). plan's intervals pool the cards of an architecture.
struct Cell {
  std::string family;  // the model id's leading word: resnet, vit, bert, gpt2, llama …
  std::string precision;
  std::string architecture;
  std::string cards;  // kGeForceCards or kDataCenterCards
  auto operator<=>(const Cell&) const = default;
};
std::string model_family(const std::string& model_id);

struct ValidationRow {
  Measurement measurement;
  std::optional<double> predicted;  // empty when the row could not be predicted
  std::optional<double> error;      // (predicted - measured) / measured
  std::string skipped;              // why it was not predicted
  std::string architecture;         // of the row's GPU, when it resolved
  std::string gpu_class;            // geforce, workstation or datacenter (fine-tuning cells)
  std::string group;                // the cross-validation group it was predicted from outside of
  bool predicted_oom = false;       // the memory model says this run does not fit (the run did)
  std::optional<bool> bracket_hit;  // max_batch: the predicted largest batch lies in [value, fails_at)
  bool geforce = false;             // the row's GPU is a GeForce card (catalog::is_geforce)
};

struct ErrorSummary {
  int count = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double median_error = 0;  // signed: > 0 means predictions are high
  // Quantiles of predicted / measured, for intervals: the measured value lies in
  // [predicted / ratio_p90, predicted / ratio_p10] for 80% of the rows.
  double ratio_p10 = 1;
  double ratio_p90 = 1;
};
ErrorSummary summarize(const std::vector<double>& signed_errors);

struct CellSummary {
  Cell cell;
  ErrorSummary throughput;  // single-GPU throughput rows of that cell
};

// Language-model throughput rows (current software, every GPU count, fine-tuning too) of one sequence-length band
// (validate_sequence.cpp): "<=1024", "1025-4096", "4097-16384", ">16384" tokens per sample.
struct SequenceBandSummary {
  std::string band;
  ErrorSummary throughput;
};
// The band `tokens` per sample falls in, by the names above.
std::string sequence_band_name(int tokens);

// A headline for all cards, and for the data-center (and workstation) and GeForce cards apart.
struct CardsSummary {
  ErrorSummary all;
  ErrorSummary data_center;
  ErrorSummary geforce;
};

// Single-GPU throughput of one GPU architecture, for all its cards and each kind apart.
struct ArchitectureSummary {
  std::string architecture;
  CardsSummary throughput;
};

// The fine-tuning rows (Measurement::fine_tuning) of one method (full, lora, qlora) on one class of GPU
// (geforce, workstation, datacenter).
struct FineTuneCell {
  std::string method;
  std::string gpu_class;
  ErrorSummary throughput;  // per GPU, single- and multi-GPU rows
  ErrorSummary memory;      // peak_memory, peak_allocated and peak_reserved rows
  int inside_interval = 0;  // throughput rows inside the 80% range plan prints (judged as the report's own count)
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::optional<CvGroup> cv;            // empty: every row predicted with the constants given (no holding out)
  int groups = 0;                       // groups held out in turn
  ErrorSummary single_gpu_throughput;   // the headline: current-software single-GPU rows
  ErrorSummary multi_gpu_throughput;    // per-GPU throughput of data-parallel runs
  ErrorSummary legacy_throughput;       // rows measured with pre-kLegacySoftwareBefore software
  ErrorSummary superlinear_throughput;  // data-parallel rows faster per GPU than one GPU (Measurement::superlinear)
  ErrorSummary peak_memory;             // current software, as nvidia-smi counts it (metric peak_memory)
  // Current-software peak_allocated and peak_reserved rows: the allocator's own figures, a metric apart.
  ErrorSummary allocator_peak_memory;
  ErrorSummary legacy_peak_memory;  // pre-kLegacySoftwareBefore software (older CUDA contexts and allocators)
  int max_batch_rows = 0;
  int max_batch_hits = 0;
  int ran_rows = 0;           // throughput and memory rows: runs that ran
  int ran_predicted_oom = 0;  // … of which the memory model says they do not fit
  // The same memory figures for rows measured under another framework (Measurement::other_framework):
  // TensorFlow maps nearly all GPU memory at start by default, and plans its graph's memory itself.
  ErrorSummary other_framework_peak_memory;
  int other_framework_max_batch_rows = 0;
  int other_framework_max_batch_hits = 0;
  int other_framework_ran_rows = 0;
  int other_framework_ran_predicted_oom = 0;
  // The headlines by cards: single_gpu_throughput and multi_gpu_throughput are their `all`.
  CardsSummary single_gpu_by_cards;
  CardsSummary multi_gpu_by_cards;
  std::vector<ArchitectureSummary> architectures;  // single-GPU throughput per architecture
  // The legacy rows' single-GPU throughput per architecture (never in the headline): where Pascal and most
  // Turing GeForce rows are, their published runs being from before 2021.
  std::vector<ArchitectureSummary> legacy_architectures;
  std::vector<CellSummary> cells;  // single-GPU throughput per cell, cells with rows only
  // The LLM fine-tuning rows (Measurement::fine_tuning) apart: throughput (every GPU count) and memory,
  // the runs among them that ran and how many plan has not fit, and per method x GPU class.
  ErrorSummary fine_tuning_throughput;
  ErrorSummary fine_tuning_memory;
  // Of the fine-tuning throughput rows, how many measured values lie inside the 80% range plan prints for
  // them (data/validation/intervals.json as built in, fitted without any fine-tuning row).
  int fine_tuning_inside_interval = 0;
  int fine_tuning_ran_rows = 0;
  int fine_tuning_ran_predicted_oom = 0;
  std::vector<FineTuneCell> fine_tuning_cells;
  std::vector<SequenceBandSummary> llm_sequence_bands;  // bands with rows only, shortest first
  // Multi-GPU throughput of the causal language models (pre-training and fine-tuning, current software) by
  // how the run shards its model: ddp, zero1, zero2, fsdp, hsdp (Parallel's names), parallelisms with rows only.
  std::vector<std::pair<std::string, ErrorSummary>> multi_gpu_llm_by_parallel;
  // With cv: the constants each fold fitted, by held-out group (how stable the fit is across folds).
  std::map<std::string, ModelConstants> fold_constants;
};

// Every row predicted with the constants in `calibration` (in-sample when they were fitted on the rows).
ValidationReport validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                          const Calibration& calibration);

// Leave one group out: for each group, the constants are refitted (fit_constants) on the rows of every
// other group, and the group's rows are predicted with them.
// `progress(done, total)` is called after each group (from worker threads; may be empty).
ValidationReport cross_validate(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                                const ModelConstants& prior, CvGroup group,
                                const std::function<void(int, int)>& progress = {});

// The physical bounds every fitted constant is held to (tests check them; --fit prints what moved).
// allocator_unreleasable_fraction stays inside [0, allocator_overhead_fraction]: a part of the reserve.
struct FitBounds {
  double efficiency_lo = 0.05, efficiency_hi = 1.0;  // fractions of a peak: (0, 1]
  // A training step's GEMMs reach no more of the tensor peak than the largest GEMMs measured on a card that holds
  // its clock: 264.5 of the A100 SXM4 80 GB's 312 TFLOPS (0.85; H100 SXM 0.80, B200 0.75; docs/MODEL.md, session 17).
  double matmul_tensor_efficiency_hi = 0.85;
  double kernel_fixed_lo_s = 0.5e-6, kernel_fixed_hi_s = 40e-6;
  double host_dispatch_lo_s = 1e-6, host_dispatch_hi_s = 60e-6;
};
const FitBounds& fit_bounds();

// Fits the speed constants (efficiencies and overheads, one set for every card: no per-architecture or per-card
// factor) to the current-software train_throughput rows on one node (detail::fits_speed) by minimising the median
// absolute log error plus a quarter of its 90th percentile with coordinate search, inside fit_bounds(). The search
// starts from `prior` (prior_constants()) and is drawn back to it by a log-normal penalty, so a flat objective settles
// on the documented value rather than on wherever the search started. It also fits allocator_unreleasable_fraction on
// the memory verdicts of the current-software PyTorch rows (runs that ran must fit; max-batch brackets must contain
// plan's largest batch): of 32 candidates, 1/32 to all of allocator_overhead_fraction, the one with the fewest misses,
// each kind counted against the share plan tolerates (2% of runs, 15% of brackets), drawn to the prior by a log-normal
// penalty (sigma = ln 2), the largest of equals.
ModelConstants fit_constants(const std::vector<Measurement>& measurements, const catalog::Catalog& catalog,
                             const ModelConstants& prior);

// The constants the fit may move, by name: the speed constants and allocator_unreleasable_fraction.
const std::vector<std::pair<const char*, double ModelConstants::*>>& fitted_scalar_constants();

// One line per constant that the fit moved by more than 0.5%: "memory_efficiency 0.750 -> 0.712 (-5.1%)".
std::vector<std::string> describe_changes(const ModelConstants& before, const ModelConstants& after);

}  // namespace gpusage::estimate
