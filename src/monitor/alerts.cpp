#include "monitor/alerts.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/common/units.hpp"

namespace gpusage::monitor {

std::string_view to_string(AlertKind kind) {
  switch (kind) {
    case AlertKind::input_bottleneck: return "input_bottleneck";
    case AlertKind::thermal_throttle: return "thermal_throttle";
    case AlertKind::power_throttle: return "power_throttle";
    case AlertKind::memory_nearly_full: return "memory_nearly_full";
    case AlertKind::ecc_errors: return "ecc_errors";
  }
  return "unknown";
}

nlohmann::json to_json(const Alert& alert) {
  return {{"kind", to_string(alert.kind)}, {"gpu", alert.gpu},       {"uuid", alert.uuid},
          {"severity", alert.severity},    {"message", alert.message}, {"since_unix_time_s", alert.since_unix_time_s}};
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
  auto report = [&](const device::GpuSample& gpu, AlertKind kind, std::optional<std::string> message,
                    const char* severity, double sustain_s = 0) {
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
      std::string cpu = job->cpu_percent ? fmt::format(", its CPU use is {:.0f}% of a core", *job->cpu_percent) : "";
      starving = fmt::format(
          "GPU {}: utilization {}% for at least {:g} s while {} holds {}{}: likely an input bottleneck. Try more "
          "DataLoader workers (num_workers), pin_memory=True, persistent_workers=True, and caching decoded data.",
          gpu.index, *gpu.utilization_gpu_percent, config_.low_utilization_window_s, process_label(*job),
          units::format_bytes(static_cast<double>(*job->used_memory_bytes)), cpu);
    }
    report(gpu, AlertKind::input_bottleneck, starving, "warning", config_.low_utilization_window_s);

    std::uint64_t mask = gpu.throttle_mask.value_or(0);
    std::optional<std::string> thermal;
    if (mask & (device::throttle::thermal_mask | device::throttle::hw_slowdown)) {
      std::string temperature = gpu.temperature_c ? fmt::format(" at {} C", *gpu.temperature_c) : "";
      thermal = fmt::format("GPU {}: clocks throttled ({}){}: the GPU is too hot. Check airflow, fan curves and "
                            "dust; a throttled GPU trains slower for the same power.",
                            gpu.index, device::throttle::describe(mask & (device::throttle::thermal_mask |
                                                                          device::throttle::hw_slowdown)),
                            temperature);
    }
    report(gpu, AlertKind::thermal_throttle, thermal, "warning");

    std::optional<std::string> power;
    if (mask & device::throttle::power_mask) {
      std::string figures = gpu.power_w && gpu.power_limit_w
                                ? fmt::format(" (drawing {:.0f} W of a {:.0f} W limit)", *gpu.power_w, *gpu.power_limit_w)
                                : "";
      power = fmt::format("GPU {}: clocks held back by the power limit{}. Expected at full load; if the limit was "
                          "lowered (nvidia-smi -q -d POWER), raising it buys speed.",
                          gpu.index, figures);
    }
    report(gpu, AlertKind::power_throttle, power, "warning");

    std::optional<std::string> memory;
    if (auto fraction = gpu.memory_used_fraction(); fraction && *fraction > config_.memory_full_fraction)
      memory = fmt::format("GPU {}: memory {:.0f}% full ({} of {}): an out-of-memory error is near. Reduce the "
                           "batch size (use gradient accumulation), enable activation checkpointing or mixed precision.",
                           gpu.index, *fraction * 100, units::format_bytes(static_cast<double>(*gpu.memory_used_bytes)),
                           units::format_bytes(static_cast<double>(*gpu.memory_total_bytes)));
    report(gpu, AlertKind::memory_nearly_full, memory, "critical");

    // ECC: any uncorrected error since the driver loaded, or corrected errors rising while we watch.
    std::optional<std::string> ecc;
    if (gpu.ecc_corrected_volatile) first_corrected_ecc_.try_emplace(gpu.index, *gpu.ecc_corrected_volatile);
    std::uint64_t corrected_new =
        gpu.ecc_corrected_volatile ? *gpu.ecc_corrected_volatile - std::min(*gpu.ecc_corrected_volatile,
                                                                             first_corrected_ecc_[gpu.index])
                                   : 0;
    if (gpu.ecc_uncorrected_volatile.value_or(0) > 0)
      ecc = fmt::format("GPU {}: {} uncorrected ECC memory errors: results may be corrupt and the job may crash. "
                        "Stop, check `nvidia-smi -q -d ECC`, and have the GPU reset or serviced.",
                        gpu.index, *gpu.ecc_uncorrected_volatile);
    else if (corrected_new > 0)
      ecc = fmt::format("GPU {}: {} new corrected ECC errors: memory is degrading; watch for uncorrected ones.",
                        gpu.index, corrected_new);
    report(gpu, AlertKind::ecc_errors, ecc, ecc && gpu.ecc_uncorrected_volatile.value_or(0) > 0 ? "critical" : "warning");
  }
  return update;
}

}  // namespace gpusage::monitor
