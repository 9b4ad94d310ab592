#include "core/diagnose/log_prefilter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>

namespace gpusage::diagnose {

namespace {

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// The trie of the words over byte classes, before it becomes a DFA.
struct Trie {
  std::vector<std::vector<std::int32_t>> child;  // [state][class], -1: none
  std::vector<std::uint64_t> output;
  std::uint32_t classes = 1;

  std::uint32_t add_state() {
    child.emplace_back(classes, -1);
    output.push_back(0);
    return static_cast<std::uint32_t>(child.size() - 1);
  }
};

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
        folded += fold(c);
        const auto b = static_cast<unsigned char>(fold(c));
        if (byte_class_[b] == 0) byte_class_[b] = static_cast<std::uint8_t>(classes_++);
      }
      words_.push_back(folded);
    }
  }
  if (classes_ > 255) throw std::logic_error("prefilter words use more than 254 distinct bytes");
  for (char c = 'A'; c <= 'Z'; ++c)
    byte_class_[static_cast<unsigned char>(c)] = byte_class_[static_cast<unsigned char>(fold(c))];

  Trie trie;
  trie.classes = classes_;
  trie.add_state();  // the root
  for (const auto& list : lists) {
    for (std::string_view word : list.words) {
      std::uint32_t s = 0;
      for (char c : word) {
        const std::uint8_t k = byte_class_[static_cast<unsigned char>(c)];
        if (trie.child[s][k] < 0) {
          const std::uint32_t added = trie.add_state();
          trie.child[s][k] = static_cast<std::int32_t>(added);
        }
        s = static_cast<std::uint32_t>(trie.child[s][k]);
      }
      trie.output[s] |= std::uint64_t{1} << list.group;
    }
  }

  // Breadth first: failure links, outputs inherited through them, and the DFA's transitions.
  const std::size_t n = trie.child.size();
  std::vector<std::vector<std::uint32_t>> delta(n, std::vector<std::uint32_t>(classes_, 0));
  std::vector<std::uint32_t> fail(n, 0);
  std::deque<std::uint32_t> queue;
  for (std::uint32_t k = 0; k < classes_; ++k) {
    const std::int32_t c = trie.child[0][k];
    if (c > 0) {
      delta[0][k] = static_cast<std::uint32_t>(c);
      queue.push_back(static_cast<std::uint32_t>(c));
    }
  }
  while (!queue.empty()) {
    const std::uint32_t s = queue.front();
    queue.pop_front();
    trie.output[s] |= trie.output[fail[s]];
    for (std::uint32_t k = 0; k < classes_; ++k) {
      const std::int32_t c = trie.child[s][k];
      if (c < 0) {
        delta[s][k] = delta[fail[s]][k];
      } else {
        fail[static_cast<std::uint32_t>(c)] = delta[fail[s]][k];
        delta[s][k] = static_cast<std::uint32_t>(c);
        queue.push_back(static_cast<std::uint32_t>(c));
      }
    }
  }
  // Class 0 (a byte no word has) always returns to the root: already so, as no state has a child on it.

  // Renumber: states without output first (the root stays 0), then the states with one.
  std::vector<std::uint32_t> order;
  for (std::uint32_t s = 0; s < n; ++s)
    if (trie.output[s] == 0) order.push_back(s);
  first_output_ = static_cast<std::uint32_t>(order.size());
  for (std::uint32_t s = 0; s < n; ++s)
    if (trie.output[s] != 0) order.push_back(s);
  std::vector<std::uint32_t> renamed(n);
  for (std::uint32_t i = 0; i < n; ++i) renamed[order[i]] = i;
  next_.assign(n * classes_, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t k = 0; k < classes_; ++k) next_[i * classes_ + k] = renamed[delta[order[i]][k]] * classes_;
  }
  for (std::uint32_t i = first_output_; i < n; ++i) output_.push_back(trie.output[order[i]]);
  first_output_ *= classes_;

  if (engine == Engine::best) {
    const EngineWords distinct = engine_words(lists);
    engine_ = make_block_engine(distinct.words, distinct.groups);
  }
}

EngineWords engine_words(const std::vector<TriggerWords>& lists) {
  std::map<std::string, std::uint64_t> distinct;  // a word may stand for several groups
  for (const auto& list : lists) {
    for (std::string_view word : list.words) {
      std::string folded;
      for (char c : word) folded += fold(c);
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

void LiteralMatcher::find_in_block(std::string_view block, BlockScratch* scratch, std::vector<BlockHit>& hits) const {
  if (engine_ && scratch) {
    engine_->find(block, *scratch, hits);
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
