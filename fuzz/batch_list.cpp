// The --batch list that plan, guide, report and bench share (core/common/batch_list.hpp): auto, or 1 to
// 1048576 separated by commas. An accepted list has one entry per comma-separated item, each in range, and
// printing it back gives the same list.
#include <algorithm>
#include <vector>

#include "core/common/batch_list.hpp"
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
  return fuzz::accepting_input_errors([&] {
    const BatchList batches = parse_batch_list(spec);
    if (batches.is_auto) {
      FUZZ_CHECK(batches.sizes.empty() && text::to_lower(text::trim(spec)) == "auto");
      return;
    }
    FUZZ_CHECK(batches.sizes.size() == items);
    for (int b : batches.sizes) FUZZ_CHECK(b >= 1 && b <= kMaxBatch);
    const BatchList again = parse_batch_list(joined(batches.sizes));
    FUZZ_CHECK(!again.is_auto && again.sizes == batches.sizes);
  });
}
