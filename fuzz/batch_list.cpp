// The --batch lists: plan's (auto, or 1 to 1048576 separated by commas) and gpusage-bench's. An accepted
// list has one entry per comma-separated item, each in range, and printing it back gives the same list.
#include <algorithm>
#include <vector>

#include "bench/options.hpp"
#include "cli/plan_view.hpp"
#include "core/common/text.hpp"
#include "fuzz/fuzz_support.hpp"

namespace {

std::string joined(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusage;
  const std::string spec = fuzz::text_of(data, size);
  const std::size_t items = static_cast<std::size_t>(std::count(spec.begin(), spec.end(), ',')) + 1;
  fuzz::accepting_input_errors([&] {
    const std::vector<int> batches = cli::parse_batches(spec);
    if (batches.empty()) {
      FUZZ_CHECK(text::to_lower(spec) == "auto");
      return;
    }
    FUZZ_CHECK(batches.size() == items);
    for (int b : batches) FUZZ_CHECK(b >= 1 && b <= (1 << 20));
    FUZZ_CHECK(cli::parse_batches(joined(batches)) == batches);
  });
  return fuzz::accepting_input_errors([&] {
    bool is_auto = false;
    const std::vector<int> batches = bench::parse_batch_list(spec, is_auto);
    if (is_auto) {
      FUZZ_CHECK(batches.empty() && spec == "auto");
      return;
    }
    FUZZ_CHECK(batches.size() == items);
    for (int b : batches) FUZZ_CHECK(b >= 1);
    bool again_auto = true;
    FUZZ_CHECK(bench::parse_batch_list(joined(batches), again_auto) == batches && !again_auto);
  });
}
