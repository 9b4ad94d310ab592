// Whether a line holds a phrase: the question the log scanner's rules ask dozens of times for each line that
// passes the prefilter (scan_text::contains, the error-code table). std::string_view::find calls memchr for the
// needle's first letter and then memcmp at each place it occurs, two library calls per common letter; on
// x86-64 this looks at 16 places at a time instead, keeping those whose byte equals the needle's first letter
// and whose byte m-1 further on equals its last (the "generic SIMD" search of W. Muła, "SIMD-friendly
// algorithms for substring searching", 2016, http://0x80.pl/articles/simd-strfind.html), and compares only
// there. Elsewhere, and for the last few places of a line, std::string_view::find.
//
// Most of those questions have "no" for an answer. So the scanner also records which pairs of adjacent bytes the
// line holds (BytePairs, ASCII case folded) while it lowers the line's case, and `contains` answers "no" at once
// for a needle with a pair the line lacks, where the haystack is the line or a part of it (ReadingLine).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusage::diagnose {

// One byte in ASCII lower case; other bytes (UTF-8's included) as they are. The one fold of the log scanner's
// byte-level code.
constexpr char fold_ascii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Where `needle` first occurs in `haystack` at or after `from`: std::string_view::find's answer.
inline std::size_t find_substring(std::string_view haystack, std::string_view needle, std::size_t from = 0) {
  const std::size_t m = needle.size();
  if (from > haystack.size() || m > haystack.size() - from) return std::string_view::npos;
  std::size_t i = from;
#if defined(__SSE2__)
  if (m >= 2) {
    const __m128i first = _mm_set1_epi8(needle[0]);
    const __m128i last = _mm_set1_epi8(needle[m - 1]);
    const char* const h = haystack.data();
    // Each round reads h[i, i+16) and h[i+m-1, i+m+15): both inside the haystack. Candidates are taken lowest
    // first, so the first one confirmed is the first occurrence.
    for (; i + m + 15 <= haystack.size(); i += 16) {
      const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
      const __m128i at_last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + m - 1));
      auto candidates = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
      while (candidates != 0) {
        const auto offset = static_cast<std::size_t>(__builtin_ctz(candidates));
        if (std::memcmp(h + i + offset + 1, needle.data() + 1, m - 2) == 0) return i + offset;
        candidates &= candidates - 1;
      }
    }
    // fewer than 16 places are left
  }
#endif
  return haystack.find(needle, i);
}

inline bool has_substring(std::string_view haystack, std::string_view needle) {
  return find_substring(haystack, needle) != std::string_view::npos;
}

// Which pairs of adjacent bytes a text holds, ASCII case folded, in 8192 buckets: a needle with a pair (of the
// three looked at) in an empty bucket is not in the text. Exact "no"s, never a wrong one. Each bucket holds the
// number of the text that last filled it, so a new text costs one plain store per byte (no read-modify-write
// of a bit, no clearing) and the buckets are cleared once every 255 texts.
class BytePairs {
 public:
  // `lower`: the text in ASCII lower case.
  void assign(std::string_view lower) {
    if (++text_ == 0) {
      stamps_.fill(0);
      text_ = 1;
    }
    const auto* b = reinterpret_cast<const unsigned char*>(lower.data());
    std::uint8_t* const stamps = stamps_.data();
    std::size_t i = 1;
#if defined(__SSE2__)
    // The keys of 16 pairs at a time (16-bit lanes), then their 16 stores.
    const __m128i zero = _mm_setzero_si128();
    const __m128i mask = _mm_set1_epi16(8191);
    alignas(16) std::uint16_t keys[16];
    for (; i + 16 <= lower.size(); i += 16) {
      const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i - 1));
      const __m128i after = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
      auto key = [&](__m128i first, __m128i second) {
        return _mm_and_si128(_mm_xor_si128(_mm_slli_epi16(first, 6), second), mask);
      };
      _mm_store_si128(reinterpret_cast<__m128i*>(keys),
                      key(_mm_unpacklo_epi8(before, zero), _mm_unpacklo_epi8(after, zero)));
      _mm_store_si128(reinterpret_cast<__m128i*>(keys + 8),
                      key(_mm_unpackhi_epi8(before, zero), _mm_unpackhi_epi8(after, zero)));
      for (std::uint16_t k : keys) stamps[k] = text_;
    }
#endif
    for (; i < lower.size(); ++i) stamps[key_of_folded(b[i - 1], b[i])] = text_;
  }
  // Whether `needle` (two bytes or more, any case) may occur in the text: its first, middle and last pairs do.
  bool may_hold(std::string_view needle) const {
    const std::size_t m = needle.size();
    return has(key(needle[0], needle[1])) && has(key(needle[m - 2], needle[m - 1])) &&
           has(key(needle[m / 2 - 1], needle[m / 2]));
  }

 private:
  // ASCII lower case by table: one load for each of the six bytes a needle is asked about.
  static constexpr std::array<std::uint8_t, 256> kFolded = [] {
    std::array<std::uint8_t, 256> folded{};
    for (unsigned b = 0; b < 256; ++b) folded[b] = static_cast<std::uint8_t>(fold_ascii(static_cast<char>(b)));
    return folded;
  }();
  static unsigned fold(char c) { return kFolded[static_cast<unsigned char>(c)]; }
  static unsigned key_of_folded(unsigned a, unsigned b) { return ((a << 6) ^ b) & 8191u; }
  static unsigned key(char a, char b) { return key_of_folded(fold(a), fold(b)); }
  bool has(unsigned k) const { return stamps_[k] == text_; }

  std::array<std::uint8_t, 8192> stamps_{};
  std::uint8_t text_ = 0;  // the number of the text held (0: none yet)
};

// The line the log scanner's rules are reading, as it is and in lower case (the same length); set by
// LogScanner::scan_line for the time its steps run (ReadingScope), empty otherwise. Its pairs are gathered at
// the kPairsAfter-th question about it: a line asked a few times costs less searched than indexed.
struct ReadingLine {
  static constexpr int kPairsAfter = 6;
  std::string_view line;
  std::string_view lower;
  BytePairs* pairs = nullptr;  // the scanner's, filled when `asked` reaches kPairsAfter
  int asked = 0;
};
inline thread_local ReadingLine reading_line;

class ReadingScope {
 public:
  ReadingScope(std::string_view line, std::string_view lower, BytePairs& pairs) {
    reading_line = {line, lower, &pairs, 0};
  }
  ~ReadingScope() { reading_line = {}; }
  ReadingScope(const ReadingScope&) = delete;
  ReadingScope& operator=(const ReadingScope&) = delete;
};

// has_substring, answered by the pairs of the line being read where `haystack` is a part of it.
inline bool contains_phrase(std::string_view haystack, std::string_view needle) {
  ReadingLine& reading = reading_line;
  if (reading.pairs != nullptr && needle.size() >= 2) {
    const std::less<const char*> before;
    auto within = [&](std::string_view whole) {
      return !before(haystack.data(), whole.data()) &&
             !before(whole.data() + whole.size(), haystack.data() + haystack.size());
    };
    if (within(reading.line) || within(reading.lower)) {
      if (++reading.asked == ReadingLine::kPairsAfter) reading.pairs->assign(reading.lower);
      if (reading.asked >= ReadingLine::kPairsAfter && !reading.pairs->may_hold(needle)) return false;
    }
  }
  return has_substring(haystack, needle);
}

// `text` in ASCII lower case into `out` (as long as `text`), 16 bytes at a time on x86-64.
inline void lower_ascii(std::string_view text, char* out) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i before_a = _mm_set1_epi8('A' - 1);
  const __m128i after_z = _mm_set1_epi8('Z' + 1);
  const __m128i gap = _mm_set1_epi8('a' - 'A');
  for (; i + 16 <= text.size(); i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    // Signed compares: bytes from 0x80 up are negative, below 'A', and stay as they are.
    const __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(bytes, before_a), _mm_cmplt_epi8(bytes, after_z));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_add_epi8(bytes, _mm_and_si128(upper, gap)));
  }
#endif
  for (; i < text.size(); ++i) out[i] = fold_ascii(text[i]);
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
