#include "run/process_tree.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpusage::run {

std::set<unsigned> descendants(unsigned root, const std::map<unsigned, unsigned>& parents) {
  std::map<unsigned, std::vector<unsigned>> children;
  for (const auto& [pid, parent] : parents) children[parent].push_back(pid);
  std::set<unsigned> tree{root};
  std::vector<unsigned> todo{root};
  while (!todo.empty()) {
    unsigned pid = todo.back();
    todo.pop_back();
    for (unsigned child : children[pid])
      if (tree.insert(child).second) todo.push_back(child);
  }
  return tree;
}

std::optional<unsigned> parent_from_stat(const std::string& stat) {
  // The command name is in parentheses and may contain ") ": the state and ppid follow the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state, ppid;
  if (!(rest >> state >> ppid)) return std::nullopt;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(ppid.data(), ppid.data() + ppid.size(), value);
  if (ec != std::errc() || end != ppid.data() + ppid.size()) return std::nullopt;
  return value;
}

std::map<unsigned, unsigned> read_parents(const std::string& proc_root) {
  std::map<unsigned, unsigned> parents;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    unsigned pid = 0;
    auto [end, parse_ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parse_ec != std::errc() || end != name.data() + name.size()) continue;
    std::ifstream in(entry.path() / "stat");  // a process that exited meanwhile is skipped
    std::string stat;
    if (!std::getline(in, stat)) continue;
    if (auto parent = parent_from_stat(stat)) parents[pid] = *parent;
  }
  return parents;
}

}  // namespace gpusage::run
