#include "monitor/alerts.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/common/i18n.hpp"
#include "core/common/units.hpp"

namespace gpusage::monitor {

std::string_view to_string(AlertKind kind) {
  switch (kind) {
    case AlertKind::input_bottleneck: return "input_bottleneck";
    case AlertKind::thermal_throttle: return "thermal_throttle";
    case AlertKind::power_throttle: return "power_throttle";
    case AlertKind::memory_nearly_full: return "memory_nearly_full";
    case AlertKind::ecc_errors: return "ecc_errors";
    case AlertKind::retired_pages: return "retired_pages";
    case AlertKind::remapped_rows: return "remapped_rows";
    case AlertKind::xid_error: return "xid_error";
  }
  return "unknown";
}

nlohmann::json to_json(const Alert& alert) {
  nlohmann::json j = {
      {"kind", to_string(alert.kind)}, {"gpu", alert.gpu},         {"uuid", alert.uuid},
      {"severity", alert.severity},    {"message", alert.message}, {"since_unix_time_s", alert.since_unix_time_s}};
  if (alert.xid) j["xid"] = *alert.xid;
  return j;
}

namespace {

// The process holding the most GPU memory, if any reports a figure.
const device::GpuProcess* biggest_process(const device::GpuSample& gpu) {
  const device::GpuProcess* best = nullptr;
  for (const auto& p : gpu.processes)
    if (p.used_memory_bytes && (!best || *p.used_memory_bytes > *best->used_memory_bytes)) best = &p;
  return best;
}

std::string process_label(const device::GpuProcess& p) {
  return p.name.empty() ? fmt::format("pid {}", p.pid) : fmt::format("{} (pid {})", p.name, p.pid);
}

}  // namespace

AlertEngine::Update AlertEngine::evaluate(const device::Sample& sample) {
  Update update;
  const double now = sample.unix_time_s;
  // Sets the state of (gpu, kind): `message` empty means the condition does not hold.
  // `again`: a counter rose, so an active alert is raised once more (a new event, not the same one held).
  auto report = [&](const device::GpuSample& gpu, AlertKind kind, std::optional<std::string> message,
                    const char* severity, double sustain_s = 0, bool again = false) {
    State& state = states_[{gpu.index, kind}];
    if (!message) {
      state = State{};
      return;
    }
    if (state.condition_since_s < 0) state.condition_since_s = now;
    if (now - state.condition_since_s + 1e-9 < sustain_s) return;
    Alert alert{kind, gpu.index, gpu.uuid, severity, std::move(*message), 0};
    if (!state.active) {
      state.active = true;
      state.active_since_s = now;
      alert.since_unix_time_s = now;
      update.raised.push_back(alert);
    } else if (again) {
      alert.since_unix_time_s = now;
      update.raised.push_back(alert);
    }
    alert.since_unix_time_s = state.active_since_s;
    update.active.push_back(std::move(alert));
  };

  for (const device::GpuSample& gpu : sample.gpus) {
    // Input bottleneck (DataLoader starvation): the GPU waits while a training process holds its memory.
    std::optional<std::string> starving;
    const device::GpuProcess* job = biggest_process(gpu);
    if (gpu.utilization_gpu_percent && *gpu.utilization_gpu_percent < config_.low_utilization_percent && job &&
        *job->used_memory_bytes >= config_.training_process_memory_bytes) {
      std::string cpu = job->cpu_percent ? i18n::trf(", its CPU use is {:.0f}% of a core", *job->cpu_percent) : "";
      starving = i18n::trf(
          "GPU {}: utilization {}% for at least {:g} s while {} holds {}{}: likely an input bottleneck. Try more "
          "DataLoader workers (num_workers), pin_memory=True, persistent_workers=True, and caching decoded data.",
          gpu.index, *gpu.utilization_gpu_percent, config_.low_utilization_window_s, process_label(*job),
          units::format_bytes(static_cast<double>(*job->used_memory_bytes)), cpu);
    }
    report(gpu, AlertKind::input_bottleneck, starving, "warning", config_.low_utilization_window_s);

    std::uint64_t mask = gpu.throttle_mask.value_or(0);
    std::optional<std::string> thermal;
    if (mask & (device::throttle::thermal_mask | device::throttle::hw_slowdown)) {
      std::string temperature = gpu.temperature_c ? i18n::trf(" at {} C", *gpu.temperature_c) : "";
      thermal = i18n::trf(
          "GPU {}: clocks throttled ({}){}: the GPU is too hot. Check airflow, fan curves and "
          "dust; a throttled GPU trains slower for the same power.",
          gpu.index,
          device::throttle::describe(mask & (device::throttle::thermal_mask | device::throttle::hw_slowdown)),
          temperature);
    }
    report(gpu, AlertKind::thermal_throttle, thermal, "warning");

    std::optional<std::string> power;
    if (mask & device::throttle::power_mask) {
      std::string figures = gpu.power_w && gpu.power_limit_w
                                ? i18n::trf(" (drawing {:.0f} W of a {:.0f} W limit)", *gpu.power_w, *gpu.power_limit_w)
                                : "";
      power = i18n::trf(
          "GPU {}: clocks held back by the power limit{}. Expected at full load; if the limit was "
          "lowered (nvidia-smi -q -d POWER), raising it buys speed.",
          gpu.index, figures);
    }
    report(gpu, AlertKind::power_throttle, power, "warning");

    std::optional<std::string> memory;
    if (auto fraction = gpu.memory_used_fraction(); fraction && *fraction > config_.memory_full_fraction)
      memory = i18n::trf(
          "GPU {}: memory {:.0f}% full ({} of {}): an out-of-memory error is near. Reduce the "
          "batch size (use gradient accumulation), enable activation checkpointing or mixed precision.",
          gpu.index, *fraction * 100, units::format_bytes(static_cast<double>(*gpu.memory_used_bytes)),
          units::format_bytes(static_cast<double>(*gpu.memory_total_bytes)));
    report(gpu, AlertKind::memory_nearly_full, memory, "critical");

    // GPU health: ECC, retired pages, remapped rows (counters against the watch's first reading), XID events.
    for (HealthCondition& c : health_[gpu.index].evaluate(gpu))
      report(gpu, c.kind, std::move(c.message), c.severity, 0, c.rose);
    for (Alert& xid : xid_alerts(gpu, now)) {
      update.raised.push_back(xid);
      update.active.push_back(std::move(xid));
    }
  }
  return update;
}

}  // namespace gpusage::monitor
