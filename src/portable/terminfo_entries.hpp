// The compiled terminfo entries built into gpusage-portable (cmake/EmbedTerminfo.cmake writes their data).
#pragma once

#include <cstddef>

namespace gpusage::portable {

struct TerminfoEntry {
  const char* name;  // "xterm-256color"
  const unsigned char* data;
  std::size_t size;
};

extern const TerminfoEntry kTerminfoEntries[];
extern const std::size_t kTerminfoEntryCount;

}  // namespace gpusage::portable
