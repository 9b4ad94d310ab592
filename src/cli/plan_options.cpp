#include "cli/options.hpp"
#include "cli/plan_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/workload/traced.hpp"
#include "core/common/text.hpp"
#include "core/estimate/calibration_file.hpp"

namespace gpusage::cli {

void RunOptions::add_to(CLI::App& command, bool with_model) {
  if (with_model) {
    command.add_option("model", model, "Zoo model: resnet18/26/34/50/101/152/200, wide_resnet50_2/101_2, "
                                       "resnext50_32x4d, resnext101_32x4d/32x8d/64x4d, vgg11/13/16/19[_bn], "
                                       "mobilenet_v2, efficientnet_b0, vit_b_16/b_32/l_16/l_32/h_14, "
                                       "vit_tiny_patch16_224, vit_small_patch16_224/32_224, vit_base_patch8_224, "
                                       "vit_large_patch14_224, bert-base, bert-large, gpt2[-medium|-large|-xl], "
                                       "llama2-7b, llama2-13b, llama3-8b, llama3.1-8b, llama3.2-1b/3b, mistral-7b, "
                                       "mistral-7b-v0.3, qwen2.5-0.5b/1.5b/3b/7b/14b, qwen3-8b, gemma2-2b/9b, "
                                       "phi3-mini, tinyllama-1.1b");
  }
  command.add_option("--hf-config", hf_config,
                     "Build the model from a Hugging Face config.json instead: the file, a model directory holding "
                     "one, or a Hugging Face cache entry (~/.cache/huggingface/hub/models--ORG--NAME); read "
                     "locally, never downloaded");
  command.add_option("--workload", workload_file,
                     "Plan a model traced by gpusage-trace instead: the workload JSON it wrote (any PyTorch model; "
                     "e.g. gpusage-trace torchvision:convnext_tiny --input 3x224 -o convnext.json)");
  // Upper bounds keep every accepted plan fast and its sizes far from overflow (issue 15): 8192 px is 36x
  // ImageNet's 224 px in pixels, 2^24 tokens is past the longest released context (10,485,760).
  command.add_option("--resolution", resolution, "Input side in pixels for vision models (default 224)")
      ->check(CLI::Range(1, 8192));
  command.add_option("--seq-len", seq_len, "Tokens per sample for language models")->check(CLI::Range(1, 1 << 24));
  command.add_option("--precision", precision, "fp32 | tf32 | fp16 | bf16 | fp8 (fp16/bf16: autocast mixed precision)")
      ->transform(one_of({"fp32", "tf32", "fp16", "bf16", "fp8"}))
      ->capture_default_str();
  command.add_option("--optimizer", optimizer,
                     "sgd | momentum | adam | adamw | adamw8bit | paged_adamw | paged_adamw8bit | adafactor | lion "
                     "(default: momentum for vision, adamw for language models; 8-bit and paged: bitsandbytes)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam", "adamw", "adamw8bit", "paged_adamw", "paged_adamw8bit",
                             "adafactor", "lion"}));
  command.add_flag("--optimizer-in-backward", optimizer_in_backward,
                   "Step each parameter as its gradient is made (torchtune's optimizer_in_bwd): one gradient at a "
                   "time instead of all of them");
  command.add_option("--optimizer-impl", optimizer_impl,
                     "How the optimizer step runs: foreach (torch.optim's default on CUDA: one multi-tensor kernel "
                     "per op of the update, AdamW's seven ops each a pass over the states, and a sqrt(v) list while "
                     "it steps; the Hugging Face Trainer's adamw_torch) | fused (one pass: fused=True, the Trainer's "
                     "default from PyTorch 2.8, torchtune, torchtitan, apex, DeepSpeed) | loop (the same ops tensor "
                     "by tensor: PyTorch before 2.0)")
      ->check(CLI::IsMember({"foreach", "fused", "loop"}))
      ->capture_default_str();
  command.add_flag("--clip-grad-norm", clip_grad_norm,
                   "Clip the gradients' global norm before each optimizer step (torch.nn.utils.clip_grad_norm_; "
                   "on by default in the Hugging Face Trainer, max_grad_norm 1.0, and so in TRL, Axolotl and "
                   "LLaMA-Factory): one more read of every gradient and one read and write to scale it");
  // Give the model before a bare --checkpointing: it takes the next word as its mode when one follows.
  command.add_option("--checkpointing", checkpointing,
                     "Activation checkpointing: full (alone: every block recomputed), selective (keep GEMM and "
                     "attention outputs, recompute the rest), every:N (every Nth block), none")
      ->expected(0, 1)
      ->default_str("full");
  command.add_option("--master-weights", master_weights,
                     "fp32 (mixed precision keeps fp32 weights, gradients, optimizer states) | bf16 (pure bf16: "
                     "torchtune, LitGPT bf16-true, torchtitan)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  command.add_option("--loss", loss,
                     "Language-model loss: plain (fp32 log-softmax of the whole logits, Hugging Face) | plain16 (the "
                     "same in the model's 16-bit dtype, no upcast: nn.CrossEntropyLoss on a pure-bf16 model's logits; "
                     "needs --master-weights bf16) | chunked (torchtune's chunked output) | fused (fused linear "
                     "cross-entropy: Liger, Unsloth)")
      ->check(CLI::IsMember({"plain", "plain16", "chunked", "fused"}))
      ->capture_default_str();
  command.add_option("--tokens-per-sample", tokens_per_sample,
                     "Tokens each sample really computes, below --seq-len (unpadded or length-grouped data): step "
                     "time at these, memory at --seq-len")
      ->check(CLI::Range(1, 1 << 24));
  command.add_option("--accumulate", accumulate,
                     "Gradient-accumulation steps per optimizer step; --batch is held (with --target-batch: "
                     "--target-batch must equal batch x accumulate x GPUs)")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("--kernels", kernels,
                     "Language models' elementwise code: eager (Hugging Face's Python RMSNorm and rotary embedding, "
                     "a kernel per op) | fused (torch.compile, Liger, Unsloth, Transformer Engine, a C++ trainer)")
      ->check(CLI::IsMember({"eager", "fused"}))
      ->capture_default_str();
  command.add_flag("--channels-last", channels_last,
                   "NHWC activations (model.to(memory_format=torch.channels_last)): tensor-core convolutions "
                   "skip the NCHW transposes");
  command.add_option("--lora", lora, "Fine-tune LoRA adapters of this rank; the base stays frozen")
      ->check(CLI::Range(1, 4096));
  command.add_flag("--qlora", qlora, "LoRA over a 4-bit NF4 base (rank 16 unless --lora)");
  command.add_flag("--no-kbit-upcast", no_kbit_upcast,
                   "QLoRA whose base is not prepared by PEFT's prepare_model_for_kbit_training (which TRL's "
                   "SFTTrainer, Axolotl and LLaMA-Factory call): the embeddings, norms and lm_head stay 16-bit "
                   "instead of fp32, and so does the hidden state (Unsloth, a script that calls get_peft_model only)");
  command.add_option("--lora-targets", lora_targets,
                     "Matrices --lora/--qlora adapts: attn (q, k, v, o) | mlp (gate, up, down) | all")
      ->check(CLI::IsMember({"attn", "mlp", "all"}))
      ->capture_default_str();
  command.add_option("--lora-dropout", lora_dropout,
                     "LoRA dropout probability (PEFT's lora_dropout; LitGPT 0.05, Answer.AI's fsdp_qlora 0.1): "
                     "each adapter saves its dropped-out input and the mask, and runs a dropout kernel each way; "
                     "default 0 (PEFT's: no dropout)")
      ->check(CLI::Range(0.0, 0.99));
  command.add_option("--gpus", gpus, "GPUs per node (data parallel)")->check(CLI::Range(1, 1024))->capture_default_str();
  command.add_option("--nodes", nodes, "Nodes")->check(CLI::Range(1, 100000))->capture_default_str();
  command.add_option("--parallel", parallel,
                     "How data-parallel GPUs hold the state: ddp (each all of it) | zero1 (optimizer state and fp32 "
                     "master weights sharded: DeepSpeed stage 1) | zero2 (gradients too: stage 2) | fsdp (weights "
                     "too: FSDP FULL_SHARD, DeepSpeed stage 3) | hsdp (FSDP within a node, replicated across nodes)")
      ->transform(parallel_choice())
      ->capture_default_str();
  command.add_option("--offload", offload,
                     "Keep state in host memory, comma separated: optimizer (ZeRO-Offload: fp32 masters, optimizer "
                     "state and gradients; the step runs on the CPU) | params (FSDP CPU offload: weight shards too; "
                     "needs --parallel fsdp or hsdp) | activations (saved activations copied out and back, "
                     "torchtune's activation offloading)")
      ->delimiter(',')
      ->check(CLI::IsMember({"optimizer", "params", "activations"}));
  command.add_option("--interconnect", interconnect,
                     "How a node's GPUs talk: card (NVLink where the card has it, else PCIe) | pcie (no NVLink "
                     "bridge: two RTX 3090s without theirs; GeForce cards then stage through host memory) | nvlink")
      ->check(CLI::IsMember({"card", "pcie", "nvlink"}))
      ->capture_default_str();
  command.add_option("--dataset-size", dataset_size, "Samples per epoch (default: ImageNet-1k's 1,281,167 for vision)")
      ->check(CLI::Range(1.0, 1e12));  // 10^12: 70,000 times ImageNet-21k's 14.2 million images
  command.add_option("--network-gbps", network_gbps, "Network per node in Gb/s when --nodes > 1 (default 100)")
      ->check(CLI::Range(0.001, 1e6));  // 1 Mb/s to 1 Pb/s
  command.add_option("--calibration", calibration_file, "gpusage bench results (JSON) to calibrate step time")
      ->check(CLI::ExistingFile);
  command.add_flag("--no-flash-attention", no_flash_attention, "Attention keeps its s x s probabilities");
}

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
  throw InputError(fmt::format("--checkpointing '{}' is not one of full, selective, every:N (N from 1 to 1000), "
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
      "give a config.json, a model directory holding one, or a Hugging Face cache entry (models--ORG--NAME)";
  std::error_code ec;
  const fs::path path(given);
  if (!fs::exists(path, ec)) throw InputError(fmt::format("--hf-config '{}' does not exist; {}", given, accepted));
  if (!fs::is_directory(path, ec)) return given;
  if (fs::is_regular_file(path / "config.json", ec)) return (path / "config.json").string();
  const fs::path snapshots = path / "snapshots";
  if (!fs::is_directory(snapshots, ec)) {
    throw InputError(fmt::format("--hf-config directory '{}' has no config.json and no snapshots/ (it is not a "
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
      throw InputError(fmt::format("--hf-config cache entry '{}' has no refs/main and {} snapshots; give one "
                                   "snapshot directory ({}/snapshots/<hash>)",
                                   given, found.size(), given));
    }
    snapshot = found.front();
  }
  if (!fs::is_regular_file(snapshot / "config.json", ec)) {
    throw InputError(fmt::format("--hf-config cache entry '{}': snapshot '{}' has no config.json (download it with "
                                 "the model, or give the file)",
                                 given, snapshot.string()));
  }
  return (snapshot / "config.json").string();
}

workload::Workload RunOptions::build_workload() const {
  workload::WorkloadOptions options;
  options.resolution = resolution;
  options.seq_len = seq_len;
  options.flash_attention = !no_flash_attention;
  if (!workload_file.empty()) {
    if (!model.empty() || !hf_config.empty()) {
      throw InputError(fmt::format("--workload {}: give one model, a zoo MODEL, --hf-config or --workload", workload_file));
    }
    if (resolution || seq_len) {
      throw InputError(fmt::format("--{} does not apply to --workload {}: a traced workload keeps the input shape it "
                                   "was traced at (trace it again with gpusage-trace --input)",
                                   resolution ? "resolution" : "seq-len", workload_file));
    }
    return workload::from_traced_workload(io::read_file(workload_file, "traced workload"), workload_file);
  }
  if (!hf_config.empty()) {
    if (!model.empty()) throw InputError("give either a MODEL or --hf-config, not both");
    return workload::from_hf_config(io::read_file(hf_config_file(hf_config), "Hugging Face config"), options);
  }
  if (model.empty()) {
    throw InputError("which model? give a zoo id (e.g. resnet50), --hf-config FILE or --workload FILE");
  }
  return workload::build(model, options);
}

std::optional<workload::Workload> RunOptions::build_timed_workload(const workload::Workload& w) const {
  if (!tokens_per_sample) return std::nullopt;
  if (w.domain != workload::Domain::language) {
    throw InputError(fmt::format("--tokens-per-sample {} applies to language models; {} is a vision model",
                                 *tokens_per_sample, w.display_name));
  }
  if (*tokens_per_sample > w.seq_len) {
    throw InputError(fmt::format("--tokens-per-sample {} is above the sequence length {}: give at most --seq-len",
                                 *tokens_per_sample, w.seq_len));
  }
  if (*tokens_per_sample == w.seq_len) return std::nullopt;
  RunOptions timed = *this;
  timed.seq_len = tokens_per_sample;
  return timed.build_workload();
}

estimate::TrainingConfig RunOptions::training_config(const workload::Workload& w) const {
  estimate::TrainingConfig c;
  c.batch_per_gpu = 1;
  c.precision = *catalog::parse_precision(precision);
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
    throw InputError(fmt::format("--optimizer-in-backward steps on every micro-batch's gradients, so it cannot "
                                 "accumulate: drop --accumulate {} or the flag",
                                 *accumulate));
  }
  if (lora_targets != "all" && !lora && !qlora) {
    throw InputError(fmt::format("--lora-targets {} needs --lora RANK or --qlora (without them every weight trains)",
                                 lora_targets));
  }
  if (loss != "plain" && w.domain != workload::Domain::language) {
    throw InputError(fmt::format("--loss {} applies to language models' vocabulary logits; {} is a vision model", loss,
                                 w.display_name));
  }
  // Autocast runs cross-entropy and log-softmax in fp32 (torch.amp's fp32 op list): a 16-bit loss needs a model
  // that is 16-bit itself.
  if (loss == "plain16" && (master_weights != "bf16" || (precision != "bf16" && precision != "fp16"))) {
    throw InputError(fmt::format("--loss plain16 keeps the loss in the model's 16-bit dtype: it needs --master-weights "
                                 "bf16 and --precision bf16 or fp16, not --master-weights {} --precision {} (under "
                                 "autocast cross-entropy runs in fp32: use --loss plain)",
                                 master_weights, precision));
  }
  c.channels_last = channels_last;
  c.eager_kernels = kernels == "eager";
  c.lora_rank = lora;
  c.qlora = qlora;
  if (no_kbit_upcast && !qlora) {
    throw InputError("--no-kbit-upcast applies to QLoRA's 4-bit base: add --qlora or drop the flag");
  }
  c.kbit_upcast = !no_kbit_upcast;
  if (lora_dropout && !lora && !qlora) {
    throw InputError(fmt::format("--lora-dropout {} needs --lora RANK or --qlora (dropout applies to the adapters' input)",
                                 *lora_dropout));
  }
  c.lora_dropout = lora_dropout.value_or(0);
  c.gpus_per_node = gpus;
  c.nodes = nodes;
  c.parallel = *estimate::parse_parallel(parallel);
  for (const std::string& what : offload) {
    (what == "optimizer" ? c.offload.optimizer : what == "params" ? c.offload.params : c.offload.activations) = true;
  }
  if (!estimate::offload_allowed(c.offload, c.parallel)) {
    throw InputError(fmt::format("--offload params moves FSDP's weight shards to the host: it needs --parallel fsdp "
                                 "or hsdp, not {} (which keeps whole weights on every GPU)",
                                 parallel));
  }
  if (c.offload.steps_on_host() &&
      (c.optimizer == estimate::Optimizer::paged_adamw || c.optimizer == estimate::Optimizer::paged_adamw8bit)) {
    throw InputError(fmt::format("--offload {} steps the optimizer on the CPU; --optimizer {} pages GPU states to "
                                 "the host on its own: choose one",
                                 c.offload.params ? "params" : "optimizer", name));
  }
  c.interconnect = *estimate::parse_interconnect(interconnect);
  c.dataset_size = dataset_size;
  c.network_gbs = network_gbps / 8;
  return c;
}

estimate::Calibration RunOptions::calibration() const {
  estimate::Calibration calibration;
  if (!calibration_file.empty()) {
    estimate::apply_bench_results(calibration, io::read_file(calibration_file, "calibration file"),
                                  calibration_file, catalog::Catalog::active());
  }
  return calibration;
}

}  // namespace gpusage::cli
