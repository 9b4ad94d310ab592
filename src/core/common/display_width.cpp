// text::display_width and the padding built on it (text.hpp).
// The ranges are Unicode 15.1's EastAsianWidth.txt classes W and F, merged into spans (a few narrow symbols
// inside the emoji blocks are counted wide, as most terminals draw them), and its zero-width characters:
// combining marks (Mn/Me), zero-width spaces and joiners, variation selectors.
// https://www.unicode.org/reports/tr11/ and https://www.unicode.org/Public/15.1.0/ucd/EastAsianWidth.txt
#include <algorithm>
#include <iterator>

#include "core/common/text.hpp"

namespace gpusage::text {

namespace {

struct Span {
  char32_t first, last;
};

constexpr Span kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F202},
    {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F64F},
    {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD},
    {0x30000, 0x3FFFD},
};

constexpr Span kZero[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},   {0x064B, 0x065F},
    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2060, 0x2064},   {0x20D0, 0x20FF},
    {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

template <std::size_t N>
bool in(const Span (&spans)[N], char32_t c) {
  auto it = std::upper_bound(std::begin(spans), std::end(spans), c,
                             [](char32_t value, const Span& span) { return value < span.first; });
  return it != std::begin(spans) && c <= std::prev(it)->last;
}

std::size_t width_of(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c < 0xA0)) return 0;  // control characters
  if (in(kZero, c)) return 0;
  return in(kWide, c) ? 2 : 1;
}

// The code point at s[i] and its length in bytes; a stray byte of broken UTF-8 is one "character" of width 1.
struct Decoded {
  std::size_t width, length;
};
Decoded decode(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const std::size_t length = lead < 0x80           ? 1
                             : (lead >> 5) == 0x6  ? 2
                             : (lead >> 4) == 0xE  ? 3
                             : (lead >> 3) == 0x1E ? 4
                                                   : 0;
  bool valid = length > 0 && i + length <= s.size();
  char32_t c = length == 1 ? lead : length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
  for (std::size_t k = 1; valid && k < length; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    valid = (next & 0xC0) == 0x80;
    c = (c << 6) | (next & 0x3F);
  }
  if (!valid) return {1, 1};  // terminals show a replacement glyph for it
  return {width_of(c), length};
}

}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode(s, i);
    width += d.width;
    i += d.length;
  }
  return width;
}

std::string cut_to_width(std::string_view s, std::size_t width) {
  std::size_t used = 0, i = 0;
  while (i < s.size()) {
    const Decoded d = decode(s, i);
    if (used + d.width > width) break;
    used += d.width;
    i += d.length;
  }
  return std::string(s.substr(0, i));
}

std::string pad_right(std::string_view s, std::size_t width) {
  const std::size_t w = display_width(s);
  return std::string(s) + std::string(w < width ? width - w : 0, ' ');
}

std::string pad_left(std::string_view s, std::size_t width) {
  const std::size_t w = display_width(s);
  return std::string(w < width ? width - w : 0, ' ') + std::string(s);
}

}  // namespace gpusage::text
