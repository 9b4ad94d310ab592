// gpusage doctor: what is wrong with this machine's GPU setup, and (with --log) with this training run.
// The core probes and judges (src/core/diagnose); this file parses options and renders the report.
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/catalog/catalog.hpp"
#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/doctor.hpp"
#include "core/estimate/planner.hpp"
#include "core/workload/workload.hpp"

namespace gpusage::cli {

namespace {

using diagnose::Category;
using diagnose::DoctorReport;
using diagnose::EnvironmentFacts;
using diagnose::Finding;

std::string or_missing(const std::optional<diagnose::Installed>& value) {
  if (!value) return i18n::tr("not found");
  return fmt::format("{} ({})", value->version, value->where);
}

// "sm_50 sm_60 … sm_90": the ends of a long list are what a reader compares against.
std::string short_arch_list(const std::vector<std::string>& list) {
  if (list.size() <= 4) return text::join(list, " ");
  return fmt::format("{} {} … {} {}", list[0], list[1], list[list.size() - 2], list.back());
}

std::string environment_text(const EnvironmentFacts& f) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (f.driver_version) {
    std::string cuda = f.cuda_driver_version ? i18n::trf("CUDA {}, ", f.cuda_driver_version->to_string()) : "";
    rows.emplace_back(i18n::tr("NVIDIA driver"), i18n::trf("{} ({}from {})", *f.driver_version, cuda, f.driver_from));
  } else {
    rows.emplace_back(i18n::tr("NVIDIA driver"), i18n::tr("not found"));
  }
  if (f.system.gpus.empty()) {
    rows.emplace_back(i18n::tr("GPUs"),
                      f.system.available ? i18n::tr("none") : i18n::tr("not available: ") + f.system.message);
  }
  for (const auto& g : f.system.gpus) {
    std::string line = g.name;
    if (g.compute_capability)
      line += fmt::format(", sm_{}{}", g.compute_capability->major, g.compute_capability->minor);
    if (g.memory_total_bytes) line += ", " + units::format_gib(static_cast<double>(*g.memory_total_bytes));
    rows.emplace_back(fmt::format("GPU {}", g.index), line);
  }
  rows.emplace_back(i18n::tr("CUDA toolkit"), or_missing(f.nvcc));
  rows.emplace_back("cuDNN", or_missing(f.cudnn));
  rows.emplace_back("NCCL", or_missing(f.nccl));
  rows.emplace_back("LibTorch", or_missing(f.libtorch));
  const auto& py = f.python;
  if (py.path.empty()) {
    rows.emplace_back("Python", i18n::trf("'{}' not found", py.interpreter));
  } else {
    rows.emplace_back("Python", i18n::trf("{} ({}){}", py.version.value_or("?"), py.path,
                                          py.timed_out ? i18n::tr(", stopped at the deadline") : ""));
    if (py.torch_version) {
      rows.emplace_back("PyTorch", i18n::trf("{}, CUDA {}, compiled for {}", *py.torch_version,
                                             py.torch_cuda.value_or(i18n::tr("none (CPU-only)")),
                                             py.torch_arch_list.empty() ? i18n::tr("no GPU architectures")
                                                                        : short_arch_list(py.torch_arch_list)));
    } else {
      rows.emplace_back("PyTorch", py.torch_reported ? i18n::tr("not installed") : i18n::tr("not checked"));
    }
    if (py.packages_reported) {
      rows.emplace_back("TensorFlow", py.tensorflow ? *py.tensorflow
                                                    : (py.tensorflow_gpu ? "tensorflow-gpu " + *py.tensorflow_gpu
                                                                         : std::string(i18n::tr("not installed"))));
    }
  }
  std::string out = i18n::tr("Environment\n");
  for (const auto& [key, value] : rows) out += "  " + text::pad_right(key, 14) + " " + value + "\n";
  return out;
}

std::string heading(Category c) {
  switch (c) {
    case Category::environment: return i18n::tr("Environment findings");
    case Category::gpu: return i18n::tr("GPU findings");
    case Category::log: return i18n::tr("Log findings");
  }
  return i18n::tr("Findings");
}

// One category's findings under its heading.
std::string findings_text(const DoctorReport& report, Category c) {
  std::vector<const Finding*> group;
  for (const auto& f : report.findings) {
    if (f.category == c) group.push_back(&f);
  }
  std::string out;
  if (c == Category::log && report.log_path) {
    const std::string name = *report.log_path == "-" ? i18n::tr("standard input") : *report.log_path;
    out += i18n::trf("{} ({}, {} lines)\n", heading(c), name, report.log_lines.value_or(0));
  } else if (group.empty()) {
    return c == Category::log ? "" : i18n::trf("{}: none\n", heading(c));
  } else {
    out += fmt::format("{}\n", heading(c));
  }
  for (const Finding* f : group) {
    out += i18n::trf("  [{}] {}\n", diagnose::severity_label(f->severity), f->title);
    if (!f->evidence.empty()) out += i18n::trf("      evidence: {}\n", f->evidence);
    out += i18n::trf("      fix: {}\n", f->fix);
    out += i18n::trf("      source: {} <{}>\n", f->source_title, f->source_url);
  }
  return out;
}

std::string report_text(const DoctorReport& report) {
  // With a log, its findings first: they are what was asked; the machine's environment follows.
  std::string out;
  if (report.log_lines) out += findings_text(report, Category::log) + "\n";
  out += environment_text(report.facts);
  for (Category c : {Category::environment, Category::gpu}) out += "\n" + findings_text(report, c);
  std::size_t errors = 0;
  std::size_t warnings = 0;
  for (const auto& f : report.findings) {
    errors += f.severity == diagnose::Severity::error;
    warnings += f.severity == diagnose::Severity::warning;
  }
  out += i18n::trf("\n{} error(s), {} warning(s), {} finding(s) in all\n", errors, warnings, report.findings.size());
  return out;
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  struct State {
    std::string log;
    std::string model;
    std::optional<int> batch;
    std::string precision;
    std::string gpu;
    std::string python = "python3";
    std::optional<double> python_timeout;
    Format format = Format::table;
    std::string out;
  };
  auto state = std::make_shared<State>();
  auto* command = app.add_subcommand(
      "doctor",
      "Check the GPU training setup (driver, CUDA, cuDNN, NCCL, PyTorch/TensorFlow, GPU settings) and,\n"
      "with --log, explain a failed training run (OOM, NaN, NCCL, DataLoader, cuDNN, no kernel image).\n"
      "Examples:\n"
      "  gpusage doctor\n"
      "  gpusage doctor --log train.log --model resnet50 --batch 256 --gpu rtx4090\n"
      "  cat train.log | gpusage doctor --log -\n"
      "  gpusage doctor --python ~/venv/bin/python --format json");
  command->add_option("--log", state->log, i18n::N_("Training log to read ('-': standard input, e.g. a pasted log)"));
  command->add_option("--model", state->model,
                      i18n::N_("Zoo model of the run, for the OOM fixes (e.g. resnet50, gpt2)"));
  command->add_option("--batch", state->batch, i18n::N_("Per-GPU batch of the run (default: what the log prints)"))
      ->check(CLI::Range(1, 1 << 24));
  command
      ->add_option("--precision", state->precision,
                   i18n::N_("fp32 | tf32 | fp16 | bf16 | fp8 of the run (default fp32)"))
      ->transform(one_of({"fp32", "tf32", "fp16", "bf16", "fp8"}));
  command->add_option("--gpu", state->gpu, i18n::N_("GPU of the run (default: the capacity the log reports)"));
  command->add_option("--python", state->python, i18n::N_("Python interpreter to ask about PyTorch and TensorFlow"))
      ->capture_default_str();
  command->add_option("--python-timeout", state->python_timeout, i18n::N_("Seconds before the Python probe is stopped"))
      ->check(CLI::Range(0.1, 600.0));
  add_format_option(*command, state->format, {Format::table, Format::json});
  command->add_option("--out", state->out, i18n::N_("Write the report to FILE instead of stdout"));
  command->callback([state] {
    const auto& rules = diagnose::RuleTable::builtin();
    diagnose::DoctorRequest request;
    request.probe.python = state->python;
    request.probe.python_timeout_s = state->python_timeout.value_or(rules.thresholds().python_timeout_s);
    // Bad names are input errors even when the log turns out to need them not.
    std::optional<workload::Workload> workload;
    if (!state->model.empty()) workload = workload::build(state->model);
    // The catalog only for a named card: parsing its TOML is most of doctor's start-up heap (issue 54: peak memory).
    if (!state->gpu.empty()) request.run.gpu = &catalog::Catalog::active().resolve(state->gpu);
    request.run.workload = workload ? &*workload : nullptr;
    request.run.batch = state->batch;
    if (!state->precision.empty()) request.run.precision = catalog::parse_precision(state->precision);
    if (state->log == "-") {
      request.log_path = "-";  // `--log -`: standard input (a pasted log)
      request.log_stream = &std::cin;
    } else if (!state->log.empty()) {
      request.log_path = state->log;
      diagnose::check_log_file(state->log);  // a bad path is an input error before the probe runs
    }
    // GPUSAGE_DOCTOR_ROOT prefixes every probed file and the CUDA directories: a test hook that points the
    // live prober at a fixture tree (tests/fixtures/doctor/envs/*).
    diagnose::HostOptions host;
    if (const char* root = std::getenv("GPUSAGE_DOCTOR_ROOT")) host.root = root;
    auto env = diagnose::open_host_environment(host);
    const DoctorReport report = diagnose::run_doctor(*env, request, rules);
    emit(state->format == Format::json ? diagnose::to_json(report).dump(2) + "\n" : report_text(report), state->out);
  });
}

}  // namespace gpusage::cli
