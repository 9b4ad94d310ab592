// Replays a recorded JSON Lines trace (`gpusage monitor --format json` output) through GpuBackend, for demos
// (`--simulate FILE`) and for tests of everything above the device layer.
#include <fmt/format.h>

#include <fstream>

#include "core/common/error.hpp"
#include "core/device/backend.hpp"
#include "core/device/sample_json.hpp"

namespace gpusage::device {

namespace {

class ReplayBackend final : public GpuBackend {
 public:
  explicit ReplayBackend(const std::string& path) {
    std::ifstream in(path);
    if (!in)
      throw InputError(
          fmt::format("--simulate: cannot read '{}' (expected a JSON Lines trace as written "
                      "by `gpusage monitor --format json`)",
                      path));
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        samples_.push_back(sample_from_json(nlohmann::json::parse(line)));
      } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("--simulate: '{}' line {} is not a gpusage sample: {}", path, number, e.what()));
      }
    }
    if (samples_.empty()) throw InputError(fmt::format("--simulate: '{}' holds no samples", path));
    const Sample& first = samples_.front();
    info_.backend = "replay";
    info_.available = first.gpu_available;
    info_.message = first.gpu_message;
    info_.driver_version = first.driver_version;
    info_.cuda_driver_version = first.cuda_driver_version;
    for (const GpuSample& gpu : first.gpus) {
      GpuInfo g;
      g.index = gpu.index;
      g.name = gpu.name;
      g.uuid = gpu.uuid;
      g.memory_total_bytes = gpu.memory_total_bytes;
      g.power_limit_enforced_w = gpu.power_limit_w;
      g.sm_clock_max_mhz = gpu.sm_clock_max_mhz;
      g.memory_clock_max_mhz = gpu.memory_clock_max_mhz;
      g.pcie_gen_current = gpu.pcie_gen;
      g.pcie_width_current = gpu.pcie_width;
      info_.gpus.push_back(std::move(g));
    }
  }

  const SystemInfo& system() override { return info_; }

  std::vector<GpuSample> sample() override {
    if (next_ < samples_.size()) current_ = next_++;
    return samples_[current_].gpus;
  }

  std::optional<HostSample> recorded_host() override { return samples_[current_].host; }

  bool exhausted() const override { return next_ >= samples_.size(); }

 private:
  SystemInfo info_;
  std::vector<Sample> samples_;
  std::size_t next_ = 0;
  std::size_t current_ = 0;
};

}  // namespace

std::unique_ptr<GpuBackend> open_replay_backend(const std::string& path) {
  return std::make_unique<ReplayBackend>(path);
}

}  // namespace gpusage::device
