// LogScanner's non-finite checks (log_scan.hpp): NaN or Inf in a loss or a gradient norm, a loss table's NaN rows,
// and a mixed-precision loss scale that keeps falling. Apart from log_scan.cpp, whose hot loop gates them.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <regex>

#include "core/diagnose/log_scan.hpp"
#include "core/diagnose/log_scan_text.hpp"

namespace gpusage::diagnose {

using scan_text::add_once;
using scan_text::at;
using scan_text::contains;
using scan_text::grad_norm_in;

namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// "nan" or "inf" as a value in lower-case text: not inside a word ("finance", "INFO"), "infinity" allowed. Where
// the word ends is the prefilter's test (scan_text::non_finite_word_ends_at), so the two cannot disagree.
bool has_value_token(std::string_view lower, std::string_view token) {
  for (std::size_t pos = find_substring(lower, token); pos != std::string_view::npos;
       pos = find_substring(lower, token, pos + 1)) {
    const bool before = pos == 0 || !is_alnum(lower[pos - 1]);
    if (before && scan_text::non_finite_word_ends_at(lower, pos + token.size())) return true;
  }
  return false;
}

// What loss_nan and grad_nan (scan_non_finite) need before they can match: a "nan" or "inf" whose nearest words
// before it, skipping what their patterns allow between name and value (spaces, quotes, ':', '=', '(', '-',
// "is", "tensor"), include one that holds "loss" or ends in "norm". A superset of their matches, cheap where
// the regexes are not (libstdc++'s backtracking tries every split of a word and every optional separator).
bool value_after_loss_or_norm(std::string_view lower) {
  using scan_text::is_lower_word_byte;
  auto between = [](char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == '\'' || c == '"' || c == ':' || c == '=' || c == '(' ||
           c == '-';
  };
  for (std::string_view token : {"nan", "inf"}) {
    for (std::size_t pos = find_substring(lower, token); pos != std::string_view::npos;
         pos = find_substring(lower, token, pos + 1)) {
      std::size_t i = pos;
      // The name, "is" and "tensor": at most three words back.
      for (int words = 0; words < 3; ++words) {
        while (i > 0 && between(lower[i - 1])) --i;
        if (i == 0 || !is_lower_word_byte(lower[i - 1])) break;
        const std::size_t end = i;
        while (i > 0 && is_lower_word_byte(lower[i - 1])) --i;
        const std::string_view word = lower.substr(i, end - i);
        if (word.find("loss") != std::string_view::npos || (word.size() >= 4 && word.substr(word.size() - 4) == "norm"))
          return true;
      }
    }
  }
  return false;
}

// What std::strtod reads at the start of `text` (a decimal number, in the C locale the program runs in), or
// nothing. std::from_chars reads the same decimals to the same nearest double without a copy, a locale or a
// C string; the rest (hexadecimal, out of range) goes to strtod.
std::optional<double> leading_number(std::string_view text) {
  const bool hexadecimal = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  double value = 0;
  if (!hexadecimal) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc{}) return value;
  }
  const std::string number(text);
  char* end = nullptr;
  value = std::strtod(number.c_str(), &end);
  if (end == number.c_str()) return std::nullopt;
  return value;
}

// The number right after `key` and a separator (": ", "=", " ", quotes), or nothing.
std::optional<double> number_after(std::string_view text, std::size_t key_end) {
  std::size_t i = key_end;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\'' || text[i] == '"' || text[i] == ':' || text[i] == '='))
    ++i;
  if (i == key_end || i >= text.size()) return std::nullopt;
  if (!std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '.') return std::nullopt;
  return leading_number(text.substr(i, std::min<std::size_t>(32, text.size() - i)));
}

// TensorFlow's dtype names and their sizes in bytes (tensorflow/core/framework/types.proto).

}  // namespace

namespace scan_text {

std::optional<double> grad_norm_in(std::string_view lower) {
  for (std::string_view key : {"grad_norm", "grad norm", "gradient_norm", "gradient norm", "total_norm", "gnorm"}) {
    for (std::size_t pos = find_substring(lower, key); pos != std::string_view::npos;
         pos = find_substring(lower, key, pos + 1)) {
      if (pos > 0 && is_alpha(lower[pos - 1]) && key != "gnorm") continue;
      if (key == "gnorm" && pos > 0 && is_alnum(lower[pos - 1])) continue;
      if (auto v = number_after(lower, pos + key.size())) return v;
    }
  }
  return std::nullopt;
}

namespace {

// [0-9]+(\.[0-9]*)?(e[-+]?[0-9]+)? at `pos`: its length, 0 where no digit starts it.
std::size_t decimal_length(std::string_view text, std::size_t pos) {
  auto digits_from = [&](std::size_t i) {
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
    return i;
  };
  std::size_t end = digits_from(pos);
  if (end == pos) return 0;
  if (end < text.size() && text[end] == '.') end = digits_from(end + 1);
  if (end < text.size() && text[end] == 'e') {
    const std::size_t sign =
        end + 1 < text.size() && (text[end + 1] == '-' || text[end + 1] == '+') ? end + 2 : end + 1;
    const std::size_t exponent = digits_from(sign);
    if (exponent > sign) end = exponent;
  }
  return end - pos;
}

// One of the loss-scale phrases at `pos`, then spaces and a number: where the number starts and its length.
std::optional<std::pair<std::size_t, std::size_t>> loss_scale_at(std::string_view lower, std::size_t pos) {
  auto number_after = [&](std::size_t head_end) -> std::optional<std::pair<std::size_t, std::size_t>> {
    std::size_t i = head_end;
    while (i < lower.size() && std::isspace(static_cast<unsigned char>(lower[i])) != 0) ++i;
    if (const std::size_t length = decimal_length(lower, i)) return std::pair{i, length};
    return std::nullopt;
  };
  const std::string_view rest = lower.substr(pos);
  auto starts = [&](std::string_view head) { return rest.substr(0, head.size()) == head; };
  if (starts("reducing loss scale to")) return number_after(pos + 22);
  if (starts("setting loss scale to")) {
    // "to:" then the number, else "to" and the number (the colon is optional).
    if (rest.size() > 21 && rest[21] == ':') {
      if (auto found = number_after(pos + 22)) return found;
    }
    return number_after(pos + 21);
  }
  if (starts("reducing to")) return number_after(pos + 11);
  if (starts("loss_scale") && rest.size() > 10 && (rest[10] == ' ' || rest[10] == '=')) return number_after(pos + 11);
  if (starts("loss scale:")) return number_after(pos + 11);
  return std::nullopt;
}

}  // namespace

std::optional<double> loss_scale_in(std::string_view lower) {
  // Every phrase below holds one of these (most lines that say "scale" name a GradScaler or a rescaling).
  if (!contains(lower, "loss_scale") && !contains(lower, "loss scale") && !contains(lower, "reducing to")) return {};
  // Every place one of the phrases starts, in order; a match hides the places it covers.
  std::vector<std::size_t> starts = scan_text::head_starts(
      lower, {"reducing loss scale to", "setting loss scale to", "reducing to", "loss_scale", "loss scale:"});
  std::sort(starts.begin(), starts.end());
  std::optional<double> value;
  std::size_t next = 0;
  for (const std::size_t pos : starts) {
    if (pos < next) continue;
    // A setting's name that ends in loss_scale (fairseq's "min_loss_scale=0.0001" in its argument dump) is not a
    // scale the run reached.
    if (pos > 0 && (is_alnum(lower[pos - 1]) || lower[pos - 1] == '_')) continue;
    const auto number = loss_scale_at(lower, pos);
    if (!number) continue;
    next = number->first + number->second;
    value = leading_number(lower.substr(number->first, number->second)).value_or(0.0);  // the last wins
  }
  return value;
}

}  // namespace scan_text

void LogScanner::scan_non_finite(std::size_t n, std::string_view line, std::string_view lower) {
  const bool nan = has_value_token(lower, "nan");
  const bool inf = has_value_token(lower, "inf");
  if (!nan && !inf && !contains(lower, "non-finite") && !contains(lower, "loss became infinite")) return;
  static const std::regex loss_nan(
      R"(\b(\w*loss\w*)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(?:tensor\()?\s*(-?nan|-?inf(?:inity)?)\b)",
      std::regex::icase);
  static const std::regex grad_nan(
      R"(\b(grad(?:ient)?[_ ]?norm|total[_ ]norm|gnorm)\b['"]?\s*(?:[:=]|\bis\b)?\s*['"]?\s*(-?nan|-?inf(?:inity)?)\b)",
      std::regex::icase);
  static const std::regex table_row(R"(^\s*\d+\s+\[\s*-?(nan|inf)\s*\])", std::regex::icase);
  // Each regex runs only from where its matches can start (a word holding "loss", a norm's name, the line's
  // start): searching from every character of a long progress line is most of this step's time otherwise.
  auto search = [line](const std::regex& re, std::vector<std::size_t> starts) {
    return !scan_text::matches_at(line, re, std::move(starts), 1).empty();
  };
  const bool named = value_after_loss_or_norm(lower);
  std::vector<std::string> kinds;
  if (contains(lower, "loss became infinite or nan") ||
      (named && search(loss_nan, scan_text::word_starts_holding(lower, "loss"))) ||
      (loss_table_ && search(table_row, {0}))) {
    kinds.push_back("loss");
  }
  if ((named && search(grad_nan, scan_text::head_starts(lower, {"grad", "total", "gnorm"}))) ||
      contains(lower, "is non-finite, so it cannot be clipped") ||
      (contains(line, "Function '") && contains(line, "returned nan values"))) {
    kinds.push_back("gradients");
  }
  if (contains(line, "NaN or Inf found in input tensor")) kinds.push_back("tensor values");
  if (!kinds.empty()) {
    scan_.non_finite.add(n, line);
    for (const auto& kind : kinds) add_once(scan_.non_finite_kinds, kind);
  }
}

void LogScanner::scan_loss_scale(std::size_t n, std::string_view line, std::string_view lower) {
  const bool overflow_skip = contains(lower, "overflow") && contains(lower, "skipping step");
  std::optional<double> scale_named;
  if (contains(lower, "scale")) {
    // apex: "reducing loss scale to 0.03125"; fairseq: "setting loss scale to: 0.25", "loss_scale=0.062",
    // "| loss_scale 0.000"; DeepSpeed: "Attempted loss scale: 64, reducing to 32".
    const std::optional<double> value = scan_text::loss_scale_in(lower);
    scale_named = value;
    LossScaleTrace& t = scan_.loss_scale;
    if (value) {
      ++t.reports;
      if (contains(lower, "overflow") || contains(lower, "reduc")) ++t.reductions;
      if (!t.first) {
        t.first = value;
        t.first_at = at(n, line);
      }
      if (!t.lowest || *value < *t.lowest) {
        t.lowest = value;
        t.lowest_line = n;
        t.lowest_at = at(n, line);
      }
    }
    if (contains(lower, "minimum loss scale reached") || contains(lower, "loss scale already at minimum")) {
      t.at_minimum = true;
      t.lowest_at = at(n, line);
      t.lowest_line = n;
      if (!t.first_at.line) t.first_at = t.lowest_at;
    }
  }
  // A dynamic loss scaler starts high (DeepSpeed's initial_scale_power up to 2^32) and halves on every overflow
  // until the gradients fit: skips while the scale is still above GradScaler's default start (2^16) are that
  // search, not instability.
  if (overflow_skip && !(scale_named && *scale_named > 65536)) scan_.overflow_skips.add(n, line);
}

}  // namespace gpusage::diagnose
