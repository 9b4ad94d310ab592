// The options that describe a training run, shared by `plan`, `guide` and `validate`: which model
// (zoo id, --hf-config or --workload), its shape, precision, optimizer, parallelism and calibration.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate/calibration.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::cli {

// The config.json that --hf-config names: the file itself, DIR/config.json for a model directory, or, for
// a Hugging Face cache entry (models--ORG--NAME), the config.json of the snapshot refs/main names (else of
// its only snapshot). Throws InputError naming the path and what is accepted.
std::string hf_config_file(const std::string& given);

struct RunOptions {
  std::string model;
  std::string hf_config;
  std::string workload_file;  // --workload: a traced workload JSON (gpusage-trace)
  std::optional<int> resolution;
  std::optional<int> seq_len;
  std::string precision = "fp16";
  std::string optimizer;  // empty: momentum for vision, adamw for language
  std::string checkpointing;  // empty: none; "full", "selective", "every:N", "none"
  std::string master_weights = "fp32";
  std::string loss = "plain";
  std::string kernels = "eager";
  std::string optimizer_impl = "foreach";
  bool no_kbit_upcast = false;
  std::string lora_targets = "all";
  std::optional<int> tokens_per_sample;
  std::optional<int> accumulate;
  bool optimizer_in_backward = false;
  bool clip_grad_norm = false;
  bool channels_last = false;
  std::optional<int> lora;
  bool qlora = false;
  std::optional<double> lora_dropout;
  int gpus = 1;
  int nodes = 1;
  std::string parallel = "ddp";
  std::vector<std::string> offload;  // optimizer, params, activations
  std::string interconnect = "card";
  double dataset_size = 0;
  double network_gbps = 0;
  std::string calibration_file;
  bool no_flash_attention = false;

  // Registers the options above on `command` (the model as a positional when `with_model`).
  void add_to(CLI::App& command, bool with_model = true);

  workload::Workload build_workload() const;
  // The workload at --tokens-per-sample, when it is given and below the sequence length (step time).
  std::optional<workload::Workload> build_timed_workload(const workload::Workload& w) const;
  // The training config for `w`, batch 1 (callers set the batch).
  estimate::TrainingConfig training_config(const workload::Workload& w) const;
  // The calibration in force: defaults, refined by --calibration when given.
  estimate::Calibration calibration() const;
};

}  // namespace gpusage::cli
