// Small string helpers shared by the core: name matching, splitting, candidate suggestions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusage::text {

std::string to_lower(std::string_view s);
std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char separator);

// Lowercase, alphanumerics only: "GeForce RTX 5070 Ti" -> "geforcertx5070ti". Used to match what users type.
std::string squash(std::string_view s);

// Levenshtein distance, for "did you mean" candidates.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `limit` of `choices` closest to `wanted` (by edit distance on squashed forms, then substring).
std::vector<std::string> closest(std::string_view wanted, const std::vector<std::string>& choices,
                                 std::size_t limit = 5);

// CSV (RFC 4180), shared by every reader and writer of CSV files so they agree on quoting.
// One field, quoted when it holds a comma, quote or line break; a quote inside is doubled.
std::string csv_field(std::string_view s);
// The fields of one record: commas inside double quotes are kept, "" is a quote, a trailing \r is dropped.
std::vector<std::string> csv_fields(std::string_view line);

// Terminal columns of UTF-8 text (Unicode UAX #11): East Asian Wide and Fullwidth characters (CJK
// ideographs and punctuation, kana, Hangul, fullwidth forms, emoji) take two, combining marks and zero-width
// characters none, every other character one. Tables and bars pad by this, never by bytes or code points.
std::size_t display_width(std::string_view utf8);
// `s` padded with spaces to `width` display columns: on the right (left-aligned) or the left (right-aligned).
std::string pad_right(std::string_view s, std::size_t width);
std::string pad_left(std::string_view s, std::size_t width);
// The longest prefix of `s` that takes at most `width` columns, never cut inside a character.
std::string cut_to_width(std::string_view s, std::size_t width);

// "a, b, c"
std::string join(const std::vector<std::string>& parts, std::string_view separator = ", ");

}  // namespace gpusage::text
