// `--batch auto` or `--batch 32,64,128`: one parser for plan, guide, report and bench, so that they accept
// the same text and reject it with the same message.
#pragma once

#include <string_view>
#include <vector>

namespace gpusage {

struct BatchList {
  bool is_auto = false;    // "auto": each front end picks the largest batch that fits or trains
  std::vector<int> sizes;  // empty with is_auto
};

inline constexpr int kMaxBatch = 1 << 20;

// "auto" (any case) or whole numbers from 1 to kMaxBatch separated by commas (spaces around them allowed).
// Throws InputError quoting the option, the text and the bad entry.
BatchList parse_batch_list(std::string_view text, std::string_view option = "--batch");

}  // namespace gpusage
