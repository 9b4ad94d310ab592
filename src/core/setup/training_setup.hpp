// One training setup as a value: the model, its shape, precision, batch, the fine-tuning recipe, parallelism,
// the card or cards and the calibration, as a user asks `plan`, `guide`, `report`, `run` and `fit-batch` about
// it. Built from the command line by one binder (cli/setup_binder), printed back as gpusage flags by
// `to_flags()`: parsing what it prints gives the same setup (tests/unit/cli/setup_flags_test.cpp).
// Pure: no CLI11, no printing. The workload, training config and calibration it describes are built here,
// with the cross-checks between its fields.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.hpp"
#include "core/estimate/calibration.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::setup {

// The config.json that --hf-config names: the file itself, DIR/config.json for a model directory, or, for
// a Hugging Face cache entry (models--ORG--NAME), the config.json of the snapshot refs/main names (else of
// its only snapshot). Throws InputError naming the path and what is accepted.
std::string hf_config_file(const std::string& given);

// The sequence length a language model is planned at when no --seq-len is given (or its context, when
// shorter): LLaMA-Factory's default cutoff_len (src/llamafactory/hparams/data_args.py) and the max_seq_length
// of Unsloth's notebooks. Most fine-tuning runs set a length near it; the model's full context (131,072 for
// Llama 3.1) is what few single-card runs train at.
inline constexpr int kDefaultLanguageSeqLen = 2048;

struct TrainingSetup {
  // The model: one of a zoo id, a Hugging Face config.json (--hf-config) or a traced workload (--workload).
  std::string model;
  std::string hf_config;
  std::string workload_file;
  // Its shape.
  std::optional<int> resolution;
  std::optional<int> seq_len;
  std::optional<int> tokens_per_sample;  // tokens each sample computes, below seq_len (step time only)
  // "auto": bf16 on each card that has it (compute capability 8.0), else fp16, resolved per card by run_plan.
  std::string precision = "auto";
  // The batch: --batch as given (one size, a list, or auto; empty: the command's default), the global batch
  // to reach, the accumulation steps held.
  std::string batch;
  std::optional<int> target_batch;
  std::optional<int> accumulate;
  // The fine-tuning recipe.
  std::string optimizer;  // empty: momentum for vision, adamw for language
  std::string optimizer_impl = "foreach";
  bool optimizer_in_backward = false;
  std::string master_weights = "fp32";
  std::string loss = "plain";
  std::string kernels = "eager";
  std::string fp8_recipe = "delayed";  // precision fp8 only
  bool low_precision_norm = false;
  std::string attention_kernel = "flash2";  // fused attention's kernel generation
  std::string checkpointing;                // empty: none; "full", "selective", "every:N", "none"
  bool clip_grad_norm = false;
  bool channels_last = false;
  bool no_flash_attention = false;
  std::optional<int> lora;
  bool qlora = false;
  bool no_kbit_upcast = false;
  std::string lora_targets = "all";
  std::optional<double> lora_dropout;
  // Parallelism.
  int gpus = 1;
  int nodes = 1;
  std::string parallel = "ddp";
  std::vector<std::string> offload;  // optimizer, params, activations
  std::string interconnect = "card";
  double network_gbps = 0;  // 0: the default
  double dataset_size = 0;  // 0: the workload's default
  // The card or cards (--gpu as given: ids, names, families, NxID counts; empty: the command's default).
  std::string gpu;
  // --gpu-power W and --gpu-memory GB: every card of --gpu at that power limit (a laptop GPU's limit within its
  // range, a cap on any other card) or with that memory (a memory-modified board); the ID@115w and ID@48gb
  // suffixes for the whole list (catalog/modified.cpp).
  std::optional<double> gpu_power_w;
  std::optional<double> gpu_memory_gb;
  std::string calibration_file;

  bool operator==(const TrainingSetup&) const = default;

  // The setup as gpusage's flags, one argument per element ("--model", "resnet50", "--batch", "64", ...):
  // every field that differs from a default-constructed setup, and --precision always (it decides every
  // number). The model is given as --model, which every command with a workload takes.
  std::vector<std::string> to_args() const;
  // to_args() joined with spaces, each argument quoted for a POSIX shell where it needs it; starts with a
  // space when not empty (it follows a command name).
  std::string to_flags() const;

  // The workload; a language model without --seq-len at kDefaultLanguageSeqLen (or its shorter context).
  workload::Workload build_workload() const;
  // The workload at --tokens-per-sample, when it is given and below the sequence length (step time).
  std::optional<workload::Workload> build_timed_workload(const workload::Workload& w) const;
  // The training config for `w`, batch 1 (callers set the batch). Precision "auto" stands as bf16 here: run_plan
  // resolves it per card (estimate::SweepRequest::precision_per_card).
  estimate::TrainingConfig training_config(const workload::Workload& w) const;
  // The calibration in force: defaults, refined by calibration_file when given.
  estimate::Calibration calibration() const;
  // `list` (a --gpu value) with --gpu-power and --gpu-memory applied to every card it names: what
  // Catalog::select and Catalog::resolve take.
  std::string gpu_spec(const std::string& list, const catalog::Catalog& catalog = catalog::Catalog::active()) const;
  // True when a model is named (a zoo id, --hf-config or --workload).
  bool has_model() const { return !model.empty() || !hf_config.empty() || !workload_file.empty(); }

 private:
  // The workload at the shape given, or at the model's own default length.
  workload::Workload build_given_workload() const;
};

}  // namespace gpusage::setup
