// The one binder of a training setup (core/setup/training_setup.hpp) to a CLI11 command: every command with a
// workload (plan, guide, report, run, fit-batch) registers its options here, and what it parses is the setup.
#include "cli/setup_binder.hpp"

#include <fmt/core.h>

#include "cli/options.hpp"
#include "cli/setup_layers.hpp"
#include "core/common/i18n.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::cli {

namespace {

// The model words plan and guide take, listed from the zoo itself so that the help never falls behind it.
std::string zoo_help() {
  std::string ids;
  for (const workload::ZooEntry& entry : workload::zoo()) ids += (ids.empty() ? "" : ", ") + entry.id;
  return i18n::trf(i18n::N_("Zoo model ({}), or a Hugging Face id or name from the built-in table (e.g. "
                            "meta-llama/Llama-3.1-8B, Qwen2.5-7B-Instruct; the local Hugging Face cache first)"),
                   ids);
}

void bind_model(CLI::App& command, setup::TrainingSetup& s, const SetupDoor& door) {
  const std::string help = door.model_help.empty() ? zoo_help() : door.model_help;
  // Every command takes --model (what to_flags prints); plan and guide take the model as their first word too.
  if (door.model_positional) {
    auto* word = command.add_option("model", s.model, help);
    if (!s.model.empty()) word->capture_default_str();
    command.add_option("--model", s.model, i18n::N_("The model, as MODEL (the form printed command lines use)"))
        ->excludes(word);
  } else {
    auto* model = command.add_option("--model", s.model, help);
    if (!s.model.empty()) model->capture_default_str();
  }
  command.add_option(
      "--hf-config", s.hf_config,
      i18n::N_("Build the model from a Hugging Face config.json instead: the file, a model directory holding "
               "one, or a Hugging Face cache entry (~/.cache/huggingface/hub/models--ORG--NAME); read "
               "locally, never downloaded"));
  command.add_option(
      "--workload", s.workload_file,
      i18n::N_("Plan a model traced by gpusage-trace instead: the workload JSON it wrote (any PyTorch model; "
               "e.g. gpusage-trace torchvision:convnext_tiny --input 3x224 -o convnext.json)"));
}

void bind_shape_and_batch(CLI::App& command, setup::TrainingSetup& s, const SetupDoor& door) {
  // Upper bounds keep every accepted plan fast and its sizes far from overflow (issue 15): 8192 px is 36x
  // ImageNet's 224 px in pixels, 2^24 tokens is past the longest released context (10,485,760).
  command.add_option("--resolution", s.resolution, i18n::N_("Input side in pixels for vision models (default 224)"))
      ->check(CLI::Range(1, 8192));
  command.add_option("--seq-len", s.seq_len, i18n::N_("Tokens per sample for language models"))
      ->check(CLI::Range(1, 1 << 24));
  command
      .add_option(
          "--precision", s.precision,
          i18n::N_("auto (bf16 on each card that has it, compute capability 8.0 or later, else fp16) | fp32 | tf32 | "
                   "fp16 | bf16 | fp8 (fp16/bf16: autocast mixed precision)"))
      ->transform(one_of({"auto", "fp32", "tf32", "fp16", "bf16", "fp8"}))
      ->capture_default_str();
  if (!door.batch_help.empty()) {
    auto* batch = command.add_option("--batch", s.batch, door.batch_help);
    if (door.single_batch) batch->check(CLI::TypeValidator<int>())->check(CLI::Range(1, 1 << 24));
    if (!s.batch.empty()) batch->capture_default_str();
  }
  if (!door.target_batch_help.empty()) {
    command.add_option("--target-batch", s.target_batch, door.target_batch_help)->check(CLI::Range(1, 1 << 24));
  }
}

void bind_recipe(CLI::App& command, setup::TrainingSetup& s) {
  command
      .add_option(
          "--optimizer", s.optimizer,
          i18n::N_("sgd | momentum | adam | adamw | adamw8bit | paged_adamw | paged_adamw8bit | adafactor | lion "
                   "(default: momentum for vision, adamw for language models; 8-bit and paged: bitsandbytes)"))
      ->transform(one_of(
          {"sgd", "momentum", "adam", "adamw", "adamw8bit", "paged_adamw", "paged_adamw8bit", "adafactor", "lion"}));
  command.add_flag(
      "--optimizer-in-backward", s.optimizer_in_backward,
      i18n::N_("Step each parameter as its gradient is made (torchtune's optimizer_in_bwd): one gradient at a "
               "time instead of all of them"));
  command
      .add_option(
          "--optimizer-impl", s.optimizer_impl,
          i18n::N_("How the optimizer step runs: foreach (torch.optim's default on CUDA: one multi-tensor kernel "
                   "per op of the update, AdamW's seven ops each a pass over the states, and a sqrt(v) list while "
                   "it steps; the Hugging Face Trainer's adamw_torch) | fused (one pass: fused=True, the Trainer's "
                   "default from PyTorch 2.8, torchtune, torchtitan, apex, DeepSpeed) | loop (the same ops tensor "
                   "by tensor: PyTorch before 2.0)"))
      ->transform(one_of({"foreach", "fused", "loop"}))
      ->capture_default_str();
  command.add_flag(
      "--clip-grad-norm", s.clip_grad_norm,
      i18n::N_("Clip the gradients' global norm before each optimizer step (torch.nn.utils.clip_grad_norm_; "
               "on by default in the Hugging Face Trainer, max_grad_norm 1.0, and so in TRL, Axolotl and "
               "LLaMA-Factory): one more read of every gradient and one read and write to scale it"));
  // Give the model before a bare --checkpointing: it takes the next word as its mode when one follows. Its
  // default_str is the value it takes alone (CLI11 gives it to a bare optional option), not the default: the
  // help names both in words. A bare one just before `--` is made --checkpointing=full before CLI11 parses
  // (app.cpp), which would otherwise take `--` as its value's end and the command's words as options.
  command
      .add_option(
          "--checkpointing", s.checkpointing,
          i18n::N_("Activation checkpointing (default: none, the Hugging Face Trainer's; given alone: full): full "
                   "(every block recomputed), selective (keep GEMM and attention outputs, recompute the rest), "
                   "every:N (every Nth block), none"))
      ->expected(0, 1)
      ->default_str("full")
      ->option_text("[KIND]");
  command
      .add_option("--master-weights", s.master_weights,
                  i18n::N_("fp32 (mixed precision keeps fp32 weights, gradients, optimizer states) | bf16 (pure bf16: "
                           "torchtune, LitGPT bf16-true, torchtitan)"))
      ->transform(one_of({"fp32", "bf16"}))
      ->capture_default_str();
  command
      .add_option(
          "--loss", s.loss,
          i18n::N_("Language-model loss: plain (fp32 log-softmax of the whole logits, Hugging Face) | plain16 (the "
                   "same in the model's 16-bit dtype, no upcast: nn.CrossEntropyLoss on a pure-bf16 model's logits; "
                   "needs --master-weights bf16) | chunked (torchtune's chunked output) | fused (fused linear "
                   "cross-entropy: Liger, Unsloth)"))
      ->transform(one_of({"plain", "plain16", "chunked", "fused"}))
      ->capture_default_str();
  command
      .add_option(
          "--tokens-per-sample", s.tokens_per_sample,
          i18n::N_("Tokens each sample really computes, below --seq-len (unpadded or length-grouped data): step "
                   "time at these, memory at --seq-len"))
      ->check(CLI::Range(1, 1 << 24));
  command
      .add_option("--accumulate", s.accumulate,
                  i18n::N_("Gradient-accumulation steps per optimizer step; --batch is held (with --target-batch: "
                           "--target-batch must equal batch x accumulate x GPUs)"))
      ->check(CLI::Range(1, 1 << 20));
  command
      .add_option(
          "--kernels", s.kernels,
          i18n::N_("Language models' elementwise code: eager (Hugging Face's Python RMSNorm and rotary embedding, "
                   "a kernel per op) | fused (torch.compile, Liger, Unsloth, Transformer Engine, a C++ trainer)"))
      ->transform(one_of({"eager", "fused"}))
      ->capture_default_str();
  command
      .add_option("--fp8-recipe", s.fp8_recipe,
                  i18n::N_("With --precision fp8, how the tensors are scaled: delayed (Transformer Engine's default, "
                           "NeMo, Megatron: the amax taken inside the cast, the norms writing FP8 themselves) | "
                           "tensorwise (torchao float8, torchtitan: an amax pass before each cast) | producer-amax "
                           "(llm.q: the amax from the kernel that made the tensor, every cast a pass of its own)"))
      ->transform(one_of({"delayed", "tensorwise", "producer-amax"}))
      ->capture_default_str();
  command
      .add_option("--attention-kernel", s.attention_kernel,
                  i18n::N_("Fused attention's kernel: flash2 (FlashAttention 2, PyTorch's SDPA from 2.2) | flash1 "
                           "(PyTorch's SDPA before 2.2, flash-attn 1, xFormers, Triton kernels of 2023) | cudnn "
                           "(cuDNN fused attention, Transformer Engine's choice on Hopper and newer, or "
                           "FlashAttention 3)"))
      ->transform(one_of({"flash2", "flash1", "cudnn"}))
      ->capture_default_str();
  command.add_flag("--low-precision-norm", s.low_precision_norm,
                   i18n::N_("LayerNorm and RMSNorm run in 16 bits under autocast (MosaicML's LPLayerNorm, a fused norm "
                            "kernel fed the 16-bit input): their saved input is 16-bit, not fp32"));
  command.add_flag("--channels-last", s.channels_last,
                   i18n::N_("NHWC activations (model.to(memory_format=torch.channels_last)): tensor-core convolutions "
                            "skip the NCHW transposes"));
  command.add_option("--lora", s.lora, i18n::N_("Fine-tune LoRA adapters of this rank; the base stays frozen"))
      ->check(CLI::Range(1, 4096));
  command.add_flag("--qlora", s.qlora, i18n::N_("LoRA over a 4-bit NF4 base (rank 16 unless --lora)"));
  command.add_flag(
      "--no-kbit-upcast", s.no_kbit_upcast,
      i18n::N_("QLoRA whose base is not prepared by PEFT's prepare_model_for_kbit_training (which TRL's "
               "SFTTrainer, Axolotl and LLaMA-Factory call): the embeddings, norms and lm_head stay 16-bit "
               "instead of fp32, and so does the hidden state (Unsloth, a script that calls get_peft_model only)"));
  command
      .add_option("--lora-targets", s.lora_targets,
                  i18n::N_("Matrices --lora/--qlora adapts: attn (q, k, v, o) | mlp (gate, up, down) | all"))
      ->transform(one_of({"attn", "mlp", "all"}))
      ->capture_default_str();
  command
      .add_option("--lora-dropout", s.lora_dropout,
                  i18n::N_("LoRA dropout probability (PEFT's lora_dropout; LitGPT 0.05, Answer.AI's fsdp_qlora 0.1): "
                           "each adapter saves its dropped-out input and the mask, and runs a dropout kernel each way; "
                           "default 0 (PEFT's: no dropout)"))
      ->check(CLI::Range(0.0, 0.99));
}

void bind_parallelism(CLI::App& command, setup::TrainingSetup& s, const SetupDoor& door) {
  command.add_option("--gpus", s.gpus, i18n::N_("GPUs per node (data parallel)"))
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--nodes", s.nodes, i18n::N_("Nodes"))->check(CLI::Range(1, 100000))->capture_default_str();
  command
      .add_option(
          "--parallel", s.parallel,
          i18n::N_("How data-parallel GPUs hold the state: ddp (each all of it) | zero1 (optimizer state and fp32 "
                   "master weights sharded: DeepSpeed stage 1) | zero2 (gradients too: stage 2) | fsdp (weights "
                   "too: FSDP FULL_SHARD, DeepSpeed stage 3) | hsdp (FSDP within a node, replicated across nodes)"))
      ->transform(parallel_choice())
      ->capture_default_str();
  command
      .add_option(
          "--offload", s.offload,
          i18n::N_("Keep state in host memory, comma separated: optimizer (ZeRO-Offload: fp32 masters, optimizer "
                   "state and gradients; the step runs on the CPU) | params (FSDP CPU offload: weight shards too; "
                   "needs --parallel fsdp or hsdp) | activations (saved activations copied out and back, "
                   "torchtune's activation offloading)"))
      ->delimiter(',')
      ->transform(one_of({"optimizer", "params", "activations"}));
  command
      .add_option(
          "--interconnect", s.interconnect,
          i18n::N_("How a node's GPUs talk: card (NVLink where the card has it, else PCIe) | pcie (no NVLink "
                   "bridge: two RTX 3090s without theirs; GeForce cards then stage through host memory) | nvlink"))
      ->transform(one_of({"card", "pcie", "nvlink"}))
      ->capture_default_str();
  command
      .add_option("--dataset-size", s.dataset_size,
                  i18n::N_("Samples per epoch (default: ImageNet-1k's 1,281,167 for vision)"))
      ->check(CLI::Range(1.0, 1e12));  // 10^12: 70,000 times ImageNet-21k's 14.2 million images
  command
      .add_option("--network-gbps", s.network_gbps,
                  i18n::N_("Network per node in Gb/s when --nodes > 1 (default: the NICs of the card's NVIDIA "
                           "reference server together, `gpusage gpus show ID` lists them; else 100)"))
      ->check(CLI::Range(0.001, 1e6));  // 1 Mb/s to 1 Pb/s
  command
      .add_option("--calibration", s.calibration_file, i18n::N_("gpusage bench results (JSON) to calibrate step time"))
      ->check(CLI::ExistingFile);
  command.add_flag("--no-flash-attention", s.no_flash_attention, i18n::N_("Attention keeps its s x s probabilities"));
  if (!door.gpu_help.empty()) {
    auto* gpu = command.add_option("--gpu", s.gpu, door.gpu_help);
    if (!s.gpu.empty()) gpu->capture_default_str();
    // The ranges keep the suffixes the catalog parses (catalog/modified.cpp: above 0, at most 100,000).
    command
        .add_option(
            "--gpu-power", s.gpu_power_w,
            i18n::N_("Plan each --gpu card at this power limit in W (ID@Nw): a laptop GPU's limit within its range "
                     "(default: the top of it), a cap on any other card"))
        ->check(CLI::Range(1.0, 1e5));
    command
        .add_option(
            "--gpu-memory", s.gpu_memory_gb,
            i18n::N_("Plan each --gpu card with this memory in GB (ID@Ngb): a memory-modified board (an RTX 4090 "
                     "with 48 GB); bandwidth stays the card's"))
        ->check(CLI::Range(1.0, 1e5));
  }
}

}  // namespace

bool model_given(const CLI::App& command) {
  for (const char* name : {"model", "--model"}) {
    if (const CLI::Option* option = command.get_option_no_throw(name); option && option->count() > 0) return true;
  }
  return false;
}

void print_setup_layers(const setup::SetupLayers& layers) {
  for (const std::string& line : layers.text_lines()) fmt::print(stderr, "gpusage: {}\n", line);
}

std::shared_ptr<const setup::SetupLayers> bind_setup(CLI::App& command, setup::TrainingSetup& s,
                                                     const SetupDoor& door) {
  bind_model(command, s, door);
  bind_shape_and_batch(command, s, door);
  bind_recipe(command, s);
  bind_parallelism(command, s, door);
  return bind_setup_layers(command, s);
}

}  // namespace gpusage::cli
