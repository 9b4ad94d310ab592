#include "core/diagnose/log_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/text.hpp"
#include "core/diagnose/environment_rules.hpp"

namespace gpusage::diagnose {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// "line 12: <text>; 3 more at lines 40, 52, 77".
std::string evidence_of(const std::vector<LogLine>& matches) {
  if (matches.empty()) return {};
  std::string s = fmt::format("line {}: {}", matches.front().line, matches.front().text);
  if (matches.size() > 1) {
    std::vector<std::string> more;
    for (std::size_t i = 1; i < matches.size() && i <= 5; ++i) more.push_back(std::to_string(matches[i].line));
    s += fmt::format("; {} more at line{} {}{}", matches.size() - 1, matches.size() > 2 ? "s" : "", text::join(more),
                     matches.size() > 6 ? ", …" : "");
  }
  return s;
}

std::string oom_summary(const OomReport& r) {
  std::vector<std::string> parts;
  if (r.capacity_bytes) parts.push_back(format_size(*r.capacity_bytes) + " total");
  if (r.allocated_bytes) parts.push_back(format_size(*r.allocated_bytes) + " allocated by PyTorch");
  if (r.free_bytes) parts.push_back(format_size(*r.free_bytes) + " free");
  std::string s = r.requested_bytes ? "tried to allocate " + format_size(*r.requested_bytes) : "allocation failed";
  if (r.gpu_index) s += fmt::format(" on GPU {}", *r.gpu_index);
  if (!parts.empty()) s += " (" + text::join(parts) + ")";
  return s;
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

// The concrete fix for an OOM from the memory model, or empty when the model or GPU is unknown.
std::string oom_plan(const LogScan& scan, const OomReport& oom, const RunContext& ctx) {
  if (!ctx.workload) return {};
  const catalog::Catalog& catalog = ctx.catalog ? *ctx.catalog : catalog::Catalog::active();
  const catalog::Gpu* gpu = ctx.gpu;
  std::string gpu_note;
  if (!gpu) {
    if (!oom.capacity_bytes) return {};
    const GpuGuess guess = guess_gpu(*oom.capacity_bytes, catalog);
    if (!guess.gpu) return {};
    gpu = guess.gpu;
    std::vector<std::string> others;
    for (const auto* g : guess.same_memory) others.push_back(g->id);
    gpu_note = fmt::format(" (a guess from the log's {} total capacity{}; pass --gpu to choose)",
                           format_size(*oom.capacity_bytes),
                           others.empty() ? "" : "; same memory: " + text::join(others));
  }
  const workload::Workload& w = *ctx.workload;
  estimate::TrainingConfig config;
  config.precision = ctx.precision.value_or(catalog::Precision::fp32);
  config.optimizer = ctx.optimizer.value_or(w.domain == workload::Domain::vision ? estimate::Optimizer::momentum
                                                                                 : estimate::Optimizer::adamw);
  const std::optional<int> batch = ctx.batch ? ctx.batch : scan.batch_size;
  config.batch_per_gpu = batch.value_or(1);
  std::vector<std::string> lines;
  const std::string precision = catalog::to_string(config.precision);
  const std::string assumed = ctx.precision ? "" : " (assumed: no --precision given)";
  const int largest = estimate::max_batch(w, config, *gpu);
  if (batch) {
    const double need = estimate::estimate_memory(w, config, *gpu).total_bytes();
    lines.push_back(fmt::format("gpusage's memory model: {} at batch {} in {}{} needs {} on {} ({}){}.",
                                w.display_name, *batch, precision, assumed, gib(need), gpu->name,
                                gib(gpu->memory_bytes()), gpu_note));
  } else {
    lines.push_back(fmt::format("gpusage's memory model for {} in {}{} on {} ({}){}; the batch is unknown "
                                "(pass --batch).",
                                w.display_name, precision, assumed, gpu->name, gib(gpu->memory_bytes()), gpu_note));
  }
  if (largest < 1) {
    lines.push_back("Even batch 1 does not fit in this configuration.");
  } else {
    lines.push_back(fmt::format("Largest batch that fits: {}.", largest));
    if (batch && *batch > largest) {
      const estimate::TrainingConfig split = estimate::plan_target_batch(w, config, *gpu, *batch);
      lines.push_back(fmt::format("Keep the effective batch of {}: batch {} with {} gradient accumulation steps "
                                  "(gpusage plan {} --gpu {} --target-batch {}).",
                                  split.batch_per_gpu * split.accumulation_steps, split.batch_per_gpu,
                                  split.accumulation_steps, w.id, gpu->id, *batch));
    } else if (batch) {
      lines.push_back(fmt::format("The model predicts batch {} fits, so the rest of the memory went elsewhere "
                                  "(other processes, longer inputs than assumed, fragmentation).",
                                  *batch));
    }
  }
  if (config.precision == catalog::Precision::fp32 || config.precision == catalog::Precision::tf32) {
    const auto mixed = gpu->supports(catalog::Precision::bf16) ? catalog::Precision::bf16 : catalog::Precision::fp16;
    if (gpu->supports(mixed)) {
      estimate::TrainingConfig m = config;
      m.precision = mixed;
      lines.push_back(fmt::format("Mixed precision ({} autocast) would allow batch {}.", catalog::to_string(mixed),
                                  estimate::max_batch(w, m, *gpu)));
    }
  }
  if (!config.checkpointing) {
    estimate::TrainingConfig m = config;
    m.checkpointing = true;
    lines.push_back(fmt::format("Activation checkpointing (torch.utils.checkpoint) would allow batch {}.",
                                estimate::max_batch(w, m, *gpu)));
  }
  return text::join(lines, " ");
}

void check_oom(const LogScan& scan, const RunContext& ctx, const RuleTable& rules, std::vector<Finding>& out) {
  if (scan.cuda_oom.empty()) return;
  // The last report with figures describes the state at the failure best; else the last one.
  const OomReport* best = &scan.cuda_oom.back();
  for (const auto& r : scan.cuda_oom) {
    if (r.capacity_bytes) best = &r;
  }
  std::vector<LogLine> where;
  for (const auto& r : scan.cuda_oom) where.push_back(r.at);
  Finding f = rules.make("log-cuda-oom", Category::log,
                         {{"count", std::to_string(scan.cuda_oom.size())}, {"summary", oom_summary(*best)}},
                         evidence_of(where), oom_plan(scan, *best, ctx));
  out.push_back(std::move(f));

  if (best->unallocated_bytes && best->capacity_bytes) {
    const double unallocated = *best->unallocated_bytes;
    const bool large = unallocated >= rules.thresholds().fragmentation_fraction * *best->capacity_bytes ||
                       (best->requested_bytes && unallocated >= *best->requested_bytes);
    if (large && unallocated > 0) {
      const std::string requested = best->requested_bytes ? format_size(*best->requested_bytes) : "an allocation";
      out.push_back(rules.make("log-oom-fragmentation", Category::log,
                               {{"unallocated", format_size(unallocated)},
                                {"requested", requested},
                                {"capacity", format_size(*best->capacity_bytes)}}));
    }
  }
}

void check_grad_norms(const LogScan& scan, const RuleTable& rules, std::vector<Finding>& out) {
  const Thresholds& th = rules.thresholds();
  std::vector<double> history;
  for (const auto& g : scan.grad_norms) {
    if (static_cast<int>(history.size()) >= th.grad_norm_min_history) {
      std::vector<double> sorted = history;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
      const double median = sorted[sorted.size() / 2];
      if (median > 0 && g.value > th.grad_norm_explosion_factor * median) {
        out.push_back(rules.make("log-grad-explosion", Category::log,
                                 {{"value", fmt::format("{:g}", g.value)},
                                  {"median", fmt::format("{:g}", median)},
                                  {"factor", fmt::format("{:.0f}", g.value / median)},
                                  {"line", std::to_string(g.line)}},
                                 fmt::format("line {}: grad norm {:g} after {} norms with median {:g}", g.line,
                                             g.value, history.size(), median)));
        return;
      }
    }
    history.push_back(g.value);
  }
}

}  // namespace

std::string format_size(double bytes) {
  // PyTorch's format_size thresholds (c10/cuda/CUDACachingAllocator.cpp), so figures read as in the log.
  if (bytes <= 1024) return fmt::format("{:.0f} bytes", bytes);
  if (bytes <= 1024.0 * 1024) return fmt::format("{:.2f} KiB", bytes / 1024);
  if (bytes <= kGiB) return fmt::format("{:.2f} MiB", bytes / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", bytes / kGiB);
}

GpuGuess guess_gpu(double capacity_bytes, const catalog::Catalog& catalog) {
  GpuGuess guess;
  double best = 0;
  for (const auto& gpu : catalog.gpus()) {
    const double distance = std::abs(gpu.memory_bytes() - capacity_bytes);
    if (!guess.gpu || distance < best) {
      guess.gpu = &gpu;
      best = distance;
    }
  }
  if (!guess.gpu) return guess;
  for (const auto& gpu : catalog.gpus()) {
    if (&gpu != guess.gpu && gpu.memory_gb == guess.gpu->memory_gb) guess.same_memory.push_back(&gpu);
  }
  return guess;
}

std::vector<Finding> check_log(const LogScan& scan, const RunContext& context, const RuleTable& rules) {
  std::vector<Finding> out;
  // One finding per pattern seen: {count} and the evidence come from its matches.
  auto add = [&](const char* id, const std::vector<LogLine>& matches, Args args = {}) {
    if (matches.empty()) return;
    args.emplace_back("count", std::to_string(matches.size()));
    out.push_back(rules.make(id, Category::log, args, evidence_of(matches)));
  };
  auto wrapped = [](const std::optional<std::string>& detail, const char* before, const char* after) {
    return detail ? before + *detail + after : std::string();
  };
  check_oom(scan, context, rules, out);
  add("log-tf-oom", scan.tf_oom);
  add("log-non-finite", scan.non_finite, {{"what", text::join(scan.non_finite_kinds, " and ")}});
  if (static_cast<int>(scan.overflow_skips.size()) >= rules.thresholds().overflow_skips) {
    add("log-overflow-skips", scan.overflow_skips);
  }
  check_grad_norms(scan, rules, out);
  if (!scan.no_kernel.empty()) {
    std::string detail;
    std::string requirement =
        "Install a framework build whose compiled architectures include this GPU (run gpusage doctor on the "
        "machine to see which it needs).";
    if (scan.unsupported_arch) {
      detail = fmt::format(" on {} ({})", scan.unsupported_gpu.value_or("the GPU"), *scan.unsupported_arch);
      if (scan.supported_archs) detail += fmt::format("; the build supports {}", *scan.supported_archs);
      const int value = std::stoi(scan.unsupported_arch->substr(3));
      requirement = "Install " + torch_requirement(value / 10, value % 10, rules) + ".";
    }
    add("log-no-kernel-image", scan.no_kernel, {{"detail", detail}, {"requirement", requirement}});
  }
  add("log-nccl-timeout", scan.nccl_timeout, {{"detail", wrapped(scan.nccl_timeout_detail, " (", ")")}});
  add("log-nccl-error", scan.nccl_error, {{"detail", wrapped(scan.nccl_error_detail, ": ", "")}});
  add("log-dataloader-killed", scan.dataloader_killed, {{"detail", wrapped(scan.dataloader_detail, " (", ")")}});
  const std::string first_status = scan.cudnn_statuses.empty() ? std::string() : scan.cudnn_statuses.front();
  add("log-cudnn-error", scan.cudnn,
      {{"status", scan.cudnn_statuses.empty() ? "(no status)" : text::join(scan.cudnn_statuses)},
       {"advice", rules.cudnn_advice(first_status)}});
  add("log-dataloader-workers-zero", scan.workers_zero);
  if (out.empty()) {
    out.push_back(rules.make("log-clean", Category::log, {{"lines", std::to_string(scan.lines)}},
                             fmt::format("{} lines read", scan.lines)));
  }
  return out;
}

}  // namespace gpusage::diagnose
