#include "core/diagnose/log_prefilter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>

#include "core/diagnose/substring.hpp"

namespace gpusage::diagnose {

namespace {

// The trie's size before it is built: one state per distinct prefix of the (folded) words, the root included.
// Sorted, a word adds the states of what it does not share with the word before it.
std::size_t trie_states(std::vector<std::string> words) {
  std::sort(words.begin(), words.end());
  std::size_t states = 1;
  std::string_view previous;
  for (const std::string& word : words) {
    const std::size_t shared = static_cast<std::size_t>(
        std::mismatch(word.begin(), word.end(), previous.begin(), previous.end()).first - word.begin());
    states += word.size() - shared;
    previous = word;
  }
  return states;
}

}  // namespace

LiteralMatcher::LiteralMatcher(const std::vector<TriggerWords>& lists, Engine engine) {
  // Byte classes: one per distinct (folded) byte the words use; every other byte is class 0.
  for (const auto& list : lists) {
    if (list.group >= 64) throw std::logic_error(fmt::format("prefilter group {} is not below 64", list.group));
    for (std::string_view word : list.words) {
      if (word.empty()) throw std::logic_error("a prefilter word is empty");
      // find_in_block maps a word to the line it ends in: it must not span lines.
      if (word.find_first_of("\r\n") != std::string_view::npos)
        throw std::logic_error(fmt::format("prefilter word '{}' holds a line break", word));
      std::string folded;
      for (char c : word) {
        folded += fold_ascii(c);
        const auto b = static_cast<unsigned char>(fold_ascii(c));
        if (byte_class_[b] == 0) byte_class_[b] = static_cast<std::uint8_t>(classes_++);
      }
      words_.push_back(folded);
    }
  }
  if (classes_ > 255) throw std::logic_error("prefilter words use more than 254 distinct bytes");
  for (char c = 'A'; c <= 'Z'; ++c)
    byte_class_[static_cast<unsigned char>(c)] = byte_class_[static_cast<unsigned char>(fold_ascii(c))];

  if (engine == Engine::best) {
    const EngineWords distinct = engine_words(lists);
    engine_ = make_block_engine(distinct.words, distinct.groups);
  }
  if (!engine_) build_automaton(lists);
}

void LiteralMatcher::build_automaton(const std::vector<TriggerWords>& lists) {
  // One flat table [state * classes + class] holds the trie, then (in place) the DFA's transitions, sized once: the
  // automaton is built where no engine answers, and its peak memory is the scanner's (issue 54: peak RSS).
  const std::size_t n = trie_states(words_);
  const std::uint32_t none = UINT32_MAX;
  std::vector<std::uint32_t> table(n * classes_, none);
  std::vector<std::uint64_t> output(n, 0);
  std::size_t added = 1;  // the root
  std::size_t word_index = 0;
  for (const auto& list : lists) {
    for (std::size_t i = 0; i < list.words.size(); ++i) {
      std::size_t s = 0;
      for (char c : words_[word_index++]) {
        std::uint32_t& child = table[s * classes_ + byte_class_[static_cast<unsigned char>(c)]];
        if (child == none) child = static_cast<std::uint32_t>(added++);
        s = static_cast<std::size_t>(child);
      }
      output[s] |= std::uint64_t{1} << list.group;
    }
  }

  // Breadth first: failure links, outputs inherited through them, and the DFA's transitions. A state's row is
  // rewritten when the state is taken from the queue: its missing children become its failure state's transitions,
  // whose row is final already (a failure state is shallower, so it left the queue first).
  std::vector<std::uint32_t> fail(n, 0);
  std::deque<std::uint32_t> queue;
  for (std::uint32_t k = 0; k < classes_; ++k) {
    std::uint32_t& c = table[k];
    if (c == none) {
      c = 0;
    } else {
      queue.push_back(c);
    }
  }
  while (!queue.empty()) {
    const std::uint32_t s = queue.front();
    queue.pop_front();
    output[s] |= output[fail[s]];
    for (std::uint32_t k = 0; k < classes_; ++k) {
      std::uint32_t& c = table[std::size_t{s} * classes_ + k];
      const std::uint32_t via_fail = table[std::size_t{fail[s]} * classes_ + k];
      if (c == none) {
        c = via_fail;
      } else {
        fail[c] = via_fail;
        queue.push_back(c);
      }
    }
  }
  // Class 0 (a byte no word has) always returns to the root: already so, as no state has a child on it.

  // Renumber: states without output first (the root stays 0), then the states with one.
  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t s = 0; s < n; ++s)
    if (output[s] == 0) order.push_back(s);
  first_output_ = static_cast<std::uint32_t>(order.size());
  for (std::uint32_t s = 0; s < n; ++s)
    if (output[s] != 0) order.push_back(s);
  std::vector<std::uint32_t> renamed(n);
  for (std::uint32_t i = 0; i < n; ++i) renamed[order[i]] = i;
  for (std::uint32_t& target : table) target = renamed[target] * classes_;
  // Row i of the DFA is row order[i] of the table: the rows are permuted in place, cycle by cycle, with one
  // row held aside, so that the table becomes next_ without a second copy.
  std::vector<bool> placed(n, false);
  std::vector<std::uint32_t> held(classes_);
  const auto row = [&](std::size_t r) { return table.begin() + static_cast<std::ptrdiff_t>(r * classes_); };
  for (std::size_t start = 0; start < n; ++start) {
    if (placed[start] || order[start] == start) continue;
    std::copy(row(start), row(start) + classes_, held.begin());
    std::size_t i = start;
    while (order[i] != start) {
      std::copy(row(order[i]), row(order[i]) + classes_, row(i));
      placed[i] = true;
      i = order[i];
    }
    std::copy(held.begin(), held.end(), row(i));
    placed[i] = true;
  }
  next_ = std::move(table);
  for (std::uint32_t i = first_output_; i < n; ++i) output_.push_back(output[order[i]]);
  first_output_ *= classes_;
}

EngineWords engine_words(const std::vector<TriggerWords>& lists) {
  std::map<std::string, std::uint64_t> distinct;  // a word may stand for several groups
  for (const auto& list : lists) {
    for (std::string_view word : list.words) {
      std::string folded;
      for (char c : word) folded += fold_ascii(c);
      distinct[folded] |= std::uint64_t{1} << list.group;
    }
  }
  EngineWords result;
  for (const auto& [word, mask] : distinct) {
    result.words.push_back(word);
    result.groups.push_back(mask);
  }
  return result;
}

LiteralMatcher::~LiteralMatcher() = default;

std::uint64_t LiteralMatcher::engine_groups_in(std::string_view text, BlockScratch* scratch) const {
  if (scratch) return engine_->groups_in(text, *scratch);
  return engine_->groups_in(text, *engine_->make_scratch());
}

void LiteralMatcher::find_in_block(std::string_view block, BlockScratch* scratch, std::vector<BlockHit>& hits) const {
  if (engine_) {
    engine_->find(block, scratch ? *scratch : *engine_->make_scratch(), hits);
    return;
  }
  const char* const begin = block.data();
  const char* const end = begin + block.size();
  for (const char* line = begin; line < end;) {
    const auto* newline = static_cast<const char*>(std::memchr(line, '\n', static_cast<std::size_t>(end - line)));
    const char* const line_end = newline ? newline : end;
    const std::uint64_t groups = groups_in(std::string_view(line, static_cast<std::size_t>(line_end - line)));
    if (groups) hits.push_back({static_cast<std::size_t>(line_end - begin), groups});
    line = line_end + 1;
  }
}

std::unique_ptr<BlockScratch> LiteralMatcher::make_scratch() const {
  return engine_ ? engine_->make_scratch() : nullptr;
}

std::string LiteralMatcher::engine_name() const { return engine_ ? engine_->name() : "aho-corasick"; }

}  // namespace gpusage::diagnose
