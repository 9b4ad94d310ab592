// TrainingSetup::to_args and to_flags: the setup printed back as the flags that make it, in the binder's
// names (cli/setup_binder.cpp). Every field appears here once; tests/unit/cli/setup_flags_test.cpp parses
// what this prints for many generated setups and compares the result with the setup.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/common/text.hpp"
#include "core/setup/training_setup.hpp"

namespace gpusage::setup {

namespace {

// The flags of one setup, built in field order.
class Args {
 public:
  void text(const char* flag, const std::string& value, const std::string& fallback) {
    if (value != fallback) add(flag, value);
  }
  template <typename T>
  void number(const char* flag, const std::optional<T>& value) {
    if (value) add(flag, fmt::format("{}", *value));  // {}: the shortest form that reads back to the same value
  }
  template <typename T>
  void number(const char* flag, T value, T fallback) {
    if (value != fallback) add(flag, fmt::format("{}", value));
  }
  void flag(const char* name, bool on) {
    if (on) args_.emplace_back(name);
  }
  void add(const char* flag, const std::string& value) {
    args_.emplace_back(flag);
    args_.push_back(value);
  }
  std::vector<std::string> take() { return std::move(args_); }

 private:
  std::vector<std::string> args_;
};

// A POSIX shell word: as it is when it holds only characters no shell treats specially, else single-quoted.
std::string shell_word(const std::string& arg) {
  const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./:,=+@%").find(c) != std::string_view::npos;
  });
  if (plain) return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::vector<std::string> TrainingSetup::to_args() const {
  const TrainingSetup d;  // the defaults: a field equal to its default is not printed
  Args a;
  a.text("--model", model, d.model);
  a.text("--hf-config", hf_config, d.hf_config);
  a.text("--workload", workload_file, d.workload_file);
  a.number("--resolution", resolution);
  a.number("--seq-len", seq_len);
  a.number("--tokens-per-sample", tokens_per_sample);
  a.add("--precision", precision);  // always: it decides every number
  a.text("--batch", batch, d.batch);
  a.number("--target-batch", target_batch);
  a.number("--accumulate", accumulate);
  a.text("--optimizer", optimizer, d.optimizer);
  a.text("--optimizer-impl", optimizer_impl, d.optimizer_impl);
  a.flag("--optimizer-in-backward", optimizer_in_backward);
  a.text("--master-weights", master_weights, d.master_weights);
  a.text("--loss", loss, d.loss);
  a.text("--kernels", kernels, d.kernels);
  a.text("--fp8-recipe", fp8_recipe, d.fp8_recipe);
  a.flag("--low-precision-norm", low_precision_norm);
  a.text("--attention-kernel", attention_kernel, d.attention_kernel);
  a.text("--checkpointing", checkpointing, d.checkpointing);
  a.flag("--clip-grad-norm", clip_grad_norm);
  a.flag("--channels-last", channels_last);
  a.flag("--no-flash-attention", no_flash_attention);
  a.number("--lora", lora);
  a.flag("--qlora", qlora);
  a.flag("--no-kbit-upcast", no_kbit_upcast);
  a.text("--lora-targets", lora_targets, d.lora_targets);
  a.number("--lora-dropout", lora_dropout);
  a.number("--gpus", gpus, d.gpus);
  a.number("--nodes", nodes, d.nodes);
  a.text("--parallel", parallel, d.parallel);
  if (!offload.empty()) a.add("--offload", text::join(offload, ","));
  a.text("--interconnect", interconnect, d.interconnect);
  a.number("--network-gbps", network_gbps, d.network_gbps);
  a.number("--dataset-size", dataset_size, d.dataset_size);
  a.text("--gpu", gpu, d.gpu);
  a.number("--gpu-power", gpu_power_w);
  a.number("--gpu-memory", gpu_memory_gb);
  a.text("--calibration", calibration_file, d.calibration_file);
  return a.take();
}

std::string TrainingSetup::to_flags() const {
  std::string out;
  for (const std::string& arg : to_args()) out += " " + shell_word(arg);
  return out;
}

}  // namespace gpusage::setup
