#include "core/diagnose/log_normalize.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {

namespace normalize_impl {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// The length of a run of digits at the start of s.
std::size_t digits(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  return n;
}

// "[rank0]:", "[default3]:" (torchrun --tee), "[1,0]<stderr>:" (mpirun --tag-output), "[0]:".
std::size_t rank_prefix(std::string_view s) {
  if (s.empty() || s.front() != '[') return 0;
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos || close > 24) return 0;
  std::string_view inside = s.substr(1, close - 1);
  for (std::string_view word : {"rank", "default"}) {
    if (inside.substr(0, word.size()) == word) inside.remove_prefix(word.size());
  }
  if (inside.empty()) return 0;
  for (char c : inside) {
    if (!is_digit(c) && c != ',') return 0;
  }
  std::size_t end = close + 1;
  for (std::string_view tag : {"<stderr>", "<stdout>"}) {
    if (s.substr(end, tag.size()) == tag) end += tag.size();
  }
  if (end < s.size() && s[end] == ':') return end + 1;
  return 0;
}

// "2024-03-03 12:00:00.123456: ", "[2024-03-03T12:00:00Z] ", "2024-03-03 12:00:00,123 - ".
std::size_t timestamp_prefix(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '[') ++i;
  // yyyy-mm-dd
  if (digits(s.substr(i)) != 4 || s.size() < i + 19) return 0;
  if (s[i + 4] != '-' || s[i + 7] != '-' || !is_digit(s[i + 5]) || !is_digit(s[i + 8])) return 0;
  i += 10;
  if (s[i] != ' ' && s[i] != 'T') return 0;
  ++i;
  // hh:mm:ss
  if (digits(s.substr(i)) != 2 || s[i + 2] != ':' || s[i + 5] != ':') return 0;
  i += 8;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) i += 1 + digits(s.substr(i + 1));
  if (i < s.size() && s[i] == 'Z') ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-') && digits(s.substr(i + 1)) >= 2) {
    i += 1 + digits(s.substr(i + 1));
    if (i < s.size() && s[i] == ':') i += 1 + digits(s.substr(i + 1));
  }
  if (i < s.size() && s[i] == ']') ++i;
  while (i < s.size() && (s[i] == ' ' || s[i] == ':' || s[i] == '|' || s[i] == '-')) ++i;
  return i;
}

// glog's "E0303 12:00:00.123456 1234 file.cc:12] " and the short form TensorFlow prints after its own
// timestamp, "W external/…/asm_compiler.cc:235] ".
std::size_t glog_prefix(std::string_view s) {
  if (s.size() < 4) return 0;
  const char level = s[0];
  if (level != 'I' && level != 'W' && level != 'E' && level != 'F') return 0;
  std::size_t i = 1;
  if (digits(s.substr(1)) == 4) {
    i = 5;
    while (i < s.size() && (is_digit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == ' ')) ++i;
  } else if (s[1] == ' ') {
    i = 2;
    while (i < s.size() && (is_digit(s[i]) || s[i] == ' ')) ++i;  // "E     374 tensorflow/…"
  } else {
    return 0;
  }
  // The source location: "file.cc:12]".
  const std::size_t close = s.find(']', i);
  if (close == std::string_view::npos || close - i > 160 || close < 2) return 0;
  const std::string_view location = s.substr(i, close - i);
  if (location.find(' ') != std::string_view::npos) return 0;
  const std::size_t colon = location.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == location.size()) return 0;
  if (digits(location.substr(colon + 1)) != location.size() - colon - 1) return 0;
  std::size_t end = close + 1;
  if (end < s.size() && s[end] == ' ') ++end;
  return end;
}

// "node-17: ", "gpu3.cluster: " (pdsh, srun), "3: " (srun --label). A host name has a digit, no
// capitals, and is not followed by another colon-terminated word the scanner needs (never "RuntimeError:").
std::size_t host_prefix(std::string_view s) {
  std::size_t i = 0;
  bool digit = false;
  while (i < s.size() && i < 64 &&
         (is_digit(s[i]) || (s[i] >= 'a' && s[i] <= 'z') || s[i] == '-' || s[i] == '.' || s[i] == '_')) {
    digit = digit || is_digit(s[i]);
    ++i;
  }
  if (i == 0 || !digit || i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return 0;
  return i + 2;
}

// Where a message glued to the end of a tqdm bar starts: after "NN%|…| n/N [elapsed<left, rate]".
std::size_t after_progress_bar(std::string_view s) {
  const std::size_t bar = s.find("%|");
  if (bar == std::string_view::npos) return 0;
  const std::size_t bar_end = s.find('|', bar + 2);
  if (bar_end == std::string_view::npos) return 0;
  const std::size_t stats = s.find('[', bar_end);
  if (stats == std::string_view::npos || stats - bar_end > 40) return 0;
  const std::size_t close = s.find(']', stats);
  if (close == std::string_view::npos || close - stats > 200) return 0;
  const std::size_t rest = close + 1;
  return skip_spaces(s.substr(rest)).empty() ? 0 : rest;
}

// Key phrases a wrapped line may break; all lower case. Phrases the scanner or the code table match.
constexpr std::array<std::string_view, 30> kPhrases = {
    "cuda out of memory",
    "out of memory while trying to allocate",
    "out of memory allocating",
    "resource exhausted",
    "resource_exhausted",
    "an illegal memory access was encountered",
    "device-side assert triggered",
    "no kernel image is available for execution on the device",
    "cuda driver version is insufficient for cuda runtime version",
    "the nvidia driver on your system is too old",
    "system has unsupported display driver / cuda driver combination",
    "forward compatibility was attempted on non supported hw",
    "does not match dso version",
    "unspecified launch failure",
    "misaligned address",
    "unhandled system error",
    "unhandled cuda error",
    "watchdog caught collective operation timeout",
    "received 0 items of ancdata",
    "is killed by signal",
    "exited unexpectedly",
    "loaded runtime cudnn library",
    "but source was compiled with",
    "is not defined for option 'gpu-name'",
    "cudnn_status_",
    "cuda_error_",
    "out of shared memory",
    "no cuda-capable device is detected",
    "busy or unavailable",
    "out of memory: killed process",
};

std::string lower_copy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = fold_ascii(c);
  return out;
}

// Whether `seam` has a phrase that starts before `boundary` and ends after it.
bool phrase_spans(const std::string& seam, std::size_t boundary) {
  for (std::string_view phrase : kPhrases) {
    const std::size_t first = boundary >= phrase.size() ? boundary - phrase.size() + 1 : 0;
    const std::size_t pos = seam.find(phrase, first);
    if (pos != std::string::npos && pos < boundary && pos + phrase.size() > boundary) return true;
  }
  return false;
}

// Three-letter pieces of the key phrases (past their first letter): a line whose start has none of them
// cannot continue a phrase, and most lines stop at this check.
bool may_continue_a_phrase(std::string_view head) {
  constexpr std::size_t kBits = 1u << 15;
  auto key = [](char a, char b, char c) {
    return (static_cast<std::size_t>(static_cast<unsigned char>(a)) * 961 +
            static_cast<std::size_t>(static_cast<unsigned char>(b)) * 31 + static_cast<unsigned char>(c)) %
           kBits;
  };
  static const std::vector<bool> grams = [&] {
    std::vector<bool> bits(kBits, false);
    for (std::string_view phrase : kPhrases) {
      for (std::size_t i = 1; i + 3 <= phrase.size(); ++i) bits[key(phrase[i], phrase[i + 1], phrase[i + 2])] = true;
    }
    return bits;
  }();
  if (head.size() < 3) return true;
  return grams[key(fold_ascii(head[0]), fold_ascii(head[1]), fold_ascii(head[2]))];
}

// Within `sorted` (sorted, all beginning with the same `n` bytes), those whose byte `n` is `c`: two binary
// searches on that one byte, no key built and no string compared. The shorter strings (exactly `n` bytes) sort
// first and are left out.
template <typename T, typename Text>
std::pair<const T*, const T*> narrow(const T* first, const T* last, std::size_t n, char c, Text text) {
  while (first != last && text(*first).size() == n) ++first;
  const auto byte = [&](const T& item) { return static_cast<unsigned char>(text(item)[n]); };
  const auto u = static_cast<unsigned char>(c);
  first = std::lower_bound(first, last, u, [&](const T& item, unsigned char v) { return byte(item) < v; });
  last = std::upper_bound(first, last, u, [&](unsigned char v, const T& item) { return v < byte(item); });
  return {first, last};
}

// The items of a sorted vector of non-empty texts that begin with each byte, as [begin, end) indices: the
// first narrowing step, one look-up instead of two binary searches over them all.
template <typename T, typename Text>
std::array<std::pair<std::uint32_t, std::uint32_t>, 256> first_byte_ranges(const std::vector<T>& sorted, Text text) {
  std::array<std::pair<std::uint32_t, std::uint32_t>, 256> ranges{};
  for (std::uint32_t i = 0; i < sorted.size(); ++i) {
    auto& range = ranges[static_cast<unsigned char>(text(sorted[i]).front())];
    if (range.first == range.second) range.first = i;
    range.second = i + 1;
  }
  return ranges;
}

// Whether some key phrase can span the seam: `head` starts with the phrase's rest (from its second letter on)
// and `tail` ends with the part before it (its trailing space aside). A necessary condition of the joins
// below, exact where the trigram check above is a sieve: the rests are sorted and narrowed one more letter
// at a time, and most lines stop at their first or second letter.
bool a_phrase_may_span(std::string_view tail, std::string_view head) {
  struct Rest {
    std::string text;
    std::vector<std::string_view> befores;  // the phrase's start before this rest, trailing space trimmed
  };
  static const std::vector<Rest> rests = [] {
    std::vector<Rest> all;
    for (std::string_view phrase : kPhrases) {
      for (std::size_t i = 1; i < phrase.size(); ++i) {
        std::string_view before = phrase.substr(0, i);
        while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
        all.push_back({std::string(phrase.substr(i)), {before}});
      }
    }
    std::sort(all.begin(), all.end(), [](const Rest& a, const Rest& b) { return a.text < b.text; });
    std::vector<Rest> merged;
    for (auto& r : all) {
      if (!merged.empty() && merged.back().text == r.text) {
        merged.back().befores.push_back(r.befores.front());
      } else {
        merged.push_back(std::move(r));
      }
    }
    return merged;
  }();
  auto tail_ends_with = [&](std::string_view before) {
    if (before.size() > tail.size()) return false;
    const std::string_view end = tail.substr(tail.size() - before.size());
    for (std::size_t i = 0; i < before.size(); ++i) {
      if (fold_ascii(end[i]) != before[i]) return false;
    }
    return true;
  };
  const auto text = [](const Rest& r) -> std::string_view { return r.text; };
  static const auto by_first = first_byte_ranges(rests, text);
  if (head.empty()) return false;
  const auto range = by_first[static_cast<unsigned char>(fold_ascii(head[0]))];
  const Rest* first = rests.data() + range.first;
  const Rest* last = rests.data() + range.second;
  for (std::size_t n = 0; first != last; ++n) {  // rests[first, last) begin with head's first n + 1 bytes
    if (first->text.size() == n + 1 && std::any_of(first->befores.begin(), first->befores.end(), tail_ends_with))
      return true;
    if (n + 1 == head.size()) return false;
    std::tie(first, last) = narrow(first, last, n + 1, fold_ascii(head[n + 1]), text);
  }
  return false;  // no rest begins this way
}

// Whether some key phrase can start at the end of `line` (its trailing spaces aside): the line ends with a
// phrase's beginning, the part a_phrase_may_span looks for in the line before a seam. The beginnings are kept
// reversed and sorted, and the line is read backwards narrowing them one more letter at a time: most lines
// stop at their last letter or the one before.
bool may_be_continued(std::string_view line) {
  static const std::vector<std::string> reversed_starts = [] {
    std::vector<std::string> all;
    for (std::string_view phrase : kPhrases) {
      for (std::size_t i = 1; i < phrase.size(); ++i) {
        std::string_view before = phrase.substr(0, i);
        while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
        all.emplace_back(before.rbegin(), before.rend());
      }
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }();
  const auto text = [](const std::string& start) -> std::string_view { return start; };
  static const auto by_last = first_byte_ranges(reversed_starts, text);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty()) return false;
  const auto range = by_last[static_cast<unsigned char>(fold_ascii(line.back()))];
  const std::string* first = reversed_starts.data() + range.first;
  const std::string* last = reversed_starts.data() + range.second;
  for (std::size_t n = 0; first != last; ++n) {  // [first, last) end as the line's last n + 1 bytes
    if (first->size() == n + 1) return true;
    if (n + 1 == line.size()) return false;
    std::tie(first, last) = narrow(first, last, n + 1, fold_ascii(line[line.size() - 2 - n]), text);
  }
  return false;
}

enum class Join { none, with_space, without_space };

Join join_of(std::string_view previous, std::string_view next) {
  next = skip_spaces(next);
  while (!previous.empty() && (previous.back() == ' ' || previous.back() == '\t')) previous.remove_suffix(1);
  if (previous.empty() || next.empty() || !may_continue_a_phrase(next)) return Join::none;
  if (!a_phrase_may_span(previous, next.substr(0, 72))) return Join::none;
  constexpr std::size_t kSide = 72;
  const std::string tail = lower_copy(previous.substr(previous.size() > kSide ? previous.size() - kSide : 0));
  const std::string head = lower_copy(next.substr(0, kSide));
  // Cut between words ("Out" + "of memory"), or inside one ("RESOURCE_EXHA" + "USTED").
  const std::string spaced = tail + " " + head;
  if (phrase_spans(spaced, tail.size()) || phrase_spans(spaced, tail.size() + 1)) return Join::with_space;
  if (is_alnum(previous.back()) && phrase_spans(tail + head, tail.size())) return Join::without_space;
  return Join::none;
}

}  // namespace normalize_impl

std::string_view strip_decorations(std::string_view line) {
  using normalize_impl::glog_prefix;
  using normalize_impl::host_prefix;
  using normalize_impl::rank_prefix;
  using normalize_impl::skip_spaces;
  using normalize_impl::timestamp_prefix;
  for (int round = 0; round < 6; ++round) {
    std::string_view s = skip_spaces(line);
    std::size_t cut = rank_prefix(s);
    if (!cut) cut = timestamp_prefix(s);
    if (!cut) cut = glog_prefix(s);
    if (!cut) cut = host_prefix(s);
    if (!cut) return line;
    line = skip_spaces(s.substr(cut));
  }
  return line;
}

bool continues_phrase(std::string_view previous, std::string_view next) {
  return normalize_impl::join_of(previous, next) != normalize_impl::Join::none;
}

void LineNormalizer::push(std::size_t line, std::string_view raw, std::uint64_t tag) {
  // A traceback flattened onto one line keeps its line breaks as literal "\n": two or more split it.
  const bool flattened =
      raw.find("\\n") != std::string_view::npos && raw.find("\\n", raw.find("\\n") + 2) != std::string_view::npos;
  while (true) {
    std::size_t cut = raw.find('\r');
    std::size_t skip = 1;
    if (flattened) {
      const std::size_t literal = raw.find("\\n");
      if (literal < cut) {
        cut = literal;
        skip = 2;
      }
    }
    if (cut == std::string_view::npos) break;
    piece(line, raw.substr(0, cut), tag);
    raw.remove_prefix(cut + skip);
  }
  piece(line, raw, tag);
}

void LineNormalizer::piece(std::size_t line, std::string_view text, std::uint64_t tag) {
  using normalize_impl::Join;
  using normalize_impl::skip_spaces;
  text = strip_decorations(text);
  // A message glued to a progress bar: the bar, then the message as a line of its own.
  if (const std::size_t rest = normalize_impl::after_progress_bar(text)) {
    piece(line, text.substr(0, rest), tag);
    text = strip_decorations(text.substr(rest));
  }
  // A joined line stays short: a wrapped message is a few terminal widths, not a whole log.
  const Join join =
      holding_ && joins_ < 4 && held_.size() + text.size() < 8192 ? normalize_impl::join_of(held_, text) : Join::none;
  if (join != Join::none) {
    while (!held_.empty() && held_.back() == ' ') held_.pop_back();
    if (join == Join::with_space) held_ += ' ';
    held_.append(skip_spaces(text));
    held_tag_ = kJoined;  // the seam may hold a word neither piece has
    ++joins_;
    return;
  }
  flush();
  held_.assign(text);
  held_line_ = line;
  held_tag_ = tag;
  holding_ = true;
  joins_ = 0;
}

bool LineNormalizer::pass_over(std::string_view raw) {
  return pass_over(raw, std::memchr(raw.data(), '\r', raw.size()) || std::memchr(raw.data(), '\\', raw.size()));
}

bool LineNormalizer::pass_over(std::string_view raw, bool may_split) {
  if (may_split) return false;
  if (normalize_impl::may_be_continued(raw)) return false;
  // As piece() would see it (a progress bar's split leaves the head, and so the join, as it is); a held line
  // that no phrase can continue needs no look at this one's head.
  if (holding_ && joins_ < 4 && normalize_impl::may_be_continued(held_) &&
      normalize_impl::join_of(held_, strip_decorations(raw)) != normalize_impl::Join::none)
    return false;
  flush();
  return true;
}

void LineNormalizer::flush() {
  if (!holding_) return;
  holding_ = false;
  sink_(held_line_, held_, held_tag_);
}

}  // namespace gpusage::diagnose
