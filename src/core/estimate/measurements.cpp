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
      for (std::size_t i = 0; i < fields.size(); ++i) {
        // A second column of the same name would silently win over the first.
        if (!column.emplace(text::trim(fields[i]), i).second)
          throw InputError(fmt::format("{}:{}: the header names the column '{}' twice", origin, line_number,
                                       text::trim(fields[i])));
      }
      for (const char* required : {"model", "gpu", "precision", "batch_per_gpu", "metric", "value"}) {
        if (!column.count(required)) {
          throw InputError(fmt::format("{}:{}: header lacks the column '{}' (needed: model, gpu, precision, "
                                       "batch_per_gpu, metric, value)",
                                       origin, line_number, required));
        }
      }
      continue;
    }
    auto get = [&](const char* name) -> std::string {
      auto it = column.find(name);
      return it != column.end() && it->second < fields.size() ? text::trim(fields[it->second]) : "";
    };
    auto number = [&](const char* name, bool required) -> std::optional<double> {
      std::string s = get(name);
      if (s.empty()) {
        if (required) throw InputError(fmt::format("{}:{}: '{}' is empty", origin, line_number, name));
        return std::nullopt;
      }
      char* e = nullptr;
      double v = std::strtod(s.c_str(), &e);
      if (*e != '\0' || !(v > 0) || !std::isfinite(v)) {
        throw InputError(fmt::format("{}:{}: '{}' = '{}' is not a positive number", origin, line_number, name, s));
      }
      return v;
    };
    // Counts (batch, GPUs, pixels, tokens) are whole numbers within what plan accepts.
    auto count = [&](const char* name, bool required) -> std::optional<int> {
      auto v = number(name, required);
      if (!v) return std::nullopt;
      if (*v != std::floor(*v) || *v > 1e7) {
        throw InputError(fmt::format("{}:{}: '{}' = '{}' is not a whole number from 1 to 10000000", origin,
                                     line_number, name, get(name)));
      }
      return static_cast<int>(*v);
    };
    auto choice = [&](const char* name, std::initializer_list<const char*> accepted) {
      const std::string v = get(name);
      if (v.empty()) return v;
      for (const char* a : accepted) {
        if (v == a) return v;
      }
      std::string list;
      for (const char* a : accepted) list += std::string(list.empty() ? "" : ", ") + a;
      throw InputError(fmt::format("{}:{}: {} '{}' is not one of {}", origin, line_number, name, v, list));
    };
    Measurement m;
    m.line = line_number;
    auto text_field = [&](const char* name) {
      std::string v = get(name);
      if (v.empty()) throw InputError(fmt::format("{}:{}: '{}' is empty", origin, line_number, name));
      return v;
    };
    m.model = text_field("model");
    m.gpu = text_field("gpu");
    m.precision = text_field("precision");
    m.batch_per_gpu = *count("batch_per_gpu", true);
    m.num_gpus = count("num_gpus", false).value_or(1);
    m.resolution = count("resolution", false);
    m.seq_len = count("seq_len", false);
    m.tokens = count("tokens", false);
    if (m.tokens && (!m.seq_len || *m.tokens > *m.seq_len)) {
      throw InputError(fmt::format("{}:{}: tokens {} needs a seq_len at least as long (the padded length)", origin,
                                   line_number, *m.tokens));
    }
    m.accumulation = count("accumulation", false).value_or(1);
    m.fails_at = count("fails_at", false);
    const std::string metric =
        choice("metric", {"train_throughput", "peak_memory", "max_batch", "peak_allocated", "peak_reserved"});
    if (metric.empty()) throw InputError(fmt::format("{}:{}: 'metric' is empty", origin, line_number));
    m.metric = metric == "train_throughput" ? Metric::train_throughput
               : metric == "peak_memory"    ? Metric::peak_memory
               : metric == "peak_allocated" ? Metric::peak_allocated
               : metric == "peak_reserved"  ? Metric::peak_reserved
                                            : Metric::max_batch;
    m.value = *number("value", true);
    if (m.metric == Metric::max_batch && m.fails_at && *m.fails_at <= m.value) {
      throw InputError(fmt::format("{}:{}: fails_at {} is not above the batch that ran ({})", origin, line_number,
                                   *m.fails_at, m.value));
    }
    m.source = get("source");
    m.framework = get("framework");
    m.software_date = get("software_date");
    if (!m.software_date.empty() &&
        (m.software_date.size() != 7 || m.software_date[4] != '-' ||
         !std::all_of(m.software_date.begin(), m.software_date.begin() + 4, ::isdigit) ||
         !std::isdigit(static_cast<unsigned char>(m.software_date[5])) ||
         !std::isdigit(static_cast<unsigned char>(m.software_date[6])))) {
      throw InputError(
          fmt::format("{}:{}: software_date '{}' is not YYYY-MM", origin, line_number, m.software_date));
    }
    const std::string attention = choice("attention", {"flash", "eager"});
    if (!attention.empty()) m.flash_attention = attention == "flash";
    m.parallel = parse_parallel(choice("parallel", {"ddp", "zero1", "zero2", "fsdp", "hsdp"})).value_or(Parallel::ddp);
    // What lives in host memory, '+'-joined (the CSV's fields hold no commas): plan's --offload.
    const std::string offload = choice("offload", {"optimizer", "params", "activations", "optimizer+activations",
                                                   "params+activations"});
    m.offload.optimizer = offload.starts_with("optimizer");
    m.offload.params = offload.starts_with("params");
    m.offload.activations = offload.ends_with("activations");
    if (!offload_allowed(m.offload, m.parallel)) {
      throw InputError(fmt::format("{}:{}: offload params needs parallel fsdp or hsdp", origin, line_number));
    }
    m.interconnect = parse_interconnect(choice("interconnect", {"pcie", "nvlink"})).value_or(Interconnect::card);
    const std::string layout = choice("layout", {"nhwc", "nchw"});
    if (!layout.empty()) m.channels_last = layout == "nhwc";
    m.fused_kernels = choice("kernels", {"eager", "fused"}) == "fused";
    m.task = choice("task", {"squad", "pretrain", "finetune"});
    m.pure_16bit = choice("amp", {"autocast", "o2"}) == "o2";
    m.checkpointing = get("checkpointing");
    if (m.checkpointing.starts_with("every:")) {
      const std::string n = m.checkpointing.substr(6);
      if (n.empty() || n.size() > 4 || !std::all_of(n.begin(), n.end(), ::isdigit) || std::stoi(n) < 1) {
        throw InputError(fmt::format("{}:{}: checkpointing '{}' is not every:N with N from 1 to 9999", origin,
                                     line_number, m.checkpointing));
      }
    } else {
      m.checkpointing = choice("checkpointing", {"none", "full", "selective", "every:N"});
      if (m.checkpointing == "every:N") {
        throw InputError(fmt::format("{}:{}: checkpointing 'every:N' needs a number for N", origin, line_number));
      }
    }
    if (const std::string o = get("optimizer"); !o.empty()) {
      m.optimizer = parse_optimizer(o);
      if (!m.optimizer) {
        throw InputError(fmt::format("{}:{}: optimizer '{}' is not one of {}", origin, line_number, o, optimizer_names()));
      }
    }
    m.master_weights = choice("master_weights", {"fp32", "bf16"}) == "bf16" ? MasterWeights::bf16 : MasterWeights::fp32;
    m.loss = parse_loss(choice("loss", {"plain", "plain16", "chunked", "fused"})).value_or(LossImpl::plain);
    m.lora_rank = count("lora_rank", false);
    m.qlora = choice("qlora", {"yes", "no"}) == "yes";
    m.optimizer_impl = parse_optimizer_impl(choice("optimizer_impl", {"fused", "foreach", "loop"}));
    m.optimizer_in_backward = choice("optimizer_in_backward", {"yes", "no"}) == "yes";
    m.kbit_upcast = choice("kbit_upcast", {"yes", "no"}) != "no";
    if (!m.kbit_upcast && !m.qlora) {
      throw InputError(fmt::format("{}:{}: kbit_upcast 'no' needs qlora yes", origin, line_number));
    }
    m.clip_grad_norm = choice("clip_grad_norm", {"yes", "no"}) == "yes";
    m.lora_targets = parse_lora_targets(choice("lora_targets", {"attn", "mlp", "all"})).value_or(LoraTargets::all);
    if (const auto dropout = number("lora_dropout", false)) {
      if (*dropout >= 1 || (!m.lora_rank && !m.qlora)) {
        throw InputError(fmt::format("{}:{}: lora_dropout '{}' needs lora_rank or qlora and a probability below 1",
                                     origin, line_number, get("lora_dropout")));
      }
      m.lora_dropout = *dropout;
    }
    m.gpu_memory_gb = number("gpu_memory_gb", false);
    m.data = choice("data", {"synthetic", "real"});
    out.push_back(std::move(m));
  }
  if (column.empty()) throw InputError(fmt::format("{}: empty file (expected a CSV header)", origin));
  mark_superlinear(out);
  return out;
}

}  // namespace gpusage::estimate
