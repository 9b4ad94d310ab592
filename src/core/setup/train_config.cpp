// --train-config's mapping of a framework's fields to gpusage options (train_config.hpp). One table of handlers
// per format; the Hugging Face Trainer's fields are shared by axolotl, LLaMA-Factory and the Trainer's JSON.
#include "core/setup/train_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/setup/train_config_mapping.hpp"
#include "core/workload/hub_models.hpp"

namespace gpusage::setup {

using i18n::tr;
using i18n::trf;
using text::split;
using text::to_lower;

namespace detail {

std::string shown(const ConfigField& f) {
  if (f.is_list) return fmt::format("{}: [{}]", f.key, fmt::join(f.list, ", "));
  return fmt::format("{}: {}", f.key, f.text);
}

bool truthy(const std::string& text) {
  const std::string t = to_lower(text);
  return t == "true" || t == "yes" || t == "1" || t == "on";
}

bool falsy(const std::string& text) {
  const std::string t = to_lower(text);
  return t == "false" || t == "no" || t == "0" || t == "off";
}

void Mapping::set(const ConfigField& f, std::vector<OptionValue> options, std::string note) {
  layer.mapped.push_back(LayerEntry{shown(f), std::move(options), std::move(note), {}});
}
void Mapping::note(const ConfigField& f, std::string note) {
  layer.mapped.push_back(LayerEntry{shown(f), {}, std::move(note), {}});
}
void Mapping::unmodelled(const ConfigField& f, std::string why) {
  layer.unmodelled.push_back(LayerEntry{shown(f), {}, std::move(why), {}});
}

namespace {

// A Hugging Face OptimizerNames value, or a torchtune optimizer component, as gpusage's --optimizer and
// --optimizer-impl; nullopt when gpusage has no model of it.
std::optional<std::vector<OptionValue>> optimizer_options(const std::string& name) {
  static const std::map<std::string, std::vector<OptionValue>> kNames = {
      {"adamw_torch", {{"--optimizer", "adamw"}, {"--optimizer-impl", "foreach"}}},
      {"adamw_torch_fused", {{"--optimizer", "adamw"}, {"--optimizer-impl", "fused"}}},
      {"adamw_apex_fused", {{"--optimizer", "adamw"}, {"--optimizer-impl", "fused"}}},
      {"adamw_hf", {{"--optimizer", "adamw"}, {"--optimizer-impl", "loop"}}},
      {"adamw_8bit", {{"--optimizer", "adamw8bit"}}},
      {"adamw_bnb_8bit", {{"--optimizer", "adamw8bit"}}},
      {"paged_adamw_8bit", {{"--optimizer", "paged_adamw8bit"}}},
      {"paged_adamw_32bit", {{"--optimizer", "paged_adamw"}}},
      {"paged_adamw", {{"--optimizer", "paged_adamw"}}},
      {"adafactor", {{"--optimizer", "adafactor"}}},
      {"lion_32bit", {{"--optimizer", "lion"}}},
      {"paged_lion_32bit", {{"--optimizer", "lion"}}},
      {"sgd", {{"--optimizer", "sgd"}}},
      {"torch.optim.adamw", {{"--optimizer", "adamw"}}},
      {"torch.optim.adam", {{"--optimizer", "adam"}}},
      {"torch.optim.sgd", {{"--optimizer", "sgd"}}},
      {"bitsandbytes.optim.pagedadamw8bit", {{"--optimizer", "paged_adamw8bit"}}},
      {"bitsandbytes.optim.pagedadamw", {{"--optimizer", "paged_adamw"}}},
      {"bitsandbytes.optim.adamw8bit", {{"--optimizer", "adamw8bit"}}},
      {"torchao.optim.adamw8bit", {{"--optimizer", "adamw8bit"}}},
  };
  const auto it = kNames.find(to_lower(name));
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

}  // namespace

void map_optimizer(const ConfigField& f, Mapping& m) {
  if (auto options = optimizer_options(f.text)) return m.set(f, *options);
  m.unmodelled(f, tr("gpusage models sgd, momentum, adam(w), 8-bit and paged AdamW, adafactor and lion"));
}

namespace {

// DeepSpeed's ZeRO stage and offload, from the JSON file the field names when it can be read, else from its
// name (zero3.json, ds_z2_config.json, zero3_offload.json).
void map_deepspeed(const ConfigField& f, Mapping& m) {
  int stage = 0;
  bool offload_optimizer = false, offload_params = false;
  std::filesystem::path file = f.text;
  if (!std::filesystem::exists(file) && file.is_relative()) file = m.directory / f.text;
  std::ifstream in(file);
  const nlohmann::json ds = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  std::string how;
  if (ds.is_object() && ds.contains("zero_optimization")) {
    const nlohmann::json& z = ds["zero_optimization"];
    stage = z.value("stage", 0);
    auto device = [&](const char* key) {
      return z.contains(key) && z[key].is_object() && z[key].value("device", std::string("none")) != "none";
    };
    offload_optimizer = device("offload_optimizer");
    offload_params = device("offload_param");
    how = tr("read from the DeepSpeed file");
  } else {
    const std::string name = to_lower(std::filesystem::path(f.text).filename().string());
    for (int s : {3, 2, 1}) {
      for (const std::string& form : {fmt::format("zero{}", s), fmt::format("z{}", s), fmt::format("stage{}", s)}) {
        if (stage == 0 && name.find(form) != std::string::npos) stage = s;
      }
    }
    offload_optimizer = name.find("offload") != std::string::npos;
    offload_params = offload_optimizer && stage == 3 && name.find("offload_all") != std::string::npos;
    how = tr("told by the file's name");
  }
  if (stage == 0) return m.unmodelled(f, tr("no ZeRO stage found in the file or its name"));
  static const char* kParallel[] = {"ddp", "zero1", "zero2", "fsdp"};
  std::vector<OptionValue> options{{"--parallel", kParallel[std::clamp(stage, 0, 3)]}};
  if (offload_params) {
    options.push_back({"--offload", "params"});
  } else if (offload_optimizer) {
    options.push_back({"--offload", "optimizer"});
  }
  m.set(f, options, trf("ZeRO stage {}, {}", stage, how));
}

void map_fsdp(const ConfigField& f, Mapping& m) {
  const std::string t = to_lower(f.is_list ? fmt::format("{}", fmt::join(f.list, " ")) : f.text);
  if (t.empty() || falsy(t)) return;
  std::vector<OptionValue> options{{"--parallel", t.find("shard_grad_op") != std::string::npos  ? "zero2"
                                                  : t.find("hybrid_shard") != std::string::npos ? "hsdp"
                                                                                                : "fsdp"}};
  if (t.find("offload") != std::string::npos) options.push_back({"--offload", "params"});
  m.set(f, options);
}

// A model directory or config.json on this machine is --hf-config; a Hub id gpusage knows is --model; a
// re-upload under another organization (NousResearch/Meta-Llama-3-8B, unsloth/...) is planned by its name.
void map_model(const ConfigField& f, Mapping& m) {
  if (std::filesystem::exists(f.text)) return m.set(f, {{"--hf-config", f.text}});
  const std::size_t slash = f.text.find('/');
  if (slash != std::string::npos && !workload::detail::resolve_name(f.text) &&
      workload::detail::resolve_name(f.text.substr(slash + 1))) {
    return m.set(f, {{"--model", f.text.substr(slash + 1)}},
                 tr("planned by its name: gpusage does not know this organization's copy"));
  }
  m.set(f, {{"--model", f.text}});
}

void set_if(const ConfigField& f, Mapping& m, bool on, std::vector<OptionValue> options) {
  if (on) return m.set(f, std::move(options));
  m.note(f, tr("off: nothing to set"));
}

}  // namespace

std::map<std::string, Handler> trainer_handlers() {
  std::map<std::string, Handler> h;
  h["per_device_train_batch_size"] = [](const ConfigField& f, Mapping& m) { m.set(f, {{"--batch", f.text}}); };
  h["gradient_accumulation_steps"] = [](const ConfigField& f, Mapping& m) { m.set(f, {{"--accumulate", f.text}}); };
  for (const char* key : {"bf16", "fp16", "tf32", "pure_bf16"}) {
    h[key] = [](const ConfigField& f, Mapping& m) { m.deferred[f.key] = f; };
  }
  h["gradient_checkpointing"] = [](const ConfigField& f, Mapping& m) {
    if (to_lower(f.text) == "offload") {
      return m.set(f, {{"--checkpointing", "full"}, {"--offload", "activations"}});
    }
    m.set(f, {{"--checkpointing", truthy(f.text) ? "full" : "none"}});
  };
  h["optim"] = map_optimizer;
  h["deepspeed"] = map_deepspeed;
  h["fsdp"] = map_fsdp;
  h["max_grad_norm"] = [](const ConfigField& f, Mapping& m) {
    m.set(f, {{"--clip-grad-norm", f.text != "0" && f.text != "0.0" ? "true" : "false"}});
  };
  h["use_liger_kernel"] = [](const ConfigField& f, Mapping& m) {
    set_if(f, m, truthy(f.text), {{"--loss", "fused"}, {"--kernels", "fused"}});
  };
  h["torch_compile"] = [](const ConfigField& f, Mapping& m) { set_if(f, m, truthy(f.text), {{"--kernels", "fused"}}); };
  h["max_seq_length"] = [](const ConfigField& f, Mapping& m) { m.set(f, {{"--seq-len", f.text}}); };
  h["max_length"] = h["max_seq_length"];
  h["packing"] = [](const ConfigField& f, Mapping& m) {
    m.note(f, truthy(f.text) ? tr("every sample full at --seq-len, as gpusage plans it")
                             : tr("samples padded to their batch's longest: gpusage plans the longest, --seq-len"));
  };
  h["model_name_or_path"] = map_model;
  return h;
}

}  // namespace detail

std::string lora_targets_of(const std::vector<std::string>& modules) {
  static const std::vector<std::string> kAttn = {"q_proj",          "k_proj",   "v_proj", "o_proj", "output_proj",
                                                 "query_key_value", "qkv_proj", "dense",  "c_attn", "c_proj"};
  static const std::vector<std::string> kMlp = {"gate_proj",    "up_proj",      "down_proj", "w1",  "w2",
                                                "w3",           "gate_up_proj", "fc1",       "fc2", "dense_h_to_4h",
                                                "dense_4h_to_h"};
  bool attn = false, mlp = false;
  for (const std::string& raw : modules) {
    const std::string name = to_lower(raw);
    if (name == "all" || name == "all-linear" || name == "all_linear") return "all";
    if (std::find(kAttn.begin(), kAttn.end(), name) != kAttn.end()) attn = true;
    if (std::find(kMlp.begin(), kMlp.end(), name) != kMlp.end()) mlp = true;
  }
  if (attn && mlp) return "all";
  if (attn) return "attn";
  if (mlp) return "mlp";
  return "";
}

std::string recipe_of_format(const std::string& format) {
  if (format == "axolotl" || format == "llamafactory" || format == "torchtune") return format;
  return "";
}

std::string detect_config_format(const std::vector<ConfigField>& fields, const std::string& path) {
  auto has = [&](const std::string& key) {
    return std::any_of(fields.begin(), fields.end(), [&](const ConfigField& f) { return f.key == key; });
  };
  auto has_prefix = [&](const std::string& prefix) {
    return std::any_of(fields.begin(), fields.end(), [&](const ConfigField& f) { return f.key.rfind(prefix, 0) == 0; });
  };
  if (has("model._component_") || (has_prefix("tokenizer.") && has("tokenizer._component_"))) return "torchtune";
  if (has("base_model") || has("micro_batch_size") || has("sequence_len") || has("adapter")) return "axolotl";
  if (has("finetuning_type") || has("cutoff_len") || has("stage") || has("quantization_bit")) return "llamafactory";
  if (has("log_history") || has("global_step") || has("best_model_checkpoint")) return "trainer-state";
  if (has("per_device_train_batch_size") || has("output_dir") || has("optim") || has("model_name_or_path")) {
    return "hf-trainer";  // TrainingArguments, TRL's SFTConfig (trl sft --config)
  }
  throw InputError(
      trf("--train-config: '{}' is none of the formats read (axolotl, LLaMA-Factory or torchtune YAML, "
          "Hugging Face TrainingArguments or trainer_state JSON): no key such as base_model, "
          "finetuning_type, model._component_ or per_device_train_batch_size",
          path));
}

ConfigLayer read_train_config(const std::string& path) {
  const std::vector<ConfigField> fields = read_config_fields(path);
  using namespace detail;
  Mapping m;
  m.layer.path = path;
  m.layer.format = detect_config_format(fields, path);
  m.directory = std::filesystem::path(path).parent_path();
  std::map<std::string, Handler> handlers = trainer_handlers();
  for (auto& [key, handler] : format_handlers(m.layer.format)) handlers[key] = handler;
  for (const ConfigField& f : fields) {
    if (f.is_null || (f.text.empty() && !f.is_list)) continue;  // unset: the framework's default stands
    const auto it = handlers.find(f.key);
    if (it == handlers.end()) {
      m.layer.ignored.push_back(f.key);
    } else {
      it->second(f, m);
    }
  }
  finish_mapping(m);
  return m.layer;
}

}  // namespace gpusage::setup
