// The views of a sample: the aligned summary (--once, and the streaming table), CSV rows, a JSON document
// (one line of --format json / the JSON Lines log), and the Prometheus text exposition. Pure functions: the
// front end decides where the text goes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/device/types.hpp"
#include "monitor/alerts.hpp"

namespace gpusage::monitor {

// nvidia-smi-like summary: versions and host line, one row per GPU, throttle reasons in words, the process
// table (with host CPU use) and the active alerts. `width` is the terminal width.
std::string render_summary(const device::Sample& sample, const std::vector<Alert>& alerts, int width = 120);

// CSV: one row per GPU (host figures repeated on each), or one row with empty GPU cells when there is none.
std::string csv_header();
std::string csv_rows(const device::Sample& sample);

// device::to_json(sample) plus "alerts": the active alerts as JSON events.
nlohmann::json sample_json(const device::Sample& sample, const std::vector<Alert>& alerts);

// Prometheus text format 0.0.4. Metric names follow NVIDIA dcgm-exporter's (DCGM_FI_DEV_*) where the meaning
// and unit are the same; others are gpusage_*. Labels: gpu, uuid, name. Unsupported metrics are left out
// (Prometheus has no null).
std::string prometheus_text(const device::Sample& sample, const std::vector<Alert>& alerts);

}  // namespace gpusage::monitor
