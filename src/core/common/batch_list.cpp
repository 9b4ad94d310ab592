#include "core/common/batch_list.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/common/error.hpp"
#include "core/common/i18n.hpp"
#include "core/common/text.hpp"

namespace gpusage {

BatchList parse_batch_list(std::string_view text, std::string_view option) {
  BatchList list;
  if (text::to_lower(text::trim(text)) == "auto") {
    list.is_auto = true;
    return list;
  }
  for (const std::string& part : text::split(text, ',')) {
    const std::string item = text::trim(part);
    int value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || value < 1 || value > kMaxBatch) {
      throw InputError(
          i18n::trf("{} '{}': '{}' is not a batch size; give auto, or whole numbers from 1 to {} "
                    "separated by commas",
                    option, text, item, kMaxBatch));
    }
    list.sizes.push_back(value);
  }
  return list;
}

}  // namespace gpusage
