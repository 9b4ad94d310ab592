// Whether a line holds a phrase: the question the log scanner's rules ask dozens of times for each line that
// passes the prefilter (scan_text::contains, the error-code table). std::string_view::find calls memchr for the
// needle's first letter and then memcmp at each place it occurs, two library calls per common letter; on
// x86-64 this looks at 16 places at a time instead, keeping those whose byte equals the needle's first letter
// and whose byte m-1 further on equals its last (the "generic SIMD" search of W. Muła, "SIMD-friendly
// algorithms for substring searching", 2016, http://0x80.pl/articles/simd-strfind.html), and compares only
// there. Elsewhere, and for the last few places of a line, std::string_view::find.
#pragma once

#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusage::diagnose {

inline bool has_substring(std::string_view haystack, std::string_view needle) {
  const std::size_t m = needle.size();
  if (m > haystack.size()) return false;
#if defined(__SSE2__)
  if (m >= 2) {
    const __m128i first = _mm_set1_epi8(needle[0]);
    const __m128i last = _mm_set1_epi8(needle[m - 1]);
    const char* const h = haystack.data();
    std::size_t i = 0;
    // Each round reads h[i, i+16) and h[i+m-1, i+m+15): both inside the haystack.
    for (; i + m + 15 <= haystack.size(); i += 16) {
      const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
      const __m128i at_last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + m - 1));
      auto candidates = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
      while (candidates != 0) {
        const auto offset = static_cast<std::size_t>(__builtin_ctz(candidates));
        if (std::memcmp(h + i + offset + 1, needle.data() + 1, m - 2) == 0) return true;
        candidates &= candidates - 1;
      }
    }
    haystack.remove_prefix(i);  // fewer than 16 places are left
  }
#endif
  return haystack.find(needle) != std::string_view::npos;
}

// The end of the line at `p`, the first '\n' before `end` (there must be one), and whether a '\r' or a
// backslash comes before it (where the log normaliser may split the line): one pass over the line, 16 bytes at a
// time on x86-64, where memchr would take three.
inline const char* line_end(const char* p, const char* end, bool& may_split) {
  may_split = false;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i carriage = _mm_set1_epi8('\r');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; p + 16 <= end; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto at_newline = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, newline)));
    const auto at_mark = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(bytes, carriage), _mm_cmpeq_epi8(bytes, backslash))));
    if (at_newline != 0) {
      const auto offset = static_cast<unsigned>(__builtin_ctz(at_newline));
      may_split = may_split || (at_mark & ((1u << offset) - 1)) != 0;
      return p + offset;
    }
    may_split = may_split || at_mark != 0;
  }
#endif
  for (; *p != '\n'; ++p) may_split = may_split || *p == '\r' || *p == '\\';
  return p;
}

}  // namespace gpusage::diagnose
