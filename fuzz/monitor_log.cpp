// The monitor's JSON Lines / CSV log, as report --monitor-log reads it and monitor --simulate replays it.
// A log that parses has samples whose GPU lists are well formed; a replayed sample, written back to JSON
// and read again, is the same sample (the replay is lossless).
#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/device/backend.hpp"
#include "core/device/sample_json.hpp"
#include "fuzz/fuzz_support.hpp"
#include "report/monitor_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const std::string text = fuzz::text_of(data, size);
  fuzz::accepting_input_errors([&] {
    const report::MonitorLog log = report::parse_monitor_log(text, "fuzz.jsonl");
    FUZZ_CHECK(!log.samples.empty());
    if (!log.json_lines) FUZZ_CHECK(log.alerts.empty());
    for (const device::Sample& sample : log.samples) {
      const nlohmann::json once = device::to_json(sample);
      FUZZ_CHECK(device::to_json(device::sample_from_json(once)) == once);
    }
  });
  // --simulate reads a file: the same bytes through a memory file.
  const int fd = ::memfd_create("fuzz-trace", 0);
  if (fd < 0) return 0;
  if (::write(fd, data, size) == static_cast<ssize_t>(size)) {
    fuzz::accepting_input_errors([&] {
      auto backend = device::open_replay_backend("/proc/self/fd/" + std::to_string(fd));
      const device::SystemInfo& info = backend->system();
      FUZZ_CHECK(info.backend == "replay");
      for (int i = 0; i < 64 && !backend->exhausted(); ++i) {
        (void)backend->sample();
        FUZZ_CHECK(backend->recorded_host().has_value());
      }
    });
  }
  ::close(fd);
  return 0;
}
