// The training pitfall guide, live: conditions worth interrupting a person for, each with a plain-language
// line and a JSON event. Evaluated on every sample; an alert is "raised" when its condition starts holding and
// stays "active" until it stops.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/device/types.hpp"
#include "monitor/health_alerts.hpp"

namespace gpusage::monitor {

// ecc_errors, retired_pages, remapped_rows and xid_error are the GPU health rules (health_alerts.hpp).
enum class AlertKind {
  input_bottleneck,
  thermal_throttle,
  power_throttle,
  memory_nearly_full,
  ecc_errors,
  retired_pages,
  remapped_rows,
  xid_error
};
std::string_view to_string(AlertKind kind);

struct AlertConfig {
  // Input bottleneck: GPU utilisation below this for at least `low_utilization_window_s` while a process
  // holds at least `training_process_memory_bytes` (a training job, not a desktop or a notebook kernel).
  double low_utilization_percent = 30;
  double low_utilization_window_s = 30;
  std::uint64_t training_process_memory_bytes = 1ULL << 30;
  // Memory: above this fraction of the total an allocation spike (a longer batch, the optimizer's first step)
  // is likely to hit CUDA out-of-memory.
  double memory_full_fraction = 0.95;
};

struct Alert {
  AlertKind kind{};
  unsigned gpu = 0;
  std::string uuid;
  std::string severity;  // "warning" or "critical"
  std::string message;   // one plain-language line, with the suggested fix
  double since_unix_time_s = 0;
  std::optional<std::uint64_t> xid = std::nullopt;  // xid_error: the XID number (one alert per event)
};

nlohmann::json to_json(const Alert& alert);

class AlertEngine {
 public:
  explicit AlertEngine(AlertConfig config = {}) : config_(config) {}

  struct Update {
    std::vector<Alert> active;  // everything holding now (message refreshed with current values)
    std::vector<Alert> raised;  // those that started with this sample
  };
  Update evaluate(const device::Sample& sample);

 private:
  struct State {
    double condition_since_s = -1;  // when the condition started holding; -1 when not holding
    bool active = false;
    double active_since_s = 0;
  };
  AlertConfig config_;
  std::map<std::pair<unsigned, AlertKind>, State> states_;
  std::map<unsigned, GpuHealthWatch> health_;
};

}  // namespace gpusage::monitor
