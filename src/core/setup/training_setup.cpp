#include "core/setup/training_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/common/text.hpp"
#include "core/estimate/calibration_file.hpp"
#include "core/workload/traced.hpp"

namespace gpusage::setup {

namespace {

// --checkpointing's value: none, full, selective or every:N with N from 1 to 1000 (no model has more blocks).
void apply_checkpointing(estimate::TrainingConfig& c, const std::string& mode) {
  if (mode.empty() || mode == "none") return;
  c.checkpointing = true;
  if (mode == "full") return;
  if (mode == "selective") {
    c.selective_checkpointing = true;
    return;
  }
  if (mode.starts_with("every:")) {
    const std::string n = mode.substr(6);
    if (!n.empty() && n.size() <= 4 && std::all_of(n.begin(), n.end(), ::isdigit)) {
      const int every = std::stoi(n);
      if (every >= 1 && every <= 1000) {
        c.checkpoint_every = every;
        return;
      }
    }
  }
  throw InputError(
      i18n::trf("--checkpointing '{}' is not one of full, selective, every:N (N from 1 to 1000), "
                "none (give the model before a bare --checkpointing)",
                mode));
}

}  // namespace

// The layout huggingface_hub writes (its cache docs, "Manage huggingface_hub cache-system"):
// models--ORG--NAME/refs/main holds the commit hash of the revision last downloaded from main, and
// snapshots/<hash>/ holds that revision's files (links into blobs/).
std::string hf_config_file(const std::string& given) {
  namespace fs = std::filesystem;
  const std::string accepted =
      i18n::tr("give a config.json, a model directory holding one, or a Hugging Face cache entry (models--ORG--NAME)");
  std::error_code ec;
  const fs::path path(given);
  if (!fs::exists(path, ec)) throw InputError(i18n::trf("--hf-config '{}' does not exist; {}", given, accepted));
  if (!fs::is_directory(path, ec)) return given;
  if (fs::is_regular_file(path / "config.json", ec)) return (path / "config.json").string();
  const fs::path snapshots = path / "snapshots";
  if (!fs::is_directory(snapshots, ec)) {
    throw InputError(
        i18n::trf("--hf-config directory '{}' has no config.json and no snapshots/ (it is not a "
                  "Hugging Face cache entry); {}",
                  given, accepted));
  }
  fs::path snapshot;
  if (const auto ref = io::try_read_file((path / "refs" / "main").string())) {
    snapshot = snapshots / text::trim(*ref);
  } else {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(snapshots, ec))
      if (entry.is_directory()) found.push_back(entry.path());
    if (found.size() != 1) {
      throw InputError(
          i18n::trf("--hf-config cache entry '{}' has no refs/main and {} snapshots; give one "
                    "snapshot directory ({}/snapshots/<hash>)",
                    given, found.size(), given));
    }
    snapshot = found.front();
  }
  if (!fs::is_regular_file(snapshot / "config.json", ec)) {
    throw InputError(
        i18n::trf("--hf-config cache entry '{}': snapshot '{}' has no config.json (download it with "
                  "the model, or give the file)",
                  given, snapshot.string()));
  }
  return (snapshot / "config.json").string();
}

workload::Workload TrainingSetup::build_given_workload() const {
  workload::WorkloadOptions options;
  options.resolution = resolution;
  options.seq_len = seq_len;
  options.flash_attention = !no_flash_attention;
  if (!workload_file.empty()) {
    if (!model.empty() || !hf_config.empty()) {
      throw InputError(
          i18n::trf("--workload {}: give one model, a zoo MODEL, --hf-config or --workload", workload_file));
    }
    if (resolution || seq_len) {
      throw InputError(
          i18n::trf("--{} does not apply to --workload {}: a traced workload keeps the input shape it "
                    "was traced at (trace it again with gpusage-trace --input)",
                    resolution ? "resolution" : "seq-len", workload_file));
    }
    return workload::from_traced_workload(io::read_file(workload_file, "traced workload"), workload_file);
  }
  if (!hf_config.empty()) {
    if (!model.empty()) throw InputError(i18n::tr("give either a MODEL or --hf-config, not both"));
    return workload::from_hf_config(io::read_file(hf_config_file(hf_config), "Hugging Face config"), options);
  }
  if (model.empty()) {
    throw InputError(i18n::tr("which model? give a zoo id (e.g. resnet50), --hf-config FILE or --workload FILE"));
  }
  return workload::build(model, options);
}

workload::Workload TrainingSetup::build_workload() const {
  workload::Workload w = build_given_workload();
  if (seq_len || !workload_file.empty() || w.domain != workload::Domain::language ||
      w.seq_len <= kDefaultLanguageSeqLen)
    return w;
  TrainingSetup shorter = *this;
  shorter.seq_len = kDefaultLanguageSeqLen;
  return shorter.build_given_workload();
}

std::optional<workload::Workload> TrainingSetup::build_timed_workload(const workload::Workload& w) const {
  if (!tokens_per_sample) return std::nullopt;
  if (w.domain != workload::Domain::language) {
    throw InputError(i18n::trf("--tokens-per-sample {} applies to language models; {} is a vision model",
                               *tokens_per_sample, w.display_name));
  }
  if (*tokens_per_sample > w.seq_len) {
    throw InputError(i18n::trf("--tokens-per-sample {} is above the sequence length {}: give at most --seq-len",
                               *tokens_per_sample, w.seq_len));
  }
  if (*tokens_per_sample == w.seq_len) return std::nullopt;
  TrainingSetup timed = *this;
  timed.seq_len = tokens_per_sample;
  return timed.build_workload();
}

estimate::TrainingConfig TrainingSetup::training_config(const workload::Workload& w) const {
  estimate::TrainingConfig c;
  c.batch_per_gpu = 1;
  c.precision = precision == "auto" ? catalog::Precision::bf16 : *catalog::parse_precision(precision);
  std::string name = optimizer;
  if (name.empty()) name = w.domain == workload::Domain::vision ? "momentum" : "adamw";
  c.optimizer = *estimate::parse_optimizer(name);
  apply_checkpointing(c, checkpointing);
  c.master_weights = master_weights == "bf16" ? estimate::MasterWeights::bf16 : estimate::MasterWeights::fp32;
  c.loss = *estimate::parse_loss(loss);
  c.lora_targets = *estimate::parse_lora_targets(lora_targets);
  if (accumulate) c.accumulation_steps = *accumulate;
  c.optimizer_in_backward = optimizer_in_backward;
  c.clip_grad_norm = clip_grad_norm;
  c.optimizer_impl = *estimate::parse_optimizer_impl(optimizer_impl);
  if (optimizer_in_backward && (accumulate.value_or(1) > 1)) {
    throw InputError(
        i18n::trf("--optimizer-in-backward steps on every micro-batch's gradients, so it cannot "
                  "accumulate: drop --accumulate {} or the flag",
                  *accumulate));
  }
  if (lora_targets != "all" && !lora && !qlora) {
    throw InputError(
        i18n::trf("--lora-targets {} needs --lora RANK or --qlora (without them every weight trains)", lora_targets));
  }
  if (loss != "plain" && w.domain != workload::Domain::language) {
    throw InputError(i18n::trf("--loss {} applies to language models' vocabulary logits; {} is a vision model", loss,
                               w.display_name));
  }
  // Autocast runs cross-entropy and log-softmax in fp32 (torch.amp's fp32 op list): a 16-bit loss needs a model
  // that is 16-bit itself.
  if (loss == "plain16" &&
      (master_weights != "bf16" || (precision != "bf16" && precision != "fp16" && precision != "auto"))) {
    throw InputError(
        i18n::trf("--loss plain16 keeps the loss in the model's 16-bit dtype: it needs --master-weights "
                  "bf16 and --precision bf16 or fp16, not --master-weights {} --precision {} (under "
                  "autocast cross-entropy runs in fp32: use --loss plain)",
                  master_weights, precision));
  }
  c.channels_last = channels_last;
  c.eager_kernels = kernels == "eager";
  c.fp8_recipe = *estimate::parse_fp8_recipe(fp8_recipe);
  c.low_precision_norm = low_precision_norm;
  c.attention_kernel = *estimate::parse_attention_kernel_generation(attention_kernel);
  if (fp8_recipe != TrainingSetup{}.fp8_recipe && precision != "fp8") {
    throw InputError(i18n::trf("--fp8-recipe {} applies to FP8 training: add --precision fp8 or drop it", fp8_recipe));
  }
  c.lora_rank = lora;
  c.qlora = qlora;
  if (no_kbit_upcast && !qlora) {
    throw InputError(i18n::tr("--no-kbit-upcast applies to QLoRA's 4-bit base: add --qlora or drop the flag"));
  }
  c.kbit_upcast = !no_kbit_upcast;
  if (lora_dropout && !lora && !qlora) {
    throw InputError(i18n::trf(
        "--lora-dropout {} needs --lora RANK or --qlora (dropout applies to the adapters' input)", *lora_dropout));
  }
  c.lora_dropout = lora_dropout.value_or(0);
  c.gpus_per_node = gpus;
  c.nodes = nodes;
  c.parallel = *estimate::parse_parallel(parallel);
  for (const std::string& what : offload) {
    (what == "optimizer" ? c.offload.optimizer : what == "params" ? c.offload.params : c.offload.activations) = true;
  }
  if (!estimate::offload_allowed(c.offload, c.parallel)) {
    throw InputError(
        i18n::trf("--offload params moves FSDP's weight shards to the host: it needs --parallel fsdp "
                  "or hsdp, not {} (which keeps whole weights on every GPU)",
                  parallel));
  }
  if (c.offload.steps_on_host() &&
      (c.optimizer == estimate::Optimizer::paged_adamw || c.optimizer == estimate::Optimizer::paged_adamw8bit)) {
    throw InputError(
        i18n::trf("--offload {} steps the optimizer on the CPU; --optimizer {} pages GPU states to "
                  "the host on its own: choose one",
                  c.offload.params ? "params" : "optimizer", name));
  }
  c.interconnect = *estimate::parse_interconnect(interconnect);
  c.dataset_size = dataset_size;
  c.network_gbs = network_gbps / 8;
  return c;
}

estimate::Calibration TrainingSetup::calibration() const {
  estimate::Calibration calibration;
  if (!calibration_file.empty()) {
    estimate::apply_bench_results(calibration, io::read_file(calibration_file, "calibration file"), calibration_file,
                                  catalog::Catalog::active());
  }
  return calibration;
}

std::string TrainingSetup::gpu_spec(const std::string& list, const catalog::Catalog& catalog) const {
  return catalog.with_modifications(list, gpu_power_w, gpu_memory_gb);
}

}  // namespace gpusage::setup
