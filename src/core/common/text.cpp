#include "core/common/text.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace gpusage::text {

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trim(std::string_view s) {
  auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto begin = std::find_if_not(s.begin(), s.end(), is_space);
  auto end = std::find_if_not(s.rbegin(), s.rend(), is_space).base();
  return begin < end ? std::string(begin, end) : std::string();
}

std::vector<std::string> split(std::string_view s, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(separator, start);
    parts.emplace_back(trim(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string squash(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c)) out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest(std::string_view wanted, const std::vector<std::string>& choices, std::size_t limit) {
  const std::string key = squash(wanted);
  // A choice that holds the word (or that the word holds) comes first, whatever its distance; among those, and
  // among the rest, the nearer first: adamw9 is adamw, not adam, though it holds both.
  struct Scored {
    bool holds;
    std::size_t distance;
    std::string choice;
  };
  std::vector<Scored> scored;
  for (const auto& choice : choices) {
    const std::string c = squash(choice);
    const std::size_t distance = edit_distance(key, c);
    const bool holds = !key.empty() && (c.find(key) != std::string::npos || key.find(c) != std::string::npos);
    if (holds || distance <= std::max<std::size_t>(2, key.size() / 3)) scored.push_back({holds, distance, choice});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) {
    return x.holds != y.holds ? x.holds : x.distance < y.distance;
  });
  std::vector<std::string> out;
  for (const auto& [holds, distance, choice] : scored) {
    if (out.size() == limit) break;
    out.push_back(choice);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace gpusage::text
