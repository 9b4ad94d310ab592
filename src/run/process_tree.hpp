// Which processes belong to the run: the child and everything it started (DataLoader workers, torchrun's
// ranks). Read from /proc's parent links, so a process that re-parented itself away (a daemon) is not
// counted.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

namespace gpusage::run {

// `root` and its descendants in a pid -> parent pid table.
std::set<unsigned> descendants(unsigned root, const std::map<unsigned, unsigned>& parents);

// pid -> parent pid of every process readable under `proc_root` ("/proc", or a fixture directory).
std::map<unsigned, unsigned> read_parents(const std::string& proc_root = "/proc");

// The ppid field of a /proc/PID/stat line ("PID (comm) STATE PPID …"; comm may hold spaces and parentheses).
std::optional<unsigned> parent_from_stat(const std::string& stat);

}  // namespace gpusage::run
