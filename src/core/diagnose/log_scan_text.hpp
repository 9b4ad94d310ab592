// Small text helpers shared by the log scanner's files (log_scan*.cpp). Internal to the diagnose module.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/text.hpp"
#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {

// The prefilter's groups (log_prefilter.hpp): one bit each, one per step of the scanner.
namespace gate {
enum Group : unsigned {
  benign,          // warnings that read like failures (is_benign_warning)
  memory,          // log_scan.cpp: OOM wordings, allocator figures
  init,            // cuBLAS/cuDNN handles that could not start
  non_finite,      // NaN/inf losses and gradients
  loss_table,      // a table header naming a loss column (until one is seen)
  loss_scale,      // fp16 loss scale, overflow skips
  grad_norm,       // gradient norms
  workers,         // num_workers=0
  batch_size,      // the first batch size (until one is seen)
  lib_arch,        // log_scan_libraries.cpp: GPU architecture and driver
  lib_nccl,        //   NCCL
  lib_dataloader,  //   DataLoader workers
  lib_cudnn,       //   cuDNN
  codes_cuda,      // error_codes.cpp: ErrorCodeTable::identify, one group per family gate
  codes_nccl,
  codes_cudnn,
  codes_absl,
  families,       // log_scan_families.cpp
  framework_jax,  // log_scan_families.cpp: whose log it is (raw lines, until it is known)
  framework_tf,
  final_error,      // log_scan_final_error.cpp
  signals,          // log_scan_signals.cpp: issue 54's families by signal
  cuda_code_words,  // log_scan_confirm.cpp: asked for with codes_cuda, never alone
  signal_too_old,   // log_scan_signals.cpp: words of one step of scan_signals each, run alone
  signal_paths,
};
constexpr std::uint64_t bit(Group g) { return std::uint64_t{1} << g; }
}  // namespace gate

// Each file's word lists, beside the gates they mirror.
const std::vector<TriggerWords>& scan_line_triggers();    // log_scan.cpp
const std::vector<TriggerWords>& library_triggers();      // log_scan_libraries.cpp
const std::vector<TriggerWords>& family_triggers();       // log_scan_families.cpp
const std::vector<TriggerWords>& final_error_triggers();  // log_scan_final_error.cpp
const std::vector<TriggerWords>& signal_triggers();       // log_scan_signals.cpp
const std::vector<TriggerWords>& confirm_triggers();      // log_scan_confirm.cpp

}  // namespace gpusage::diagnose

namespace gpusage::diagnose::scan_text {

inline bool contains(std::string_view haystack, std::string_view needle) { return contains_phrase(haystack, needle); }

inline void add_once(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

inline LogLine at(std::size_t line, std::string_view text) {
  std::string t = text::trim(text);
  if (t.size() > 400) {
    // resize + append, not substr + "...": GCC 12 warns falsely (-Warray-bounds) on that concatenation.
    t.resize(397);
    t.append("...");
  }
  return {line, t};
}

// The line as a std::string for std::regex, copied only when a pattern needs one: `str()`.
class RegexLine {
 public:
  explicit RegexLine(std::string_view line) : line_(line) {}
  const std::string& operator()() {
    if (owned_.empty()) owned_.assign(line_);
    return owned_;
  }

 private:
  std::string_view line_;
  std::string owned_;
};

using ViewMatch = std::match_results<std::string_view::const_iterator>;

// What iterating `re` over `text` finds (std::regex_iterator: leftmost matches that do not overlap), when
// every match of `re` starts at one of `starts` (offsets into `text`, any order): the regex runs anchored at
// each of them, so a long line costs a few attempts instead of one at every character. At most `limit`.
inline std::vector<ViewMatch> matches_at(std::string_view text, const std::regex& re, std::vector<std::size_t> starts,
                                         std::size_t limit = static_cast<std::size_t>(-1)) {
  std::sort(starts.begin(), starts.end());
  std::vector<ViewMatch> found;
  std::size_t next = 0;  // where the last match ended: matches do not overlap
  for (std::size_t pos : starts) {
    if (pos < next || found.size() >= limit) continue;
    ViewMatch m;
    const auto flags = std::regex_constants::match_continuous |
                       (pos > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default);
    if (!std::regex_search(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end(), m, re, flags)) continue;
    next = pos + static_cast<std::size_t>(m.length(0));
    found.push_back(std::move(m));
  }
  return found;
}

// Where each of `heads` occurs in `text`.
inline std::vector<std::size_t> head_starts(std::string_view text, std::initializer_list<std::string_view> heads) {
  std::vector<std::size_t> starts;
  for (std::string_view head : heads) {
    for (std::size_t pos = find_substring(text, head); pos != std::string_view::npos;
         pos = find_substring(text, head, pos + 1))
      starts.push_back(pos);
  }
  return starts;
}

// matches_at from where `heads` occur: for a regex whose every match starts with one of them.
inline std::vector<ViewMatch> matches_from(std::string_view text, const std::regex& re,
                                           std::initializer_list<std::string_view> heads,
                                           std::size_t limit = static_cast<std::size_t>(-1)) {
  return matches_at(text, re, head_starts(text, heads), limit);
}

// A byte of a word in lower-case text: [a-z0-9_], regex's \w there.
inline bool is_lower_word_byte(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// Where the words of `lower` that hold `inner` start (a word: a run of is_lower_word_byte): the starts of a regex
// that begins "\b\w*inner".
inline std::vector<std::size_t> word_starts_holding(std::string_view lower, std::string_view inner) {
  std::vector<std::size_t> starts;
  for (std::size_t pos = find_substring(lower, inner); pos != std::string_view::npos;
       pos = find_substring(lower, inner, pos + 1)) {
    std::size_t start = pos;
    while (start > 0 && is_lower_word_byte(lower[start - 1])) --start;
    if (starts.empty() || starts.back() != start) starts.push_back(start);
  }
  return starts;
}

// The prefilter's second look (log_scan_confirm.cpp). The groups of a line, less codes_cuda where the line
// holds none of cuda_code_words' words (and less cuda_code_words itself, which no step asks for).
std::uint64_t confirm_groups(std::uint64_t groups);
// Whether a non_finite word that ends at `end` of `text` can wake scan_non_finite: "nan" or "inf" not followed
// by a letter (or followed by "inity"), or one of the group's longer words.
bool non_finite_word_ends_at(std::string_view text, std::size_t end);
// Whether a raw line can wake scan_non_finite (the same test along the whole line, where no block engine gave
// the words' places).
bool may_name_non_finite(std::string_view raw);

// A gradient norm logged as grad_norm / grad norm / gradient_norm / total_norm / gnorm (fairseq), in lower-case
// text (log_scan_non_finite.cpp).
std::optional<double> grad_norm_in(std::string_view lower);

// The loss scale a lower-case line names, the last one where it names several (apex "reducing loss scale to
// 0.03125", fairseq "setting loss scale to: 0.25", "loss_scale=0.062", "| loss_scale 0.000", DeepSpeed
// "Attempted loss scale: 64, reducing to 32"): a decimal number, its fraction and exponent optional, after the
// phrase and any spaces (log_scan_non_finite.cpp).
std::optional<double> loss_scale_in(std::string_view lower);

}  // namespace gpusage::diagnose::scan_text
