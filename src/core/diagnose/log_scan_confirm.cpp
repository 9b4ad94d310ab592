// The prefilter's second look (log_scan_text.hpp): a few groups' trigger words are short and common ("inf" is
// in every INFO line, "cuda" in every device banner), so the prefilter would wake their steps on lines the
// steps then drop at their first test. That first test is made here, before the line is normalised, so such
// lines skip the normaliser and the steps altogether. Each test accepts every raw line whose pieces its step
// could act on: a piece of a line is a run of it (prefixes stripped, split at '\r', at a literal "\n" or
// after a progress bar), and a line joined from several is tagged with every group anyway.
#include <cctype>

#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

// ErrorCodeTable::identify finds a CUDA code by its name (cudaError…, CUDA_ERROR_…, cudaSuccess, CUDA_SUCCESS),
// by its message on a line that says something failed, or by its number beside "error", "vs. 0)" or "code=":
// a line naming CUDA with none of these words is a progress note ("Using CUDA device 0"). A second group,
// asked for together with codes_cuda (confirm_groups).
const std::vector<TriggerWords>& confirm_triggers() {
  static const std::vector<TriggerWords> lists = {
      {gate::cuda_code_words,
       {"error", "fail", "assert", "cuda warning", "vs. 0)", "code=", "cudasuccess", "cuda_success"}},
  };
  return lists;
}

namespace scan_text {

namespace {

bool folded_equals(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (fold_ascii(text[i]) != lower[i]) return false;
  }
  return true;
}

}  // namespace

bool non_finite_word_ends_at(std::string_view text, std::size_t end) {
  if (end < 3) return true;
  const std::string_view word = text.substr(end - 3, 3);
  if (!folded_equals(word, "nan") && !folded_equals(word, "inf")) return true;  // "non-finite", "…infinite"
  // has_value_token's end-of-word test (it calls this one); the look at the letter before is left to it, as a
  // piece may start at the word.
  // A piece that ends right after it ends where the raw line has a '\r', a backslash or its end: no letter.
  if (end == text.size() || std::isalpha(static_cast<unsigned char>(text[end])) == 0) return true;
  return folded_equals(text.substr(end, 5), "inity");
}

bool may_name_non_finite(std::string_view raw) {
  std::string lower(raw);
  for (char& c : lower) c = fold_ascii(c);
  for (std::string_view token : {"nan", "inf"}) {
    for (std::size_t pos = find_substring(lower, token); pos != std::string::npos;
         pos = find_substring(lower, token, pos + 1)) {
      if (non_finite_word_ends_at(lower, pos + token.size())) return true;
    }
  }
  return contains(lower, "non-finite") || contains(lower, "loss became infinite");
}

std::uint64_t confirm_groups(std::uint64_t groups) {
  constexpr std::uint64_t cuda = gate::bit(gate::codes_cuda);
  constexpr std::uint64_t cuda_words = gate::bit(gate::cuda_code_words);
  if ((groups & (cuda | cuda_words)) == cuda) groups &= ~cuda;
  return groups & ~cuda_words;  // no step asks for it
}

}  // namespace scan_text
}  // namespace gpusage::diagnose
