#include "cli/plan_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/json.hpp"
#include "core/common/text.hpp"
#include "core/common/units.hpp"
#include "report/table.hpp"

namespace gpusage::cli {

nlohmann::json plan_json(const estimate::Sweep& results) {
  const workload::Workload& w = results.workload;
  nlohmann::json model = {
      {"id", w.id},
      {"name", w.display_name},
      {"domain", w.domain == workload::Domain::vision ? "vision" : "language"},
      {"params", w.params()},
      {"forward_gflops_per_sample", w.forward_flops() / 1e9},
      {"resolution", w.domain == workload::Domain::vision ? nlohmann::json(w.resolution) : nlohmann::json(nullptr)},
      {"seq_len", w.domain == workload::Domain::language ? nlohmann::json(w.seq_len) : nlohmann::json(nullptr)},
      {"architecture_source", w.architecture_source},
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : results.predictions) {
    const auto& m = p.memory;
    rows.push_back({
        {"gpu", p.gpu->id},
        {"gpu_name", p.gpu->name},
        {"batch", p.config.batch_per_gpu},
        {"precision", catalog::to_string(p.config.precision)},
        {"optimizer", estimate::to_string(p.config.optimizer)},
        {"fits", p.fits},
        {"memory",
         {{"weights", m.weights_bytes},
          {"gradients", m.gradients_bytes},
          {"optimizer", m.optimizer_bytes},
          {"activations", m.activations_bytes},
          {"workspace", m.workspace_bytes},
          {"context", m.context_bytes},
          {"gradients_at_backward_start", m.backward_gradients_bytes},
          {"optimizer_step_temporaries", m.step_temporaries_bytes},
          {"peak_at", m.peaks_at_optimizer_step() ? "optimizer step" : "backward"},
          {"total", m.total_bytes()},
          {"required", m.required_bytes()},
          {"allocated", m.allocated_bytes()},
          {"reserved", m.reserved_bytes()},
          {"nvidia_smi", m.total_bytes()},
          {"host", m.host_bytes},
          {"host_activations", m.host_activation_bytes}}},
        {"capacity_bytes", p.capacity_bytes},
        {"max_batch", p.max_batch},
        {"step_time_s", p.time.step_s},
        {"time",
         {{"compute_s", p.time.compute_s},
          {"memory_s", p.time.memory_s},
          {"overhead_s", p.time.overhead_s},
          {"optimizer_s", p.time.optimizer_s},
          {"communication_s", p.time.communication_s},
          {"recompute_s", p.time.recompute_s},
          {"offload_s", p.time.offload_s}}},
        {"throughput", p.throughput},
        {"throughput_low", p.throughput_low},
        {"throughput_high", p.throughput_high},
        {"interval", {{"coverage", 0.8}, {"basis", p.interval_basis}}},
        {"validation_warnings", p.validation_warnings},
        {"tokens_per_s", json_util::optional(p.tokens_per_s)},
        {"accumulation_steps", p.config.accumulation_steps},
        {"effective_batch", p.effective_batch},
        {"gpus", p.config.world_size()},
        {"epoch_time_s", json_util::optional(p.epoch_time_s)},
        {"energy_wh_per_epoch", json_util::optional(p.energy_wh_per_epoch)},
        {"bound", estimate::to_string(p.time.bound)},
        {"advice", p.advice},
    });
  }
  return {{"model", model}, {"results", rows}, {"assumptions", results.assumptions}, {"notes", results.notes}};
}

namespace {

// The fine-tuning recipe beyond precision and optimizer, when it is not plan's default.
std::string recipe_text(const estimate::TrainingConfig& c, const estimate::Sweep& results) {
  std::vector<std::string> parts;
  if (c.master_weights == estimate::MasterWeights::bf16) parts.push_back(i18n::tr("pure bf16 (bf16 master weights)"));
  if (c.qlora) {
    parts.push_back(i18n::trf("QLoRA rank {} on {}{}", c.lora_rank.value_or(16), estimate::to_string(c.lora_targets),
                              c.kbit_upcast ? "" : i18n::tr(" (base not upcast)")));
  } else if (c.lora_rank) {
    parts.push_back(i18n::trf("LoRA rank {} on {}", *c.lora_rank, estimate::to_string(c.lora_targets)));
  }
  if (c.checkpointing) {
    parts.push_back(c.selective_checkpointing ? i18n::tr("selective checkpointing")
                    : c.checkpoint_every > 1  ? i18n::trf("checkpointing every {} blocks", c.checkpoint_every)
                                              : i18n::tr("full checkpointing"));
  }
  if (c.loss != estimate::LossImpl::plain) parts.push_back(i18n::trf("{} loss", estimate::to_string(c.loss)));
  if (!c.eager_kernels) parts.push_back(i18n::tr("fused elementwise kernels"));
  if (c.clip_grad_norm) parts.push_back(i18n::tr("gradient norm clipped"));
  if (c.optimizer_impl != estimate::OptimizerImpl::foreach) {
    parts.push_back(i18n::trf("{} optimizer step", estimate::to_string(c.optimizer_impl)));
  }
  if (results.timed_workload)
    parts.push_back(i18n::trf("{} tokens computed per sample", results.timed_workload->seq_len));
  return parts.empty() ? "" : i18n::tr("; ") + text::join(parts, i18n::tr(", "));
}

// The precision of the plan's rows: one name, or "bf16/fp16" when cards differ (no --precision: per card).
std::string precisions_text(const estimate::Sweep& results) {
  std::vector<std::string> names;
  for (const auto& p : results.predictions) {
    const std::string name = catalog::to_string(p.config.precision);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return text::join(names, "/");
}

// A card's name, with its GPU count when the sweep plans the same job on different counts (--gpu
// rtx5090,8xh100-sxm5-80gb), so that one H100 and eight are told apart.
std::string card_name(const estimate::Prediction& p, const estimate::Sweep& results) {
  const bool mixed = std::any_of(results.predictions.begin(), results.predictions.end(), [&](const auto& q) {
    return q.config.world_size() != results.predictions.front().config.world_size();
  });
  return mixed && p.config.world_size() > 1 ? fmt::format("{}x {}", p.config.world_size(), p.gpu->name) : p.gpu->name;
}

// A throughput as the tables print it: three significant figures at least, whole numbers from 100 up (a 70B
// model's 0.0427 sequences per second is not "0.0").
std::string throughput_text(double v) { return report::format_significant(v); }

// The batches of the first card when every card is predicted at the same batches without accumulation (the
// grid of `--batch 32,64,...`); empty otherwise.
std::vector<int> uniform_batches(const std::vector<estimate::Prediction>& predictions) {
  std::vector<int> batches;
  for (const auto& p : predictions) {
    if (p.gpu != predictions.front().gpu) break;
    batches.push_back(p.config.batch_per_gpu);
  }
  if (predictions.size() % batches.size() != 0) return {};
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    if (predictions[i].config.batch_per_gpu != batches[i % batches.size()] ||
        predictions[i].config.accumulation_steps != 1) {
      return {};
    }
  }
  return batches;
}

// One row per GPU; per batch a throughput and a memory column. Cards that run out are marked OOM.
report::Table batch_grid_table(const estimate::Sweep& results, const std::vector<int>& batches) {
  const auto& predictions = results.predictions;
  report::Table table;
  table.columns = {{"GPU", "", report::Align::left}, {i18n::tr("VRAM"), "GiB"}, {i18n::tr("max batch"), ""}};
  for (int b : batches) table.columns.push_back({i18n::trf("batch {}", b), ""});
  for (std::size_t i = 0; i < predictions.size(); i += batches.size()) {
    const auto& first = predictions[i];
    std::vector<std::string> row{card_name(first, results),
                                 report::format_number(units::to_gib(first.capacity_bytes), 0),
                                 report::format_number(first.max_batch)};
    for (std::size_t j = 0; j < batches.size(); ++j) {
      const auto& p = predictions[i + j];
      const std::string memory = report::format_number(units::to_gib(p.memory.total_bytes()), 1);
      row.push_back(p.fits ? fmt::format("{} / {}", throughput_text(p.throughput), memory)
                           : fmt::format("OOM / {}", memory));
    }
    table.add_row(row);
  }
  table.notes.push_back(
      i18n::trf("Each cell: predicted {} per GPU / predicted peak memory in GiB. OOM: does not "
                "fit in the card's VRAM.",
                results.workload.throughput_unit()));
  return table;
}

// One row per prediction, every figure in its own column.
// What limits the step, in the reader's language (to_string is the CSV and JSON value).
std::string bound_label(estimate::Bound bound) {
  switch (bound) {
    case estimate::Bound::compute: return i18n::trc("bound", "compute");
    case estimate::Bound::memory: return i18n::trc("bound", "memory");
    case estimate::Bound::overhead: return i18n::trc("bound", "overhead");
  }
  return estimate::to_string(bound);
}

// "9.8 of 24": peak memory of the card's GiB.
std::string memory_cell(const std::string& used, const std::string& capacity, bool translate) {
  return translate ? i18n::format_message(i18n::trc("plan memory cell", "{} of {}"), "{} of {}", used, capacity)
                   : fmt::format("{} of {}", used, capacity);
}

// `translate`: headers, notes and words in the reader's language (the text table); CSV keeps English.
report::Table detail_table(const estimate::Sweep& results, bool translate) {
  const auto T = [translate](const char* english) { return translate ? i18n::tr(english) : std::string(english); };
  const workload::Workload& w = results.workload;
  const auto& predictions = results.predictions;
  const char* unit = w.throughput_unit();
  report::Table table;
  table.columns = {{"GPU", "", report::Align::left},
                   {T(i18n::N_("batch")), ""},
                   {T(i18n::N_("accum")), "", report::Align::right, 1},
                   {T(i18n::N_("fits")), "", report::Align::left},
                   {T(i18n::N_("memory")), T(i18n::N_("GiB of VRAM"))},
                   {T(i18n::N_("max batch")), ""},
                   {T(i18n::N_("throughput")), unit},
                   {T(i18n::N_("80% range")), unit},
                   {T(i18n::N_("step")), "ms"},
                   {T(i18n::N_("epoch")), "", report::Align::right, 2},
                   {T(i18n::N_("energy")), "kWh/epoch", report::Align::right, 2},
                   {T(i18n::N_("bound")), "", report::Align::left, 3}};
  if (w.domain == workload::Domain::language) {
    table.columns.insert(table.columns.begin() + 8, {"tokens/s", "", report::Align::right, 1});
  }
  for (const auto& p : predictions) {
    std::vector<std::string> row{
        card_name(p, results),
        report::format_number(p.config.batch_per_gpu),
        report::format_number(p.config.accumulation_steps),
        p.fits ? T(i18n::N_("yes")) : T(i18n::N_("NO")),
        memory_cell(report::format_number(units::to_gib(p.memory.total_bytes()), 1),
                    report::format_number(units::to_gib(p.capacity_bytes), 0), translate),
        report::format_number(p.max_batch),
        p.fits ? throughput_text(p.throughput) : "OOM",
        p.fits ? throughput_text(p.throughput_low) + "-" + throughput_text(p.throughput_high) : T(i18n::N_("n/a"))};
    if (w.domain == workload::Domain::language) {
      row.push_back(p.tokens_per_s && p.fits ? report::format_number(*p.tokens_per_s) : T(i18n::N_("n/a")));
    }
    row.push_back(p.fits ? report::format_number(p.time.step_s * 1e3, 1) : T(i18n::N_("n/a")));
    row.push_back(p.epoch_time_s && p.fits ? report::format_duration(*p.epoch_time_s) : T(i18n::N_("n/a")));
    row.push_back(p.energy_wh_per_epoch && p.fits ? report::format_number(*p.energy_wh_per_epoch / 1000, 2)
                                                  : T(i18n::N_("n/a")));
    row.push_back(translate ? bound_label(p.time.bound) : std::string(estimate::to_string(p.time.bound)));
    table.add_row(row);
  }
  table.notes.push_back(T(
      i18n::N_("Throughput per GPU; energy at TDP (an upper bound); accum = gradient accumulation steps per optimizer "
               "step.")));
  table.notes.push_back(
      T(i18n::N_("80% range: where 80% of published runs fell that the model was not fitted on (leave-one-GPU-out; "
                 "gpusage validate --cv gpu).")));
  return table;
}

// The cards ranked at their best fitting configuration in this plan; empty for fewer than two cards.
std::string ranking_text(const estimate::Sweep& results, int width) {
  const auto& predictions = results.predictions;
  // A language model's cards are compared in tokens/s (a sequence per second rounds to "2 / 1 / 1").
  const bool tokens = results.workload.domain == workload::Domain::language;
  const char* unit = tokens ? "tokens/s" : results.workload.throughput_unit();
  std::string out;
  // In the sweep's GPU order, so that cards with equal throughput keep it (a map keyed by address did not).
  std::vector<const estimate::Prediction*> ranked;
  for (const auto& p : predictions) {
    if (!p.fits) continue;
    auto it = std::find_if(ranked.begin(), ranked.end(), [&](auto* r) { return r->gpu == p.gpu; });
    if (it == ranked.end()) {
      ranked.push_back(&p);
    } else if (p.throughput > (*it)->throughput) {
      *it = &p;
    }
  }
  if (ranked.size() > 1) {
    std::stable_sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->throughput > b->throughput; });
    report::Table rank;
    rank.columns = {{"#", ""},
                    {"GPU", "", report::Align::left},
                    {i18n::tr("batch"), ""},
                    {i18n::tr("throughput"), unit},
                    {i18n::tr("per $1000"), unit},
                    {i18n::tr("per 100 W"), unit}};
    int i = 0;
    for (auto* p : ranked) {
      const double rate = tokens && p->tokens_per_s ? *p->tokens_per_s : p->throughput;
      // Three significant figures at least: a rate per $1000 or per 100 W of a slow model is never 0.
      rank.add_row({std::to_string(++i), card_name(*p, results), report::format_number(p->config.batch_per_gpu),
                    report::format_significant(rate),
                    p->gpu->msrp_usd ? report::format_significant(rate / *p->gpu->msrp_usd * 1000) : i18n::tr("n/a"),
                    report::format_significant(rate / p->gpu->tdp_w * 100)});
    }
    rank.notes.push_back(
        i18n::tr("Prices are launch MSRPs, power is TDP, both from the catalog (gpusage gpus show ID)."));
    out += i18n::tr("\nRanking (best fitting batch per card):\n") + report::render_text(rank, width);
  }
  return out;
}

// For one prediction: the three memory figures users print, and the host side of CPU offload.
std::string memory_text(const estimate::Prediction& p) {
  const auto& m = p.memory;
  std::string out = i18n::trf(
      "\nPeak memory as measured: {} allocated (torch.cuda.max_memory_allocated), {} reserved "
      "(max_memory_reserved), {} in nvidia-smi (with the CUDA context{}).\n",
      units::format_gib(m.allocated_bytes()), units::format_gib(m.reserved_bytes()), units::format_gib(m.total_bytes()),
      p.config.world_size() > 1 ? i18n::tr(" and NCCL's buffers") : "");
  if (p.config.offload.any()) {
    out += i18n::trf(
        "CPU offload: {} of pinned host memory per GPU{}; {:.0f} ms of each step waits on PCIe "
        "copies{}.\n",
        units::format_gib(m.host_bytes),
        m.host_activation_bytes > 0 ? i18n::trf(" ({} of it activations)", units::format_gib(m.host_activation_bytes))
                                    : "",
        p.time.offload_s * 1e3,
        p.config.offload.steps_on_host()
            ? i18n::trf(" and the CPU's optimizer step takes {:.0f} ms", p.time.optimizer_s * 1e3)
            : "");
  }
  return out;
}

// Advice: for a single prediction all of it; otherwise, for each card on which not even batch 1 fits, the
// first remedy (the advice's first line only restates the table's "NO").
std::string advice_text(const estimate::Sweep& results) {
  const auto& predictions = results.predictions;
  std::string out;
  if (predictions.size() == 1) {
    if (!predictions.front().advice.empty()) out += i18n::tr("\nAdvice:\n");
    for (const auto& line : predictions.front().advice) out += "  - " + line + "\n";
  } else {
    std::vector<std::string> remedies;
    std::vector<std::string> advised;  // cards already given a line
    for (const auto& p : predictions) {
      if (p.max_batch > 0 || p.advice.size() < 2) continue;
      const std::string name = card_name(p, results);
      if (std::find(advised.begin(), advised.end(), name) != advised.end()) continue;
      advised.push_back(name);
      remedies.push_back(i18n::trf("{}: does not fit at batch 1; {}", name, p.advice[1]));
    }
    if (!remedies.empty()) out += i18n::tr("\nAdvice (cards on which nothing fits; plan one card for all of it):\n");
    for (const auto& line : remedies) out += "  - " + line + "\n";
  }
  return out;
}

// Where the 80% ranges come from, requests outside what published runs cover (once each), and the notes.
std::string ranges_and_notes_text(const estimate::Sweep& results) {
  const auto& predictions = results.predictions;
  std::string out;
  std::vector<std::pair<std::string, std::vector<std::string>>> bases;  // range text -> the cards it applies to
  std::vector<std::string> warnings;
  // A range that ends at the prediction (its cell's errors lean one way) ends at "0%", not "+0%" or "-0%".
  auto percent = [](double ratio) {
    const long rounded = std::lround((ratio - 1) * 100);
    return rounded == 0 ? std::string("0%") : fmt::format("{:+d}%", rounded);
  };
  for (const auto& p : predictions) {
    // The range is a fixed proportion of the prediction for a card (its cell's spread), at every batch.
    const std::string basis =
        p.throughput > 0 && p.throughput_high > p.throughput_low
            ? i18n::trf("{} to {} of the prediction ({})", percent(p.throughput_low / p.throughput),
                        percent(p.throughput_high / p.throughput), p.interval_basis)
            : p.interval_basis;
    auto it = std::find_if(bases.begin(), bases.end(), [&](const auto& b) { return b.first == basis; });
    if (it == bases.end()) it = bases.insert(bases.end(), {basis, {}});
    if (std::find(it->second.begin(), it->second.end(), card_name(p, results)) == it->second.end()) {
      it->second.push_back(card_name(p, results));
    }
    for (const auto& w : p.validation_warnings) {
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
  }
  if (!warnings.empty()) {
    out += i18n::tr("\nOutside the validated region:\n");
    for (const auto& w : warnings) out += "  - " + w + "\n";
  }
  out += i18n::tr(
      "\n80% range of each throughput (where 80% of published runs fell that the model was not fitted on; "
      "leave-one-GPU-out):\n");
  for (const auto& [basis, names] : bases) out += "  - " + text::join(names, ", ") + i18n::tr(": ") + basis + "\n";
  if (!results.notes.empty()) {
    out += i18n::tr("\nNotes:\n");
    for (const auto& note : results.notes) out += "  - " + note + "\n";
  }
  return out;
}

}  // namespace

// CSV: one row per prediction (card, batch), every figure a plain number in its own column (no thousands
// separators, no "x of y" or "a-b" cells, times in seconds), so that a spreadsheet reads them as numbers.
std::string plan_csv(const estimate::Sweep& results) {
  const char* unit = results.workload.throughput_unit();
  report::Table table;
  for (const std::string& header :
       {std::string("gpu"), std::string("gpu_name"), std::string("gpus"), std::string("batch"),
        std::string("accumulation_steps"), std::string("precision"), std::string("fits"), std::string("memory_gib"),
        std::string("vram_gib"), std::string("max_batch"), fmt::format("throughput_{}", unit),
        fmt::format("throughput_low_{}", unit), fmt::format("throughput_high_{}", unit), std::string("tokens_per_s"),
        std::string("step_ms"), std::string("epoch_s"), std::string("energy_kwh_per_epoch"), std::string("bound")}) {
    table.columns.push_back({header, ""});
  }
  const auto number = [](double v, int decimals) { return report::format_number(v, decimals, HUGE_VAL); };
  const auto optional = [&](const std::optional<double>& v, bool shown, int decimals) {
    return v && shown ? number(*v, decimals) : std::string();
  };
  for (const auto& p : results.predictions) {
    table.add_row(
        {p.gpu->id, p.gpu->name, std::to_string(p.config.world_size()), std::to_string(p.config.batch_per_gpu),
         std::to_string(p.config.accumulation_steps), catalog::to_string(p.config.precision), p.fits ? "true" : "false",
         number(units::to_gib(p.memory.total_bytes()), 2), number(units::to_gib(p.capacity_bytes), 2),
         std::to_string(p.max_batch), p.fits ? number(p.throughput, 2) : "", p.fits ? number(p.throughput_low, 2) : "",
         p.fits ? number(p.throughput_high, 2) : "", optional(p.tokens_per_s, p.fits, 0),
         p.fits ? number(p.time.step_s * 1e3, 2) : "", optional(p.epoch_time_s, p.fits, 0),
         optional(p.energy_wh_per_epoch ? std::optional<double>(*p.energy_wh_per_epoch / 1000) : std::nullopt, p.fits,
                  4),
         estimate::to_string(p.time.bound)});
  }
  return report::render_csv(table);
}

std::string plan_table(const estimate::Sweep& results, int width) {
  const workload::Workload& w = results.workload;
  const auto& predictions = results.predictions;
  if (predictions.empty()) return "";
  std::string out = i18n::trf("{}: {:.1f} M parameters, {:.2f} GFLOPs forward per sample{}, {} training, {}{}\n\n",
                              w.display_name, w.params() / 1e6, w.forward_flops() / 1e9,
                              w.domain == workload::Domain::vision ? i18n::trf(" at {} px", w.resolution)
                                                                   : i18n::trf(" at {} tokens", w.seq_len),
                              precisions_text(results), estimate::to_string(predictions.front().config.optimizer),
                              recipe_text(predictions.front().config, results));
  // What the setup did not say, before the figures that rest on it.
  if (!results.assumptions.empty()) out.pop_back();
  for (const std::string& line : results.assumptions) out += i18n::trf("assumed: {}", line) + "\n";
  if (!results.assumptions.empty()) out += "\n";
  const std::vector<int> batches = uniform_batches(predictions);
  out +=
      report::render_text(batches.size() > 1 ? batch_grid_table(results, batches) : detail_table(results, true), width);
  out += ranking_text(results, width);
  if (predictions.size() == 1) out += memory_text(predictions.front());
  out += advice_text(results);
  return out + ranges_and_notes_text(results);
}

}  // namespace gpusage::cli
