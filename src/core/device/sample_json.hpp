// The JSON form of a Sample (one line of `gpusage monitor --format json` and of the JSON Lines log).
// Unsupported metrics are `null`. from_json is the inverse, used to replay a recorded trace.
#pragma once

#include <nlohmann/json.hpp>

#include "core/device/types.hpp"

namespace gpusage::device {

nlohmann::json to_json(const GpuSample& gpu);
nlohmann::json to_json(const HostSample& host);
nlohmann::json to_json(const Sample& sample);
// Throws nlohmann::json::exception on a malformed document.
Sample sample_from_json(const nlohmann::json& j);

}  // namespace gpusage::device
