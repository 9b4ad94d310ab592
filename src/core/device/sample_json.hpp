// The JSON form of a Sample (one line of `gpusage monitor --format json` and of the JSON Lines log).
// Unsupported metrics are `null`. from_json is the inverse, used to replay a recorded trace.
#pragma once

#include <nlohmann/json.hpp>

#include "core/device/types.hpp"

namespace gpusage::device {

nlohmann::json to_json(const GpuSample& gpu);
nlohmann::json to_json(const HostSample& host);
nlohmann::json to_json(const Sample& sample);
// Throws nlohmann::json::exception on a malformed document, a number out of its field's range included.
Sample sample_from_json(const nlohmann::json& j);
// A GPU index or pid of a trace: a whole number within unsigned, else json::out_of_range naming `key`.
unsigned unsigned_from_json(const nlohmann::json& value, const char* key);

}  // namespace gpusage::device
