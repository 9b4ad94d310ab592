#include "core/diagnose/environment_wsl.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "core/common/text.hpp"
#include "core/common/units.hpp"
#include "core/diagnose/probe.hpp"

namespace gpusage::diagnose {

namespace {

constexpr const char* kWslLib = "/usr/lib/wsl/lib";

// What a Linux driver package puts beside the system's libraries: the Windows driver's copies are only in
// /usr/lib/wsl/lib, so these files in the multiarch folder come from a Linux driver (or a CUDA "cuda" /
// "cuda-drivers" meta package, which pulls one in).
constexpr const char* kLinuxDriverFiles[] = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                             "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "/usr/lib64/libcuda.so.1",
                                             "/proc/driver/nvidia/version"};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

bool is_wsl2_kernel(std::string_view osrelease) {
  return text::to_lower(std::string(osrelease)).find("microsoft-standard-wsl2") != std::string::npos;
}

std::optional<std::uint64_t> parse_meminfo_total(std::string_view meminfo) {
  for (const auto& line : text::split(meminfo, '\n')) {
    if (!starts_with(line, "MemTotal:")) continue;
    const std::string value = text::trim(line.substr(9));
    char* end = nullptr;
    const unsigned long long kib = std::strtoull(value.c_str(), &end, 10);
    if (end == value.c_str()) return std::nullopt;
    return static_cast<std::uint64_t>(kib) * 1024;
  }
  return std::nullopt;
}

std::vector<std::string> linux_driver_packages(std::string_view dpkg_status) {
  std::vector<std::string> found;
  std::string package;
  std::string version;
  bool installed = false;
  auto flush = [&] {
    const bool driver = starts_with(package, "nvidia-driver-") || starts_with(package, "cuda-drivers") ||
                        starts_with(package, "libnvidia-compute-") || starts_with(package, "nvidia-utils-");
    if (driver && installed) found.push_back(version.empty() ? package : package + " " + version);
    package.clear();
    version.clear();
    installed = false;
  };
  for (const auto& raw : text::split(dpkg_status, '\n')) {
    const std::string line = text::trim(raw);
    if (line.empty()) {
      flush();
      continue;
    }
    if (starts_with(line, "Package:")) package = text::trim(line.substr(8));
    if (starts_with(line, "Status:"))
      installed = line.find(" installed") != std::string::npos && line.find("not-installed") == std::string::npos;
    if (starts_with(line, "Version:")) version = text::trim(line.substr(8));
  }
  flush();
  return found;
}

std::optional<WslFacts> probe_wsl(Environment& env) {
  const auto osrelease = env.read_file("/proc/sys/kernel/osrelease");
  if (!osrelease || !is_wsl2_kernel(*osrelease)) return std::nullopt;
  WslFacts wsl;
  wsl.kernel = text::trim(*osrelease);
  wsl.gpu_libraries = env.exists(std::string(kWslLib) + "/libcuda.so.1");
  // The loader finds /usr/lib/wsl/lib through the cache ldconfig builds from /etc/ld.so.conf.d/ld.wsl.conf
  // (which WSL writes), or through LD_LIBRARY_PATH.
  if (auto cache = env.read_file("/etc/ld.so.cache")) {
    wsl.on_loader_path = cache->find(std::string(kWslLib) + "/libcuda.so.1") != std::string::npos;
  }
  if (auto path = env.getenv("LD_LIBRARY_PATH")) {
    for (const auto& dir : text::split(*path, ':')) {
      if (text::trim(dir) == kWslLib || text::trim(dir) == std::string(kWslLib) + "/") wsl.on_loader_path = true;
    }
  }
  if (auto status = env.read_file("/var/lib/dpkg/status")) wsl.linux_driver = linux_driver_packages(*status);
  for (const char* file : kLinuxDriverFiles) {
    if (env.exists(file)) wsl.linux_driver.emplace_back(file);
  }
  if (auto meminfo = env.read_file("/proc/meminfo")) wsl.memory_bytes = parse_meminfo_total(*meminfo);
  return wsl;
}

void check_wsl(const EnvironmentFacts& facts, const RuleTable& rules, std::vector<Finding>& out) {
  if (!facts.wsl) return;
  const WslFacts& wsl = *facts.wsl;
  const std::string memory =
      wsl.memory_bytes ? units::format_gib(static_cast<double>(*wsl.memory_bytes)) : std::string("unknown");
  out.push_back(rules.make("wsl2", Category::environment, {{"kernel", wsl.kernel}, {"memory", memory}}));
  if (!wsl.linux_driver.empty()) {
    out.push_back(
        rules.make("wsl-linux-driver", Category::environment, {{"found", text::join(wsl.linux_driver, ", ")}}));
  }
  if (!wsl.gpu_libraries) {
    out.push_back(rules.make("wsl-gpu-libraries-missing", Category::environment, {{"dir", kWslLib}}));
  } else if (!wsl.on_loader_path) {
    out.push_back(rules.make("wsl-lib-not-on-loader-path", Category::environment, {{"dir", kWslLib}}));
  }
  // A checkpoint loaded with torch.load(map_location="cpu") and then moved to the GPU passes through host
  // memory whole, beside the DataLoader's workers and pinned buffers: a VM with less memory than its GPUs
  // cannot stage a model that fills them.
  std::uint64_t gpu_memory = 0;
  for (const auto& gpu : facts.system.gpus) gpu_memory += gpu.memory_total_bytes.value_or(0);
  if (wsl.memory_bytes && gpu_memory > 0 && *wsl.memory_bytes < gpu_memory) {
    out.push_back(rules.make("wsl-memory-limit", Category::environment,
                             {{"memory", memory}, {"gpu_memory", units::format_gib(static_cast<double>(gpu_memory))}}));
  }
}

}  // namespace gpusage::diagnose
