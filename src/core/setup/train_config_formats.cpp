// --train-config: each format's own fields (axolotl, LLaMA-Factory, torchtune, trainer_state.json), over the
// Hugging Face Trainer's that train_config.cpp maps, and the fields read together at the end (precision,
// torchtune's LoRA targets).
#include <fmt/format.h>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/setup/train_config_mapping.hpp"

namespace gpusage::setup::detail {

using i18n::tr;
using i18n::trf;
using text::split;
using text::to_lower;

namespace {

Handler to(const char* option) {
  return [option](const ConfigField& f, Mapping& m) { m.set(f, {{option, f.text}}); };
}

Handler when_true(std::vector<OptionValue> options) {
  return [options](const ConfigField& f, Mapping& m) {
    if (truthy(f.text)) return m.set(f, options);
    m.note(f, tr("off: nothing to set"));
  };
}

Handler defer() {
  return [](const ConfigField& f, Mapping& m) { m.deferred[f.key] = f; };
}

void map_targets(const ConfigField& f, Mapping& m, const std::vector<std::string>& modules) {
  const std::string targets = lora_targets_of(modules);
  if (targets.empty()) return m.unmodelled(f, tr("no q/k/v/o or gate/up/down projection named"));
  m.set(f, {{"--lora-targets", targets}});
}

std::map<std::string, Handler> axolotl() {
  std::map<std::string, Handler> h;
  h["base_model"] = trainer_handlers().at("model_name_or_path");
  h["adapter"] = [](const ConfigField& f, Mapping& m) {
    if (to_lower(f.text) == "qlora") return m.set(f, {{"--qlora", "true"}});
    if (to_lower(f.text) == "lora") return m.note(f, tr("LoRA of rank lora_r"));
    m.unmodelled(f, tr("gpusage models lora and qlora adapters"));
  };
  h["load_in_4bit"] = when_true({{"--qlora", "true"}});
  h["load_in_8bit"] = [](const ConfigField& f, Mapping& m) {
    if (truthy(f.text)) return m.unmodelled(f, tr("an 8-bit base (LLM.int8) is not modelled: planned 16-bit"));
    m.note(f, tr("off: nothing to set"));
  };
  h["sequence_len"] = to("--seq-len");
  h["sample_packing"] = trainer_handlers().at("packing");
  h["lora_r"] = to("--lora");
  h["lora_dropout"] = to("--lora-dropout");
  h["lora_target_linear"] = when_true({{"--lora-targets", "all"}});
  h["lora_target_modules"] = [](const ConfigField& f, Mapping& m) {
    map_targets(f, m, f.is_list ? f.list : split(f.text, ','));
  };
  h["micro_batch_size"] = to("--batch");
  h["optimizer"] = map_optimizer;
  h["flash_attention"] = [](const ConfigField& f, Mapping& m) {
    if (falsy(f.text)) return m.set(f, {{"--no-flash-attention", "true"}});
    m.note(f, tr("flash attention: gpusage's default"));
  };
  h["attn_implementation"] = [](const ConfigField& f, Mapping& m) {
    if (to_lower(f.text) == "eager") return m.set(f, {{"--no-flash-attention", "true"}});
    m.note(f, tr("a memory-efficient attention kernel: gpusage's default"));
  };
  h["liger_fused_linear_cross_entropy"] = when_true({{"--loss", "fused"}});
  h["cut_cross_entropy"] = when_true({{"--loss", "fused"}});
  for (const char* key : {"liger_rms_norm", "liger_rope", "liger_glu_activation"}) {
    h[key] = when_true({{"--kernels", "fused"}});
  }
  h["fsdp_config.fsdp_offload_params"] = when_true({{"--parallel", "fsdp"}, {"--offload", "params"}});
  h["fsdp_config.offload_params"] = h["fsdp_config.fsdp_offload_params"];
  h["fsdp_version"] = [](const ConfigField& f, Mapping& m) { m.set(f, {{"--parallel", "fsdp"}}); };
  return h;
}

std::map<std::string, Handler> llamafactory() {
  std::map<std::string, Handler> h;
  h["finetuning_type"] = [](const ConfigField& f, Mapping& m) {
    const std::string t = to_lower(f.text);
    if (t == "full") return m.note(f, tr("full fine-tuning: gpusage's default"));
    if (t == "lora") return m.note(f, tr("LoRA of rank lora_rank (8 when not given)"));
    m.unmodelled(f, tr("gpusage models full, lora and qlora fine-tuning"));
  };
  h["quantization_bit"] = [](const ConfigField& f, Mapping& m) {
    if (f.text == "4") return m.set(f, {{"--qlora", "true"}});
    m.unmodelled(f, tr("gpusage models a 4-bit NF4 base (QLoRA) only"));
  };
  h["lora_rank"] = to("--lora");
  h["lora_dropout"] = to("--lora-dropout");
  h["lora_target"] = [](const ConfigField& f, Mapping& m) {
    map_targets(f, m, f.is_list ? f.list : split(f.text, ','));
  };
  h["cutoff_len"] = to("--seq-len");
  h["neat_packing"] = trainer_handlers().at("packing");
  h["disable_gradient_checkpointing"] = [](const ConfigField& f, Mapping& m) {
    m.set(f, {{"--checkpointing", truthy(f.text) ? "none" : "full"}});
  };
  h["use_unsloth_gc"] = when_true({{"--checkpointing", "full"}, {"--offload", "activations"}});
  h["enable_liger_kernel"] = when_true({{"--loss", "fused"}, {"--kernels", "fused"}});
  h["use_unsloth"] = when_true({{"--loss", "fused"}, {"--kernels", "fused"}});
  h["flash_attn"] = [](const ConfigField& f, Mapping& m) {
    const std::string t = to_lower(f.text);
    if (t == "disabled" || t == "eager") return m.set(f, {{"--no-flash-attention", "true"}});
    m.note(f, tr("a memory-efficient attention kernel: gpusage's default"));
  };
  h["upcast_layernorm"] = [](const ConfigField& f, Mapping& m) {
    if (truthy(f.text)) return m.unmodelled(f, tr("fp32 norm weights alone (a few MB) are not modelled"));
    m.note(f, tr("off: nothing to set"));
  };
  return h;
}

std::map<std::string, Handler> torchtune() {
  std::map<std::string, Handler> h;
  // torchtune.models.llama3_1.qlora_llama3_1_8b: the builder's name is the model (llama3.1-8b) and the method.
  h["model._component_"] = [](const ConfigField& f, Mapping& m) {
    std::string builder = f.text.substr(f.text.rfind('.') + 1);
    std::vector<OptionValue> options;
    if (builder.rfind("qlora_", 0) == 0) {
      builder = builder.substr(6);
      options.push_back({"--qlora", "true"});
    } else if (builder.rfind("lora_", 0) == 0) {
      builder = builder.substr(5);
    }
    // llama3_1_8b -> llama3.1-8b: a number after the family is its minor version; the last part is the size.
    const std::vector<std::string> parts = split(builder, '_');
    std::string name = parts.front();
    for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
      const bool minor = !parts[i].empty() && std::isdigit(static_cast<unsigned char>(parts[i][0])) &&
                         parts[i].find_first_not_of("0123456789") == std::string::npos;
      name += (minor ? "." : "-") + parts[i];
    }
    if (parts.size() > 1) name += "-" + parts.back();
    options.insert(options.begin(), {"--model", name});
    m.set(f, options);
  };
  h["model.lora_rank"] = to("--lora");
  h["model.lora_dropout"] = to("--lora-dropout");
  h["model.lora_attn_modules"] = defer();
  h["model.apply_lora_to_mlp"] = defer();
  h["tokenizer.max_seq_len"] = to("--seq-len");
  h["dataset.packed"] = trainer_handlers().at("packing");
  h["batch_size"] = to("--batch");
  h["optimizer._component_"] = map_optimizer;
  h["optimizer.fused"] = [](const ConfigField& f, Mapping& m) {
    m.set(f, {{"--optimizer-impl", truthy(f.text) ? "fused" : "foreach"}});
  };
  h["optimizer_in_bwd"] = when_true({{"--optimizer-in-backward", "true"}});
  h["loss._component_"] = [](const ConfigField& f, Mapping& m) {
    if (f.text.find("Chunked") != std::string::npos || f.text.find("LinearCrossEntropy") != std::string::npos) {
      return m.set(f, {{"--loss", "chunked"}});
    }
    m.set(f, {{"--loss", "plain16"}}, tr("cross-entropy on the model's bf16 logits"));
  };
  h["enable_activation_checkpointing"] = [](const ConfigField& f, Mapping& m) {
    m.set(f, {{"--checkpointing", truthy(f.text) ? "full" : "none"}});
  };
  h["enable_activation_offloading"] = when_true({{"--offload", "activations"}});
  h["compile"] = when_true({{"--kernels", "fused"}});
  h["dtype"] = defer();
  h["clip_grad_norm"] = [](const ConfigField& f, Mapping& m) { m.set(f, {{"--clip-grad-norm", "true"}}); };
  h["fsdp_cpu_offload"] = when_true({{"--offload", "params"}});
  return h;
}

std::string field_text(const Mapping& m, const char* key) {
  const auto it = m.deferred.find(key);
  return it == m.deferred.end() ? std::string() : to_lower(it->second.text);
}

void finish_precision(Mapping& m) {
  std::vector<std::string> fields;
  for (const char* key : {"dtype", "pure_bf16", "bf16", "fp16", "tf32"}) {
    if (m.deferred.count(key)) fields.push_back(shown(m.deferred.at(key)));
  }
  if (fields.empty()) return;
  const ConfigField joined{fmt::format("{}", fmt::join(fields, ", ")), "", {}, false, false};
  auto say = [&](std::vector<OptionValue> options) {
    m.layer.mapped.push_back(LayerEntry{joined.key, std::move(options), {}, {}});
  };
  const std::string dtype = field_text(m, "dtype");
  if (dtype == "bf16" || truthy(field_text(m, "pure_bf16"))) {
    return say({{"--precision", "bf16"}, {"--master-weights", "bf16"}});
  }
  if (dtype == "fp32") return say({{"--precision", "fp32"}});
  const std::string bf16 = field_text(m, "bf16");
  if (truthy(bf16) || bf16 == "auto") return say({{"--precision", "bf16"}});
  if (truthy(field_text(m, "fp16"))) return say({{"--precision", "fp16"}});
  if (falsy(bf16) || falsy(field_text(m, "fp16"))) {
    return say({{"--precision", truthy(field_text(m, "tf32")) ? "tf32" : "fp32"}});
  }
}

}  // namespace

std::map<std::string, Handler> format_handlers(const std::string& format) {
  if (format == "axolotl") return axolotl();
  if (format == "llamafactory") return llamafactory();
  if (format == "torchtune") return torchtune();
  if (format == "trainer-state") {
    return {{"train_batch_size", [](const ConfigField& f, Mapping& m) { m.set(f, {{"--batch", f.text}}); }}};
  }
  return {};
}

void finish_mapping(Mapping& m) {
  finish_precision(m);
  const auto attn = m.deferred.find("model.lora_attn_modules");
  const auto mlp = m.deferred.find("model.apply_lora_to_mlp");
  if (attn != m.deferred.end() || mlp != m.deferred.end()) {
    std::vector<std::string> modules = attn != m.deferred.end() ? attn->second.list : std::vector<std::string>{};
    std::vector<std::string> fields;
    if (attn != m.deferred.end()) fields.push_back(shown(attn->second));
    if (mlp != m.deferred.end()) {
      fields.push_back(shown(mlp->second));
      if (truthy(mlp->second.text)) modules.push_back("gate_proj");
    }
    const ConfigField joined{fmt::format("{}", fmt::join(fields, ", ")), "", {}, false, false};
    const std::string targets = lora_targets_of(modules);
    if (!targets.empty()) m.layer.mapped.push_back(LayerEntry{joined.key, {{"--lora-targets", targets}}, {}, {}});
  }
}

}  // namespace gpusage::setup::detail
