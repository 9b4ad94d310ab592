// gpusage validate FILE.csv: how far are plan's predictions from measured training runs?
// With --cv gpu|source|model every row is predicted by constants fitted without its group.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/validate_view.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/io.hpp"
#include "core/estimate/uncertainty.hpp"
#include "core/estimate/validate.hpp"

namespace gpusage::cli {

namespace {

struct ValidateOptions {
  std::string file;
  bool fit = false;
  std::string cv;
  bool summary_only = false;
  Format format = Format::table;
  std::string out;
  std::string intervals_out;
};

// The rows predicted: by constants fitted without each row's group (--cv), by constants fitted on every row
// (--fit), or by the shipped constants; `method` says which, for the report.
estimate::ValidationReport run_validation(const ValidateOptions& options,
                                          const std::vector<estimate::Measurement>& measurements,
                                          ValidateMethod& method) {
  const catalog::Catalog& catalog = catalog::Catalog::active();
  estimate::Calibration calibration;
  estimate::ValidationReport result;
  if (!options.cv.empty()) {
    const bool tty = isatty(STDERR_FILENO);
    result = estimate::cross_validate(measurements, catalog, estimate::prior_constants(),
                                      *estimate::parse_cv_group(options.cv), [tty](int done, int total) {
                                        if (tty) std::fprintf(stderr, "\rcross-validating: %d/%d groups", done, total);
                                        if (tty && done == total) std::fprintf(stderr, "\n");
                                      });
  } else {
    if (options.fit) {
      const estimate::ModelConstants before = calibration.constants;
      calibration.constants = estimate::fit_constants(measurements, catalog, estimate::prior_constants());
      method.changes = estimate::describe_changes(before, calibration.constants);
    }
    result = estimate::validate(measurements, catalog, calibration);
  }
  method.constants = calibration.constants;
  method.cv = options.cv;
  method.fit = options.fit;
  method.text = result.cv ? fmt::format("leave-one-{}-out: {} groups, each predicted by constants fitted on the others",
                                        options.cv, result.groups)
                : options.fit
                    ? std::string("in-sample: constants fitted on these rows (--fit)")
                    : std::string("shipped constants (fitted on data/validation/published.csv: in-sample there)");
  return result;
}

void validate_command(const ValidateOptions& options) {
  if (options.fit && !options.cv.empty()) {
    throw InputError(i18n::tr("--fit and --cv do not go together: --cv refits for every held-out group by itself"));
  }
  if (!options.intervals_out.empty() && options.cv.empty()) {
    throw InputError(i18n::tr("--intervals-out needs --cv: intervals come from out-of-sample errors only"));
  }
  const auto measurements = estimate::parse_measurements(io::read_file(options.file, ""), options.file);
  ValidateMethod method;
  const estimate::ValidationReport result = run_validation(options, measurements, method);
  if (!options.intervals_out.empty()) {
    emit(estimate::interval_table_json(estimate::interval_table(result), options.file), options.intervals_out);
  }
  if (options.format == Format::json) {
    emit(validate_json(result, method).dump(2) + "\n", options.out);
  } else if (options.format == Format::csv) {
    emit(validate_csv(result), options.out);
  } else {
    emit(validate_text(result, method, options.summary_only), options.out);
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto state = std::make_shared<ValidateOptions>();
  auto* command = app.add_subcommand(
      "validate",
      "Compare plan's predictions with measured training runs and report the error.\n"
      "FILE is CSV with columns model,gpu,precision,batch_per_gpu,metric,value (optional: num_gpus, gpus_per_node\n"
      "(the GPUs in one node; empty: up to 8), resolution, seq_len, tokens (per sample computed, for unpadded or\n"
      "length-binned data), accumulation (micro-batches per optimizer step), fails_at,\n"
      "attention flash|eager, parallel ddp|zero1|zero2|fsdp|hsdp, offload optimizer|params|activations (+-joined),\n"
      "layout nhwc|nchw, kernels eager|fused (language models' elementwise code: Hugging Face's eager Python, or "
      "fused),\n"
      "task squad|pretrain|finetune, amp o2|autocast, checkpointing none|full|selective|every:N, gpu_memory_gb\n"
      "(the card's own, when it is a variant of the catalog GPU), software_date YYYY-MM, framework, source; the\n"
      "fine-tuning recipe as plan's options: optimizer, master_weights fp32|bf16, loss plain|plain16|chunked|fused,\n"
      "lora_rank, qlora yes|no, lora_targets attn|mlp|all, optimizer_in_backward yes|no, clip_grad_norm yes|no,\n"
      "optimizer_impl fused|foreach|loop, empty: the software's default; kbit_upcast yes|no, no: a QLoRA base not\n"
      "prepared by PEFT's prepare_model_for_kbit_training; fp8_recipe delayed|tensorwise|producer-amax, empty:\n"
      "delayed; attention_kernel flash2|flash1|cudnn, empty: flash2).\n"
      "metric:\n"
      "train_throughput (samples/s per GPU), peak_memory (bytes, as nvidia-smi counts them), peak_allocated /\n"
      "peak_reserved (torch.cuda.max_memory_allocated / max_memory_reserved) or max_batch (value = largest batch\n"
      "that ran, fails_at = the smallest that failed). task finetune rows are also summarised apart, per method\n"
      "(full, lora, qlora) and GPU class, with how many measured speeds lie inside the 80% range plan prints.\n"
      "Rows with software from before 2021-01, and data-parallel rows\n"
      "more than 10% faster per GPU than the same run on one GPU, are reported as their own groups.\n"
      "Without --cv every row is predicted with the shipped constants, which were fitted on\n"
      "data/validation/published.csv: those errors are in-sample. --cv gpu holds out one GPU at a time,\n"
      "refits on the rest and predicts it: the honest figure for a card you do not own.\n"
      "Examples:\n"
      "  gpusage validate data/validation/published.csv --cv gpu --summary\n"
      "  gpusage validate my-runs.csv --format json");
  command->add_option("file", state->file, i18n::N_("Measurements (CSV)"))->required()->check(CLI::ExistingFile);
  command
      ->add_option("--cv", state->cv,
                   i18n::N_("Leave one group out: gpu, source (the publishing repository or site) or model"))
      ->transform(one_of({"gpu", "source", "model"}));
  command->add_flag("--fit", state->fit,
                    i18n::N_("Fit the speed constants on all current-software throughput rows and the allocator's "
                             "unreleasable share on the memory verdicts, print what moved, and validate with them "
                             "(in-sample)"));
  command->add_flag("--summary", state->summary_only,
                    i18n::N_("Print the summaries and the per-cell table, not every row"));
  command->add_option("--intervals-out", state->intervals_out,
                      i18n::N_("With --cv: write the per-cell error table plan's intervals use (JSON; the shipped one "
                               "is data/validation/intervals.json)"));
  add_format_option(*command, state->format, {Format::table, Format::csv, Format::json});
  command->add_option("--out", state->out, i18n::N_("Write the output to FILE instead of stdout"));
  command->callback([state] { validate_command(*state); });
}

}  // namespace gpusage::cli
