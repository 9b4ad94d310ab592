// Log lines as people paste them, turned back into the lines the program printed, before any pattern is
// matched (issue 30). Streaming, in bounded memory: one line is held back at a time.
//
//   - a line split into pieces: carriage returns (tqdm redraws a bar with '\r'), a traceback flattened onto
//     one line with literal "\n" sequences, a message glued to the end of a progress bar
//     ("100%|████| 10/10 [00:01<00:00]RuntimeError: …");
//   - prefixes stripped: "[rank0]:", "[default0]:", "[1,0]<stderr>:", "node-17: ", "3: " (srun --label),
//     glog's "E0303 12:00:00.123456 1234 file.cc:12] ", TensorFlow's "W path/file.cc:235] ", ISO and
//     bracketed timestamps;
//   - lines joined where the terminal or the paste wrapped a key phrase ("Resource exhausted: Out" +
//     "of memory while trying to allocate …").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gpusage::diagnose {

// The text without the decorations listed above (prefixes, repeatedly). A view into `line`.
std::string_view strip_decorations(std::string_view line);

// Whether `next` continues `previous`: joined (with a space, or with nothing when a word was cut), the two
// lines contain a key phrase that neither holds alone.
bool continues_phrase(std::string_view previous, std::string_view next);

class LineNormalizer {
 public:
  // Receives each normalised line with the number of the raw line it starts on (1-based) and a tag: the tag
  // the raw line was pushed with, or kJoined for lines joined from several raw lines.
  using Sink = std::function<void(std::size_t line, std::string_view text, std::uint64_t tag)>;
  static constexpr std::uint64_t kJoined = ~std::uint64_t{0};

  explicit LineNormalizer(Sink sink) : sink_(std::move(sink)) {}
  // One raw line, without its newline. The tag travels with its pieces (the scanner's prefilter groups: a
  // piece of a line holds no word the line does not).
  void push(std::size_t line, std::string_view raw, std::uint64_t tag = kJoined);
  // End of input: passes on the line held back.
  void flush();
  // A raw line whose pieces would go on with tag 0 (no word the scanner wants), left out where it can join no
  // neighbour: it is one piece (no '\r', no literal "\n"), continues no held line, and no line can continue
  // it (its end is no key phrase's start). Then the held line is passed on, as pushing this one would, and
  // true is returned: the caller skips the line (or pushes it after all if the line passed on needs it);
  // else nothing changes and the caller pushes it. Exact, not a guess: the scanner's tests compare.
  bool pass_over(std::string_view raw);
  // The same, told whether `raw` holds a '\r' or a backslash (the scanner learns it while finding the line).
  bool pass_over(std::string_view raw, bool may_split);

 private:
  void piece(std::size_t line, std::string_view text, std::uint64_t tag);

  Sink sink_;
  std::string held_;  // the last line, held back in case the next one continues it
  std::size_t held_line_ = 0;
  std::uint64_t held_tag_ = 0;
  bool holding_ = false;
  int joins_ = 0;  // lines joined onto held_
};

}  // namespace gpusage::diagnose
