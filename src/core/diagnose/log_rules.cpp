#include "core/diagnose/log_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/environment_rules.hpp"
#include "core/diagnose/log_rules_families.hpp"
#include "core/diagnose/log_rules_steps.hpp"

namespace gpusage::diagnose {

namespace {

using units::kGiB;

std::string shape_text(const std::vector<long long>& dims) {
  std::vector<std::string> parts;
  for (long long d : dims) parts.push_back(std::to_string(d));
  return "[" + text::join(parts, ",") + "]";
}

std::string oom_summary(const OomReport& r) {
  std::vector<std::string> parts;
  if (r.capacity_bytes) parts.push_back(i18n::trf("{} total", format_size(*r.capacity_bytes)));
  if (r.allocated_bytes) parts.push_back(i18n::trf("{} allocated by PyTorch", format_size(*r.allocated_bytes)));
  if (r.free_bytes) parts.push_back(i18n::trf("{} free", format_size(*r.free_bytes)));
  std::string s = r.requested_bytes ? i18n::trf("tried to allocate {}", format_size(*r.requested_bytes))
                                    : i18n::tr("allocation failed");
  if (r.gpu_index) s += i18n::trf(" on GPU {}", *r.gpu_index);
  if (!parts.empty()) s += i18n::trf(" ({})", text::join(parts, i18n::tr(", ")));
  return s;
}

// The capacity the fix is computed for: the log's figure (a measurement) first, else the --gpu card's.
std::optional<std::pair<double, std::string>> capacity_of(const OomReport& oom, const LogScan& scan,
                                                          const RunContext& ctx) {
  if (oom.capacity_bytes) return std::make_pair(*oom.capacity_bytes, std::string("the log"));
  if (oom.wording == "tensorflow" && scan.tf_capacity_bytes) {
    return std::make_pair(*scan.tf_capacity_bytes, std::string("the log"));
  }
  if (ctx.gpu) return std::make_pair(ctx.gpu->memory_bytes(), ctx.gpu->id);
  return std::nullopt;
}

// What the failing step needed at least, from the log's figures: what was in use on the card plus the
// allocation that did not fit. PyTorch: capacity - free + request (other processes included: they hold that
// memory during the run too). TensorFlow: the BFC allocator's InUse + request; without InUse, the capacity +
// request (TensorFlow maps the whole GPU at start-up, so the pool was full when the tensor did not fit).
std::optional<double> needed_of(const OomReport& oom, const LogScan& scan, std::optional<double> capacity) {
  if (!oom.requested_bytes) return std::nullopt;
  const double request = *oom.requested_bytes;
  if (oom.wording == "tensorflow") {
    if (scan.tf_in_use_bytes) return *scan.tf_in_use_bytes + request;
    if (capacity) return *capacity + request;
    return std::nullopt;
  }
  if (capacity && oom.free_bytes) return *capacity - *oom.free_bytes + request;
  if (oom.process_bytes) return *oom.process_bytes + request;
  if (oom.reserved_bytes) return *oom.reserved_bytes + request;
  if (oom.allocated_bytes) return *oom.allocated_bytes + request;
  return std::nullopt;
}

estimate::TrainingConfig config_of(const workload::Workload& w, const RunContext& ctx) {
  estimate::TrainingConfig config;
  config.precision = ctx.precision.value_or(catalog::Precision::fp32);
  config.optimizer = ctx.optimizer.value_or(w.domain == workload::Domain::vision ? estimate::Optimizer::momentum
                                                                                 : estimate::Optimizer::adamw);
  return config;
}

// The largest batch whose scaled prediction fits `capacity` (0: not even batch 1). Memory grows with the
// batch, so a doubling search then bisection.
int largest_batch(const workload::Workload& w, estimate::TrainingConfig config, const catalog::Gpu& gpu, double scale,
                  double capacity) {
  auto fits = [&](int batch) {
    config.batch_per_gpu = batch;
    return scale * estimate::estimate_memory(w, config, gpu).required_bytes() <= capacity;
  };
  if (!fits(1)) return 0;
  int lo = 1;
  int hi = 2;
  while (hi <= (1 << 20) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > (1 << 20)) return lo;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::string oom_fix_text(const OomPlan& p, const RunContext& ctx, const OomReport& oom) {
  std::vector<std::string> lines;
  const std::string on = p.capacity_from == "the log"
                             ? i18n::trf("the log's {} capacity", format_size(p.capacity_bytes))
                             : fmt::format("{} ({})", ctx.gpu->name, units::format_gib(p.capacity_bytes));
  if (p.needed_bytes) {
    lines.push_back(i18n::trf("Measured at the failure: at least {} needed ({} in use plus the {} request) on {}.",
                              format_size(*p.needed_bytes),
                              format_size(*p.needed_bytes - oom.requested_bytes.value_or(0)),
                              format_size(oom.requested_bytes.value_or(0)), on));
  }
  const workload::Workload& w = *ctx.workload;
  const estimate::TrainingConfig config = config_of(w, ctx);
  const std::string precision = catalog::to_string(config.precision);
  const std::string assumed = ctx.precision ? "" : i18n::tr(" (assumed: no --precision given)");
  if (p.batch && p.predicted_bytes) {
    std::string scaled;
    if (p.scale >= 1.005) {
      scaled = i18n::trf("; scaled x{:.2f} so batch {} needs what the log shows", p.scale, *p.batch);
    } else if (p.needed_bytes && *p.predicted_bytes >= *p.needed_bytes) {
      scaled = i18n::tr("; it already predicts at least the log's figure, so it is not scaled");
    } else if (p.needed_bytes) {
      scaled = i18n::tr("; within 0.5% of the log's figure");
    }
    lines.push_back(i18n::trf("gpusage's memory model: {} at batch {} in {}{} needs {}{}.", w.display_name, *p.batch,
                              precision, assumed, format_size(*p.predicted_bytes), scaled));
  } else {
    lines.push_back(
        i18n::trf("gpusage's memory model for {} in {}{}; the failing batch is unknown (pass --batch), "
                  "so the model is not scaled to the log.",
                  w.display_name, precision, assumed));
  }
  if (p.largest_batch < 1) {
    lines.push_back(i18n::trf("Even batch 1 does not fit on {}.", on));
  } else {
    lines.push_back(i18n::trf("Largest batch that fits on {}: {}.", on, p.largest_batch));
  }
  if (p.micro_batch && p.accumulation_steps && p.batch) {
    lines.push_back(i18n::trf("Keep the effective batch of {}: batch {} with {} gradient accumulation steps.",
                              *p.micro_batch * *p.accumulation_steps, *p.micro_batch, *p.accumulation_steps));
  }
  if (p.mixed_precision_batch) {
    const bool card = ctx.gpu != nullptr;
    const std::string which = !card ? i18n::tr("bf16 or fp16 autocast; bf16 needs Ampere or newer")
                                    : (ctx.gpu->supports(catalog::Precision::bf16) ? "bf16 autocast" : "fp16 autocast");
    lines.push_back(i18n::trf("Mixed precision ({}) would allow batch {}.", which, *p.mixed_precision_batch));
  }
  if (p.checkpointing_batch) {
    lines.push_back(
        i18n::trf("Activation checkpointing (torch.utils.checkpoint) would allow batch {}.", *p.checkpointing_batch));
  }
  // English sentences are spaced; Chinese ones end in a full-width stop and run on.
  return text::join(lines, i18n::language() == i18n::Language::en ? " " : "");
}

// The fix without a model: the shortfall on the measured capacity, and what to pass for a batch.
std::string oom_fix_without_model(const OomReport& oom, const LogScan& scan, const RunContext& ctx,
                                  const std::string& generic) {
  const auto capacity = capacity_of(oom, scan, ctx);
  if (!capacity) return generic + i18n::tr(" Give --model, --batch, --precision and --gpu for concrete numbers.");
  const auto needed = needed_of(oom, scan, capacity->first);
  const std::string on = capacity->second == "the log"
                             ? i18n::trf("the log's {} capacity", format_size(capacity->first))
                             : fmt::format("{} ({})", ctx.gpu->name, units::format_gib(capacity->first));
  std::string s;
  if (needed && *needed > capacity->first) {
    s = i18n::trf(
        "Measured at the failure: at least {} needed on {}: {} short, so this step needs at least {:.0f}% "
        "less memory. ",
        format_size(*needed), on, format_size(*needed - capacity->first),
        std::ceil(100.0 * (1 - capacity->first / *needed)));
  } else if (needed) {
    s = i18n::trf("Measured at the failure: {} needed on {}, which has room in total but not in one free block. ",
                  format_size(*needed), on);
  } else {
    s = i18n::trf("The card has {} ({}). ", format_size(capacity->first), on);
  }
  return s + generic +
         i18n::trf(" Give --model and --batch for the largest batch that fits {}.", format_size(capacity->first));
}

// The OOM fix: from the model and the log's figures when a model is given, else the shortfall on the
// measured capacity, else the rule's generic advice.
std::string oom_fix(const OomReport& best, const LogScan& scan, const RunContext& ctx, const RuleTable& rules,
                    const char* rule_id) {
  if (auto plan = plan_oom(best, scan, ctx)) return oom_fix_text(*plan, ctx, best);
  const Finding generic = rules.make(rule_id, Category::log, {{"count", "1"}, {"summary", ""}});
  return oom_fix_without_model(best, scan, ctx, generic.fix);
}

void check_grad_explosion(const LogScan& scan, const RuleTable& rules, std::vector<Finding>& out,
                          std::vector<std::size_t>& lines) {
  if (!scan.grad_explosion) return;
  const GradExplosion& g = *scan.grad_explosion;
  out.push_back(rules.make("log-grad-explosion", Category::log,
                           {{"value", fmt::format("{:g}", g.at.value)},
                            {"median", fmt::format("{:g}", g.median)},
                            {"factor", fmt::format("{:.0f}", g.at.value / g.median)},
                            {"line", std::to_string(g.at.line)}},
                           i18n::trf("line {}: grad norm {:g} after {} norms with median {:g}", g.at.line, g.at.value,
                                     g.history, g.median)));
  lines.push_back(g.at.line);
}

// "1.3e-202", "0.03125", "2".
std::string scale_text(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string format_size(double bytes) {
  // PyTorch's format_size thresholds (c10/cuda/CUDACachingAllocator.cpp), so figures read as in the log.
  // Not units::format_bytes: PyTorch moves up a unit only past it (<=) and prints two decimals.
  if (bytes <= units::kKiB) return fmt::format("{:.0f} bytes", bytes);
  if (bytes <= units::kMiB) return fmt::format("{:.2f} KiB", bytes / units::kKiB);
  if (bytes <= kGiB) return fmt::format("{:.2f} MiB", bytes / units::kMiB);
  return fmt::format("{:.2f} GiB", bytes / kGiB);
}

std::optional<OomPlan> plan_oom(const OomReport& oom, const LogScan& scan, const RunContext& ctx) {
  if (!ctx.workload) return std::nullopt;
  const auto capacity = capacity_of(oom, scan, ctx);
  if (!capacity) return std::nullopt;
  OomPlan p;
  p.capacity_bytes = capacity->first;
  p.capacity_from = capacity->second;
  p.needed_bytes = needed_of(oom, scan, p.capacity_bytes);
  const workload::Workload& w = *ctx.workload;
  estimate::TrainingConfig config = config_of(w, ctx);
  // What has to fit (required_bytes) does not depend on the card; without --gpu it is evaluated for a card
  // of the log's capacity (no catalog card is named the log does not name).
  catalog::Gpu card;
  if (ctx.gpu) {
    card = *ctx.gpu;
  } else {
    card.id = "log-capacity";
    card.memory_gb = p.capacity_bytes / kGiB;
  }
  p.batch = ctx.batch ? ctx.batch : scan.batch_size;
  if (p.batch) {
    config.batch_per_gpu = *p.batch;
    p.predicted_bytes = estimate::estimate_memory(w, config, card).required_bytes();
    if (p.needed_bytes && *p.predicted_bytes > 0) p.scale = std::max(1.0, *p.needed_bytes / *p.predicted_bytes);
  }
  p.largest_batch = largest_batch(w, config, card, p.scale, p.capacity_bytes);
  if (p.batch && p.largest_batch >= 1 && *p.batch > p.largest_batch) {
    // The fewest accumulation steps whose micro-batch fits, preferring an exact split of the batch.
    const int batch = *p.batch;
    const int steps = (batch + p.largest_batch - 1) / p.largest_batch;
    p.accumulation_steps = steps;
    p.micro_batch = (batch + steps - 1) / steps;
    for (int s = steps; s <= 2 * steps; ++s) {
      if (batch % s == 0 && batch / s <= p.largest_batch) {
        p.accumulation_steps = s;
        p.micro_batch = batch / s;
        break;
      }
    }
  }
  if (config.precision == catalog::Precision::fp32 || config.precision == catalog::Precision::tf32) {
    const auto mixed =
        (!ctx.gpu || ctx.gpu->supports(catalog::Precision::bf16)) ? catalog::Precision::bf16 : catalog::Precision::fp16;
    if (!ctx.gpu || ctx.gpu->supports(mixed)) {
      estimate::TrainingConfig m = config;
      m.precision = mixed;
      p.mixed_precision_batch = largest_batch(w, m, card, p.scale, p.capacity_bytes);
    }
  }
  if (!config.checkpointing) {
    estimate::TrainingConfig m = config;
    m.checkpointing = true;
    p.checkpointing_batch = largest_batch(w, m, card, p.scale, p.capacity_bytes);
  }
  return p;
}

namespace {

// PyTorch's and TensorFlow's GPU OOM (with a cascade of handles that could not start as their evidence), and
// the host's.
void check_out_of_memory(FindingList& list, const LogScan& scan, const RunContext& ctx, bool jax_oom,
                         std::string cascade) {
  const RuleTable& rules = list.rules;
  if (scan.cuda_oom_count > 0) {
    // The last report with figures describes the state at the failure best; else the last one.
    const OomReport* best = &scan.cuda_oom.back();
    for (const auto& r : scan.cuda_oom) {
      if (r.capacity_bytes) best = &r;
    }
    const std::string fix = oom_fix(*best, scan, ctx, rules, "log-cuda-oom");
    list.push(rules.make("log-cuda-oom", Category::log,
                         {{"count", std::to_string(scan.cuda_oom_count)}, {"summary", oom_summary(*best)}},
                         evidence_of(scan.cuda_oom_lines) + cascade, fix),
              scan.cuda_oom_lines.first_line());
    cascade.clear();
    if (best->unallocated_bytes && best->capacity_bytes) {
      const double unallocated = *best->unallocated_bytes;
      const bool large = unallocated >= rules.thresholds().fragmentation_fraction * *best->capacity_bytes ||
                         (best->requested_bytes && unallocated >= *best->requested_bytes);
      if (large && unallocated > 0) {
        const std::string requested = best->requested_bytes ? format_size(*best->requested_bytes) : "an allocation";
        list.push(rules.make("log-oom-fragmentation", Category::log,
                             {{"unallocated", format_size(unallocated)},
                              {"requested", requested},
                              {"capacity", format_size(*best->capacity_bytes)}}),
                  scan.cuda_oom_lines.first_line());
      }
    }
  }

  // TensorFlow OOM on a GPU. An OOM without a device beside host-memory OOMs is the same host failure.
  bool tf_on_gpu = false;
  for (const auto& r : scan.tf_oom)
    tf_on_gpu = tf_on_gpu || r.gpu_index.has_value() || r.at.text.find("GPU") != std::string::npos;
  if (scan.tf_oom_count > 0 && !jax_oom && (tf_on_gpu || scan.host_oom.empty())) {
    const OomReport* best = &scan.tf_oom.front();
    for (const auto& r : scan.tf_oom) {
      if (r.requested_bytes && !best->requested_bytes) best = &r;
    }
    std::string summary;
    if (best->tensor_shape) {
      summary = fmt::format(": a {} tensor ({}) did not fit", shape_text(*best->tensor_shape),
                            format_size(best->requested_bytes.value_or(0)));
    } else if (best->requested_bytes) {
      summary = fmt::format(": {} could not be allocated", format_size(*best->requested_bytes));
    }
    if (best->gpu_index) summary += fmt::format(" on GPU {}", *best->gpu_index);
    const std::string fix = oom_fix(*best, scan, ctx, rules, "log-tf-oom");
    list.push(
        rules.make("log-tf-oom", Category::log, {{"count", std::to_string(scan.tf_oom_count)}, {"summary", summary}},
                   evidence_of(scan.tf_oom_lines) + cascade, fix),
        std::min(scan.tf_oom_lines.first_line(),
                 cascade.empty() ? scan.tf_oom_lines.first_line() : scan.init_failures.first_line()));
  }
  if (!scan.host_oom.empty()) {
    list.add("log-host-oom", scan.host_oom, {{"detail", wrapped(scan.host_oom_detail, ": ", "")}});
  }
}

// Non-finite values, a collapsing loss scale (or many overflow skips), exploding gradient norms.
void check_training_values(FindingList& list, const LogScan& scan) {
  const RuleTable& rules = list.rules;
  const Thresholds& th = rules.thresholds();
  list.add("log-non-finite", scan.non_finite, {{"what", text::join(scan.non_finite_kinds, " and ")}});
  const LossScaleTrace& ls = scan.loss_scale;
  // A scale at or under the floor is a collapse when the scaler was seen lowering it (an overflow, a
  // reduction, a first scale above it) or when it is below 1 (gradients overflow even unscaled). A constant
  // "loss scale: 1.0" and nothing else is bf16 or fp32 training, which Megatron logs that way on every step.
  const bool fell =
      ls.reductions > 0 || !scan.overflow_skips.empty() || (ls.first && ls.lowest && *ls.first > *ls.lowest);
  const bool collapsed = ls.at_minimum || (ls.lowest && *ls.lowest <= th.loss_scale_floor && (*ls.lowest < 1 || fell));
  if (collapsed) {
    std::string evidence = i18n::trf("line {}: {}", ls.lowest_at.line, ls.lowest_at.text);
    if (ls.first_at.line && ls.first_at.line != ls.lowest_at.line) {
      evidence = i18n::trf("line {}: {}; … ", ls.first_at.line, ls.first_at.text) + evidence;
    }
    if (!scan.overflow_skips.empty()) evidence += fmt::format("; {} skipped steps", scan.overflow_skips.size());
    list.push(rules.make("log-loss-scale-collapse", Category::log,
                         {{"lowest", ls.lowest ? scale_text(*ls.lowest) : std::string("its minimum")},
                          {"first", ls.first ? scale_text(*ls.first) : std::string("?")},
                          {"reports", std::to_string(ls.reports)},
                          {"floor", scale_text(th.loss_scale_floor)}},
                         evidence),
              ls.first_at.line ? ls.first_at.line : ls.lowest_at.line);
  } else if (static_cast<int>(scan.overflow_skips.size()) >= th.overflow_skips) {
    list.add("log-overflow-skips", scan.overflow_skips);
  }
  check_grad_explosion(scan, rules, list.out, list.first_line);
}

}  // namespace

std::vector<Finding> check_log(const LogScan& scan, const RunContext& ctx, const RuleTable& rules) {
  FindingList list{rules, {}, {}};
  // cuDNN statuses that mean "could not start": out of memory in disguise when the log has an OOM.
  const bool jax_oom = xla_oom_is_jax(scan);
  const bool any_oom = scan.cuda_oom_count > 0 || scan.tf_oom_count > 0 || jax_oom;
  std::string cascade;
  if (any_oom && !scan.init_failures.empty()) {
    cascade = fmt::format(
        "; then {} cuBLAS/cuDNN handle(s) could not be created (a consequence: no memory left "
        "for them), {}",
        scan.init_failures.size(), evidence_of(scan.init_failures));
  }
  check_out_of_memory(list, scan, ctx, jax_oom, cascade);
  check_training_values(list, scan);
  check_no_kernel_image(list, scan);
  check_driver_too_old(list, scan, ctx);
  for (auto& placed : check_error_families(scan, rules)) list.push(std::move(placed.finding), placed.line);
  check_nccl(list, scan);
  list.add("log-dataloader-killed", scan.dataloader_killed, {{"detail", wrapped(scan.dataloader_detail, " (", ")")}});
  check_cudnn(list, scan, any_oom);
  list.add("log-dataloader-workers-zero", scan.workers_zero);
  // A code with only a generic fix explains the log only when nothing else does.
  if (!list.has(Severity::error)) {
    for (auto& placed : check_generic_codes(scan, rules)) list.push(std::move(placed.finding), placed.line);
  }
  // A notebook's kernel (or a hosted session) that died with no error of its own, or a kill told in prose, and
  // nothing else in the log to explain it: the OOM killer is the usual cause, so it is named, as likely.
  if (!list.has(Severity::error) && !list.has(Severity::warning)) {
    list.add("log-host-oom", scan.host_oom_likely,
             {{"detail", i18n::tr(": likely, as the log shows a process killed or a notebook kernel that died with no "
                                  "error of its own (the OOM killer's way; a native crash is the other cause)")}});
  }
  check_unrecognised(list, scan);

  std::vector<Finding> sorted = list.in_order();
  if (sorted.empty()) {
    sorted.push_back(rules.make("log-clean", Category::log, {{"lines", std::to_string(scan.lines)}},
                                fmt::format("{} lines read", scan.lines)));
  }
  return sorted;
}

}  // namespace gpusage::diagnose
