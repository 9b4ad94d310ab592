#include "core/common/po_catalog.hpp"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <stdexcept>

namespace gpusage::i18n::detail {

namespace {

// ---- the .po entries ---------------------------------------------------------------------------------

// One entry as it is read: which string a continuation line extends is `open`.
struct Pending {
  std::optional<std::string> context, msgid, msgid_plural;
  std::vector<std::string> forms;
  bool fuzzy = false;
  std::string* open = nullptr;
  std::size_t line = 0;
};

[[noreturn]] void fail(std::size_t line, std::string_view what) {
  throw std::runtime_error(fmt::format("po catalog line {}: {}", line, what));
}

// A quoted C string ("…" with \n \t \" \\ escapes) to its text.
std::string unquote(std::string_view s, std::size_t line) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') fail(line, "expected a quoted string");
  std::string out;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 2 >= s.size()) fail(line, "a backslash ends the string");
    switch (char e = s[++i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      default: fail(line, fmt::format("unknown escape \\{}", e));
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "Plural-Forms: nplurals=1; plural=0;" from the header entry's text.
void read_header(const std::string& header, PoCatalog& catalog) {
  const std::size_t at = header.find("Plural-Forms:");
  if (at == std::string::npos) return;
  const std::string line = header.substr(at, header.find('\n', at) - at);
  const std::size_t n = line.find("nplurals="), p = line.find("plural=", n == std::string::npos ? 0 : n + 9);
  if (n == std::string::npos || p == std::string::npos) return;
  catalog.plurals = std::stoul(line.substr(n + 9));
  std::string expression = line.substr(p + 7);
  if (std::size_t semicolon = expression.find(';'); semicolon != std::string::npos) expression.resize(semicolon);
  catalog.plural_expression = std::string(trim(expression));
  evaluate_plural(catalog.plural_expression, 1);  // a malformed rule fails here, not at the first lookup
}

void finish(Pending& p, PoCatalog& catalog) {
  if (!p.msgid) {
    if (p.context || !p.forms.empty()) fail(p.line, "an entry without msgid");
    p = {};
    return;
  }
  if (p.msgid->empty() && !p.context) {
    if (!p.forms.empty()) read_header(p.forms.front(), catalog);
  } else {
    bool translated = !p.forms.empty();
    for (const auto& form : p.forms) translated = translated && !form.empty();
    if (translated && !p.fuzzy) {
      Entry entry{p.context.value_or(""), *p.msgid, p.msgid_plural.value_or(""), p.forms};
      catalog.index[key(entry.context, entry.msgid)] = catalog.entries.size();
      catalog.entries.push_back(std::move(entry));
    }
  }
  p = {};
}

// A keyword line: msgctxt, msgid, msgid_plural, msgstr or msgstr[N], then its first quoted piece.
void keyword_line(std::string_view line, std::size_t number, Pending& p, PoCatalog& catalog) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) fail(number, "a keyword without a string");
  const std::string_view word = line.substr(0, space);
  std::string text = unquote(trim(line.substr(space)), number);
  // A new entry starts at msgctxt or msgid once the previous one has its msgstr.
  if ((word == "msgctxt" || word == "msgid") && !p.forms.empty()) finish(p, catalog);
  if (p.line == 0) p.line = number;
  auto set = [&](std::optional<std::string>& field) {
    if (field) fail(number, fmt::format("a second {}", word));
    field = std::move(text);
    p.open = &*field;
  };
  if (word == "msgctxt") {
    set(p.context);
  } else if (word == "msgid") {
    set(p.msgid);
  } else if (word == "msgid_plural") {
    set(p.msgid_plural);
  } else if (word == "msgstr" || word.starts_with("msgstr[")) {
    const std::size_t form = word == "msgstr" ? 0 : std::stoul(std::string(word.substr(7)));
    if (form != p.forms.size()) fail(number, "msgstr forms out of order");
    p.forms.push_back(std::move(text));
    p.open = &p.forms.back();
  } else {
    fail(number, fmt::format("unknown keyword '{}'", word));
  }
}

// ---- Plural-Forms -------------------------------------------------------------------------------------

// A recursive-descent evaluator of the C subset Plural-Forms rules use (GNU gettext manual, "Plural
// forms"): n, decimal numbers, ( ), !, * / %, + -, < <= > >=, == !=, &&, ||, ?:, unsigned arithmetic.
class PluralExpression {
 public:
  PluralExpression(std::string_view text, unsigned long n) : text_(text), n_(n) {}

  unsigned long evaluate() {
    unsigned long value = conditional();
    skip_space();
    if (at_ < text_.size()) error();
    return value;
  }

 private:
  [[noreturn]] void error() const {
    throw std::runtime_error(fmt::format("Plural-Forms: cannot read '{}' at column {}", text_, at_ + 1));
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool accept(std::string_view token) {
    skip_space();
    // Callers try "<=" before "<", so a one-character token never takes half of a two-character one.
    if (text_.substr(at_, token.size()) != token) return false;
    at_ += token.size();
    return true;
  }
  unsigned long conditional() {
    unsigned long condition = logical_or();
    if (!accept("?")) return condition;
    unsigned long if_true = conditional();
    if (!accept(":")) error();
    unsigned long if_false = conditional();
    return condition ? if_true : if_false;
  }
  unsigned long logical_or() {
    unsigned long value = logical_and();
    while (accept("||")) value = (logical_and() || value) ? 1 : 0;
    return value;
  }
  unsigned long logical_and() {
    unsigned long value = equality();
    while (accept("&&")) value = (equality() && value) ? 1 : 0;
    return value;
  }
  unsigned long equality() {
    unsigned long value = relation();
    for (;;) {
      if (accept("=="))
        value = value == relation();
      else if (accept("!="))
        value = value != relation();
      else
        return value;
    }
  }
  unsigned long relation() {
    unsigned long value = additive();
    for (;;) {
      if (accept("<="))
        value = value <= additive();
      else if (accept(">="))
        value = value >= additive();
      else if (accept("<"))
        value = value < additive();
      else if (accept(">"))
        value = value > additive();
      else
        return value;
    }
  }
  unsigned long additive() {
    unsigned long value = multiplicative();
    for (;;) {
      if (accept("+"))
        value += multiplicative();
      else if (accept("-"))
        value -= multiplicative();
      else
        return value;
    }
  }
  unsigned long multiplicative() {
    unsigned long value = unary();
    for (;;) {
      if (accept("*")) {
        value *= unary();
      } else if (accept("/") || accept("%")) {
        const bool divide = text_[at_ - 1] == '/';
        unsigned long divisor = unary();
        if (divisor == 0) error();
        value = divide ? value / divisor : value % divisor;
      } else {
        return value;
      }
    }
  }
  unsigned long unary() {
    if (accept("!")) return unary() ? 0 : 1;
    if (accept("(")) {
      unsigned long value = conditional();
      if (!accept(")")) error();
      return value;
    }
    skip_space();
    if (at_ < text_.size() && text_[at_] == 'n') {
      ++at_;
      return n_;
    }
    if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) error();
    unsigned long value = 0;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      value = value * 10 + static_cast<unsigned long>(text_[at_++] - '0');
    }
    return value;
  }

  std::string_view text_;
  unsigned long n_;
  std::size_t at_ = 0;
};

}  // namespace

unsigned long evaluate_plural(std::string_view expression, unsigned long n) {
  return PluralExpression(expression, n).evaluate();
}

std::string key(std::string_view context, std::string_view msgid) {
  return context.empty() ? std::string(msgid) : std::string(context) + '\x04' + std::string(msgid);
}

const Entry* PoCatalog::find(std::string_view context, std::string_view msgid) const {
  auto it = index.find(key(context, msgid));
  return it == index.end() ? nullptr : &entries[it->second];
}

std::size_t PoCatalog::plural_index(unsigned long n) const {
  const unsigned long form = evaluate_plural(plural_expression, n);
  return static_cast<std::size_t>(form < plurals ? form : 0);
}

PoCatalog parse_po(std::string_view text) {
  PoCatalog catalog;
  Pending p;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (line.empty() || (line.front() == '#' && !p.forms.empty())) finish(p, catalog);
    if (line.empty()) {
      continue;
    } else if (line.starts_with("#,")) {
      p.fuzzy = p.fuzzy || line.find("fuzzy") != std::string_view::npos;
    } else if (line.front() == '#') {
      continue;  // translator and extracted comments, references, obsolete (#~) entries
    } else if (line.front() == '"') {
      if (!p.open) fail(number, "a continued string without a keyword");
      *p.open += unquote(line, number);
    } else {
      keyword_line(line, number, p, catalog);
    }
  }
  finish(p, catalog);
  return catalog;
}

}  // namespace gpusage::i18n::detail
