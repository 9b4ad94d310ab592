#include "cli/plan_options.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/io.hpp"
#include "core/estimate/calibration_file.hpp"

namespace gpusage::cli {

void RunOptions::add_to(CLI::App& command, bool with_model) {
  if (with_model) {
    command.add_option("model", model, "Zoo model: resnet18/26/34/50/101/152/200, wide_resnet50_2/101_2, "
                                       "resnext50_32x4d, resnext101_32x4d/32x8d/64x4d, vgg11/13/16/19[_bn], "
                                       "mobilenet_v2, efficientnet_b0, vit_b_16/b_32/l_16/l_32/h_14, "
                                       "vit_tiny_patch16_224, vit_small_patch16_224/32_224, vit_base_patch8_224, "
                                       "vit_large_patch14_224, bert-base, bert-large, gpt2[-medium|-large|-xl], "
                                       "llama2-7b, llama2-13b, llama3-8b, mistral-7b");
  }
  command.add_option("--hf-config", hf_config, "Build the model from a Hugging Face config.json instead")
      ->check(CLI::ExistingFile);
  // Upper bounds keep every accepted plan fast and its sizes far from overflow (issue 15): 8192 px is 36x
  // ImageNet's 224 px in pixels, 2^24 tokens is past the longest released context (10,485,760).
  command.add_option("--resolution", resolution, "Input side in pixels for vision models (default 224)")
      ->check(CLI::Range(1, 8192));
  command.add_option("--seq-len", seq_len, "Tokens per sample for language models")->check(CLI::Range(1, 1 << 24));
  command.add_option("--precision", precision, "fp32 | tf32 | fp16 | bf16 | fp8 (fp16/bf16: autocast mixed precision)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "fp8"}))
      ->capture_default_str();
  command.add_option("--optimizer", optimizer, "sgd | momentum | adam | adamw (default: momentum for vision, adamw "
                                               "for language models)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam", "adamw"}));
  command.add_flag("--checkpointing", checkpointing, "Activation checkpointing per block");
  command.add_flag("--channels-last", channels_last,
                   "NHWC activations (model.to(memory_format=torch.channels_last)): tensor-core convolutions "
                   "skip the NCHW transposes");
  command.add_option("--lora", lora, "Fine-tune LoRA adapters of this rank; the base stays frozen")
      ->check(CLI::Range(1, 4096));
  command.add_flag("--qlora", qlora, "LoRA over a 4-bit NF4 base (rank 16 unless --lora)");
  command.add_option("--gpus", gpus, "GPUs per node (data parallel)")->check(CLI::Range(1, 1024))->capture_default_str();
  command.add_option("--nodes", nodes, "Nodes")->check(CLI::Range(1, 100000))->capture_default_str();
  command.add_option("--parallel", parallel, "ddp | fsdp (FSDP shards weights, gradients and optimizer state)")
      ->check(CLI::IsMember({"ddp", "fsdp"}))
      ->capture_default_str();
  command.add_option("--dataset-size", dataset_size, "Samples per epoch (default: ImageNet-1k's 1,281,167 for vision)")
      ->check(CLI::Range(1.0, 1e12));  // 10^12: 70,000 times ImageNet-21k's 14.2 million images
  command.add_option("--network-gbps", network_gbps, "Network per node in Gb/s when --nodes > 1 (default 100)")
      ->check(CLI::Range(0.001, 1e6));  // 1 Mb/s to 1 Pb/s
  command.add_option("--calibration", calibration_file, "gpusage bench results (JSON) to calibrate step time")
      ->check(CLI::ExistingFile);
  command.add_flag("--no-flash-attention", no_flash_attention, "Attention keeps its s x s probabilities");
}

workload::Workload RunOptions::build_workload() const {
  workload::WorkloadOptions options;
  options.resolution = resolution;
  options.seq_len = seq_len;
  options.flash_attention = !no_flash_attention;
  if (!hf_config.empty()) {
    if (!model.empty()) throw InputError("give either a MODEL or --hf-config, not both");
    return workload::from_hf_config(io::read_file(hf_config, "Hugging Face config"), options);
  }
  if (model.empty()) throw InputError("which model? give a zoo id (e.g. resnet50) or --hf-config FILE");
  return workload::build(model, options);
}

estimate::TrainingConfig RunOptions::training_config(const workload::Workload& w) const {
  estimate::TrainingConfig c;
  c.batch_per_gpu = 1;
  c.precision = *catalog::parse_precision(precision);
  std::string name = optimizer;
  if (name.empty()) name = w.domain == workload::Domain::vision ? "momentum" : "adamw";
  c.optimizer = *estimate::parse_optimizer(name);
  c.checkpointing = checkpointing;
  c.channels_last = channels_last;
  c.lora_rank = lora;
  c.qlora = qlora;
  c.gpus_per_node = gpus;
  c.nodes = nodes;
  c.parallel = parallel == "fsdp" ? estimate::Parallel::fsdp : estimate::Parallel::ddp;
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
