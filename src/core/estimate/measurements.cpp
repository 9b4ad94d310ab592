// Published measurements as validate reads them: the CSV parser with its columns, and what a row says about
// itself (software era, framework, cross-validation group, model family). validate_rows.cpp predicts them.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include "core/common/error.hpp"
#include "core/common/text.hpp"
#include "core/estimate/validate.hpp"

namespace gpusage::estimate {

namespace {

// The first month of lazy CUDA module loading by default (PyTorch 1.13, Measurement::loads_modules_eagerly).
constexpr const char* kLazyModuleLoadingSince = "2022-11";

// Measurement::superlinear for every data-parallel throughput row that has a single-GPU counterpart: the same
// source (repository or site), framework release, model, GPU, precision, batch, sequence and layout.
void mark_superlinear(std::vector<Measurement>& rows) {
  auto key = [](const Measurement& m) {
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", cv_group_of(m, CvGroup::source), m.framework, m.model,
                       m.gpu, m.precision, m.batch_per_gpu, m.resolution.value_or(0), m.seq_len.value_or(0),
                       m.tokens.value_or(0), m.task, m.channels_last.value_or(false),
                       m.flash_attention ? (*m.flash_attention ? "flash" : "eager") : "", m.pure_16bit);
  };
  std::map<std::string, double> single;
  for (const Measurement& m : rows) {
    if (m.metric != Metric::train_throughput || m.num_gpus != 1) continue;
    double& best = single[key(m)];
    best = std::max(best, m.value);
  }
  for (Measurement& m : rows) {
    if (m.metric != Metric::train_throughput || m.num_gpus == 1) continue;
    auto it = single.find(key(m));
    m.superlinear = it != single.end() && m.value > it->second * (1 + kSuperlinearTolerance);
  }
}

}  // namespace

// PyTorch 1.13 (October 2022, pytorch/pytorch#86509, on its release branch) sets CUDA_MODULE_LOADING=LAZY,
// which needs CUDA >= 11.7; software before it loads every kernel into the CUDA context at start
// (constants.hpp). Known from the row's date, else from the versions its framework names: "PyTorch 1.8.0a0"
// (a pre-release counts as before its release), "NGC 21.07" / "20.10 NGC" containers, "CUDA 11.3".
// A row that says nothing is taken as today's software.
bool Measurement::loads_modules_eagerly() const {
  if (!software_date.empty()) return software_date < kLazyModuleLoadingSince;
  std::smatch match;
  const std::string& f = framework;
  static const std::regex pytorch(R"(PyTorch (\d+)\.(\d+)(\.\d+a0)?)");
  if (std::regex_search(f, match, pytorch)) {
    const int major = std::stoi(match[1]), minor = std::stoi(match[2]);
    return major < 1 || (major == 1 && (minor < 13 || (minor == 13 && match[3].matched)));
  }
  static const std::regex container(R"((?:NGC \(?(\d\d)\.(\d\d))|(?:(\d\d)\.(\d\d) NGC))");
  if (std::regex_search(f, match, container)) {
    const int year = std::stoi(match[1].matched ? match[1] : match[3]);
    const int month = std::stoi(match[2].matched ? match[2] : match[4]);
    return year < 22 || (year == 22 && month < 11);
  }
  static const std::regex cuda(R"(CUDA (\d+)\.(\d+))");
  if (std::regex_search(f, match, cuda)) {
    const int major = std::stoi(match[1]), minor = std::stoi(match[2]);
    return major < 11 || (major == 11 && minor < 7);
  }
  return false;
}

bool Measurement::other_framework() const {
  const std::string f = text::to_lower(framework);
  if (f.find("pytorch") != std::string::npos) return false;
  // llm.q and llm.c: C++/CUDA trainers with their own buffers, recompute and fused kernels, no caching allocator.
  for (const char* name : {"tensorflow", "mxnet", "paddle", "jax", "llm.q", "llm.c"}) {
    if (f.find(name) != std::string::npos) return true;
  }
  // MLPerf submissions name TensorFlow by its short form and version ("tf2.0", "tf1.15").
  return f.size() > 2 && f.compare(0, 2, "tf") == 0 && std::isdigit(static_cast<unsigned char>(f[2]));
}

const char* to_string(Metric metric) {
  switch (metric) {
    case Metric::train_throughput: return "train_throughput";
    case Metric::peak_memory: return "peak_memory";
    case Metric::max_batch: return "max_batch";
    case Metric::peak_allocated: return "peak_allocated";
    case Metric::peak_reserved: return "peak_reserved";
  }
  return "?";
}

std::optional<CvGroup> parse_cv_group(const std::string& name) {
  if (name == "gpu") return CvGroup::gpu;
  if (name == "source") return CvGroup::source;
  if (name == "model") return CvGroup::model;
  return std::nullopt;
}

const char* to_string(CvGroup group) {
  switch (group) {
    case CvGroup::gpu: return "gpu";
    case CvGroup::source: return "source";
    case CvGroup::model: return "model";
  }
  return "?";
}

std::string cv_group_of(const Measurement& m, CvGroup group) {
  switch (group) {
    case CvGroup::gpu: return m.gpu;
    case CvGroup::model: return m.model;
    case CvGroup::source: break;
  }
  std::string s = text::to_lower(m.source);
  for (const char* scheme : {"https://", "http://"}) {
    if (s.starts_with(scheme)) s = s.substr(std::string(scheme).size());
  }
  if (s.starts_with("www.")) s = s.substr(4);
  const auto first = s.find('/');
  const std::string host = s.substr(0, first);
  if (host == "github.com" && first != std::string::npos) {
    const auto second = s.find('/', first + 1);
    const auto third = second == std::string::npos ? second : s.find('/', second + 1);
    return s.substr(0, third == std::string::npos ? s.find_first_of("#?") : third);
  }
  return host.empty() ? "unknown" : host;
}

std::string model_family(const std::string& model_id) {
  std::string family;
  for (char c : model_id) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    family += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (family == "gpt") return "gpt2";
  return family.empty() ? model_id : family;
}

namespace {

// One data line of the CSV, read by column name; every error names the file, the line and the column.
class CsvRow {
 public:
  CsvRow(const std::map<std::string, std::size_t>& column, std::vector<std::string> fields, const std::string& origin,
         int line_number)
      : column_(column), fields_(std::move(fields)), origin_(origin), line_(line_number) {}

  int line() const { return line_; }
  // "file.csv:12: " before a message about this line.
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw InputError(fmt::format("{}:{}: {}", origin_, line_, fmt::format(format, std::forward<Args>(args)...)));
  }

  std::string get(const char* name) const {
    auto it = column_.find(name);
    return it != column_.end() && it->second < fields_.size() ? text::trim(fields_[it->second]) : "";
  }
  std::string text_field(const char* name) const {
    std::string v = get(name);
    if (v.empty()) fail("'{}' is empty", name);
    return v;
  }
  std::optional<double> number(const char* name, bool required) const {
    std::string s = get(name);
    if (s.empty()) {
      if (required) fail("'{}' is empty", name);
      return std::nullopt;
    }
    char* e = nullptr;
    double v = std::strtod(s.c_str(), &e);
    if (*e != '\0' || !(v > 0) || !std::isfinite(v)) fail("'{}' = '{}' is not a positive number", name, s);
    return v;
  }
  // Counts (batch, GPUs, pixels, tokens) are whole numbers within what plan accepts.
  std::optional<int> count(const char* name, bool required) const {
    auto v = number(name, required);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v) || *v > 1e7) fail("'{}' = '{}' is not a whole number from 1 to 10000000", name, get(name));
    return static_cast<int>(*v);
  }
  std::string choice(const char* name, std::initializer_list<const char*> accepted) const {
    const std::string v = get(name);
    if (v.empty()) return v;
    for (const char* a : accepted) {
      if (v == a) return v;
    }
    std::string list;
    for (const char* a : accepted) list += std::string(list.empty() ? "" : ", ") + a;
    fail("{} '{}' is not one of {}", name, v, list);
  }

 private:
  const std::map<std::string, std::size_t>& column_;
  std::vector<std::string> fields_;
  const std::string& origin_;
  int line_;
};

// The header: each column's index, every required column present, none named twice.
std::map<std::string, std::size_t> read_header(const std::vector<std::string>& fields, const std::string& origin,
                                               int line_number) {
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    // A second column of the same name would silently win over the first.
    if (!column.emplace(text::trim(fields[i]), i).second)
      throw InputError(
          fmt::format("{}:{}: the header names the column '{}' twice", origin, line_number, text::trim(fields[i])));
  }
  for (const char* required : {"model", "gpu", "precision", "batch_per_gpu", "metric", "value"}) {
    if (!column.count(required)) {
      throw InputError(
          fmt::format("{}:{}: header lacks the column '{}' (needed: model, gpu, precision, "
                      "batch_per_gpu, metric, value)",
                      origin, line_number, required));
    }
  }
  return column;
}

// What was run and what was measured: model, card, precision, batch and its shape, the metric and its value.
void read_run(Measurement& m, const CsvRow& row) {
  m.model = row.text_field("model");
  m.gpu = row.text_field("gpu");
  m.precision = row.text_field("precision");
  m.batch_per_gpu = *row.count("batch_per_gpu", true);
  m.num_gpus = row.count("num_gpus", false).value_or(1);
  m.gpus_per_node = row.count("gpus_per_node", false);
  if (m.gpus_per_node && (*m.gpus_per_node > m.num_gpus || m.num_gpus % *m.gpus_per_node != 0)) {
    row.fail("gpus_per_node {} does not divide num_gpus {} into whole nodes", *m.gpus_per_node, m.num_gpus);
  }
  m.resolution = row.count("resolution", false);
  m.seq_len = row.count("seq_len", false);
  m.tokens = row.count("tokens", false);
  if (m.tokens && (!m.seq_len || *m.tokens > *m.seq_len)) {
    row.fail("tokens {} needs a seq_len at least as long (the padded length)", *m.tokens);
  }
  m.accumulation = row.count("accumulation", false).value_or(1);
  m.fails_at = row.count("fails_at", false);
  const std::string metric =
      row.choice("metric", {"train_throughput", "peak_memory", "max_batch", "peak_allocated", "peak_reserved"});
  if (metric.empty()) row.fail("'metric' is empty");
  m.metric = metric == "train_throughput" ? Metric::train_throughput
             : metric == "peak_memory"    ? Metric::peak_memory
             : metric == "peak_allocated" ? Metric::peak_allocated
             : metric == "peak_reserved"  ? Metric::peak_reserved
                                          : Metric::max_batch;
  m.value = *row.number("value", true);
  if (m.metric == Metric::max_batch && m.fails_at && *m.fails_at <= m.value) {
    row.fail("fails_at {} is not above the batch that ran ({})", *m.fails_at, m.value);
  }
}

// Where the figure comes from and the software that made it.
void read_provenance(Measurement& m, const CsvRow& row) {
  m.source = row.get("source");
  m.framework = row.get("framework");
  m.software_date = row.get("software_date");
  if (!m.software_date.empty() && (m.software_date.size() != 7 || m.software_date[4] != '-' ||
                                   !std::all_of(m.software_date.begin(), m.software_date.begin() + 4, ::isdigit) ||
                                   !std::isdigit(static_cast<unsigned char>(m.software_date[5])) ||
                                   !std::isdigit(static_cast<unsigned char>(m.software_date[6])))) {
    row.fail("software_date '{}' is not YYYY-MM", m.software_date);
  }
}

// How the GPUs share the work, what lives on the host, and the kernels' layout and fusion.
void read_execution(Measurement& m, const CsvRow& row) {
  const std::string attention = row.choice("attention", {"flash", "eager"});
  if (!attention.empty()) m.flash_attention = attention == "flash";
  m.parallel =
      parse_parallel(row.choice("parallel", {"ddp", "zero1", "zero2", "fsdp", "hsdp"})).value_or(Parallel::ddp);
  // What lives in host memory, '+'-joined (the CSV's fields hold no commas): plan's --offload.
  const std::string offload =
      row.choice("offload", {"optimizer", "params", "activations", "optimizer+activations", "params+activations"});
  m.offload.optimizer = offload.starts_with("optimizer");
  m.offload.params = offload.starts_with("params");
  m.offload.activations = offload.ends_with("activations");
  if (!offload_allowed(m.offload, m.parallel)) row.fail("offload params needs parallel fsdp or hsdp");
  m.interconnect = parse_interconnect(row.choice("interconnect", {"pcie", "nvlink"})).value_or(Interconnect::card);
  const std::string layout = row.choice("layout", {"nhwc", "nchw"});
  if (!layout.empty()) m.channels_last = layout == "nhwc";
  m.fused_kernels = row.choice("kernels", {"eager", "fused"}) == "fused";
  m.task = row.choice("task", {"squad", "pretrain", "finetune"});
  m.pure_16bit = row.choice("amp", {"autocast", "o2"}) == "o2";
}

void read_checkpointing(Measurement& m, const CsvRow& row) {
  m.checkpointing = row.get("checkpointing");
  if (m.checkpointing.starts_with("every:")) {
    const std::string n = m.checkpointing.substr(6);
    if (n.empty() || n.size() > 4 || !std::all_of(n.begin(), n.end(), ::isdigit) || std::stoi(n) < 1) {
      row.fail("checkpointing '{}' is not every:N with N from 1 to 9999", m.checkpointing);
    }
  } else {
    m.checkpointing = row.choice("checkpointing", {"none", "full", "selective", "every:N"});
    if (m.checkpointing == "every:N") row.fail("checkpointing 'every:N' needs a number for N");
  }
}

// The fine-tuning recipe, as plan's options: optimizer and its implementation, master weights, loss, LoRA and
// QLoRA.
void read_recipe(Measurement& m, const CsvRow& row) {
  read_checkpointing(m, row);
  if (const std::string o = row.get("optimizer"); !o.empty()) {
    m.optimizer = parse_optimizer(o);
    if (!m.optimizer) row.fail("optimizer '{}' is not one of {}", o, optimizer_names());
  }
  m.master_weights =
      row.choice("master_weights", {"fp32", "bf16"}) == "bf16" ? MasterWeights::bf16 : MasterWeights::fp32;
  m.loss = parse_loss(row.choice("loss", {"plain", "plain16", "chunked", "fused"})).value_or(LossImpl::plain);
  m.lora_rank = row.count("lora_rank", false);
  m.qlora = row.choice("qlora", {"yes", "no"}) == "yes";
  m.optimizer_impl = parse_optimizer_impl(row.choice("optimizer_impl", {"fused", "foreach", "loop"}));
  m.fp8_recipe = parse_fp8_recipe(row.choice("fp8_recipe", {"delayed", "tensorwise", "producer-amax"}))
                     .value_or(Fp8Recipe::delayed);
  m.attention_kernel = parse_attention_kernel_generation(row.choice("attention_kernel", {"flash2", "flash1", "cudnn"}));
  m.low_precision_norm = row.choice("low_precision_norm", {"yes", "no"}) == "yes";
  m.optimizer_in_backward = row.choice("optimizer_in_backward", {"yes", "no"}) == "yes";
  m.kbit_upcast = row.choice("kbit_upcast", {"yes", "no"}) != "no";
  if (!m.kbit_upcast && !m.qlora) row.fail("kbit_upcast 'no' needs qlora yes");
  m.clip_grad_norm = row.choice("clip_grad_norm", {"yes", "no"}) == "yes";
  m.lora_targets = parse_lora_targets(row.choice("lora_targets", {"attn", "mlp", "all"})).value_or(LoraTargets::all);
  if (const auto dropout = row.number("lora_dropout", false)) {
    if (*dropout >= 1 || (!m.lora_rank && !m.qlora)) {
      row.fail("lora_dropout '{}' needs lora_rank or qlora and a probability below 1", row.get("lora_dropout"));
    }
    m.lora_dropout = *dropout;
  }
}

}  // namespace

std::vector<Measurement> parse_measurements(const std::string& csv_text, const std::string& origin) {
  std::vector<Measurement> out;
  std::map<std::string, std::size_t> column;
  int line_number = 0;
  std::size_t start = 0;
  while (start < csv_text.size()) {
    std::size_t end = csv_text.find('\n', start);
    if (end == std::string::npos) end = csv_text.size();
    std::string line = csv_text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (text::trim(line).empty() || line[0] == '#') continue;
    auto fields = text::csv_fields(line);
    if (column.empty()) {
      column = read_header(fields, origin, line_number);
      continue;
    }
    const CsvRow row(column, std::move(fields), origin, line_number);
    Measurement m;
    m.line = line_number;
    read_run(m, row);
    read_provenance(m, row);
    read_execution(m, row);
    read_recipe(m, row);
    m.gpu_memory_gb = row.number("gpu_memory_gb", false);  // the card's own, when it is a variant
    m.gpu_power_w = row.number("gpu_power_w", false);      // a power limit below the card's board power
    m.data = row.choice("data", {"synthetic", "real"});
    out.push_back(std::move(m));
  }
  if (column.empty()) throw InputError(fmt::format("{}: empty file (expected a CSV header)", origin));
  mark_superlinear(out);
  return out;
}

}  // namespace gpusage::estimate
