// The child's output as lines, for the parsers (throughput, doctor's log rules). The bytes that reach the
// terminal and train.log are never these: this is a read-only view. Progress bars redraw with '\r', so a
// carriage return ends a line too; terminal escape sequences (colours, cursor moves) are removed; a line
// longer than `max_line_bytes` is cut there (the rest of it is skipped), so a binary flood cannot grow
// memory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpusage::run {

class LineAssembler {
 public:
  explicit LineAssembler(std::size_t max_line_bytes = 4096) : max_(max_line_bytes) {}

  // Feeds bytes; returns the lines they completed (without their terminator; empty lines dropped).
  std::vector<std::string> feed(std::string_view bytes);
  // The unterminated rest, as a line (at the end of the output).
  std::vector<std::string> finish();

 private:
  enum class Escape { none, esc, csi, osc, osc_esc };
  void end_line(std::vector<std::string>& out);
  std::size_t max_;
  std::string line_;
  Escape escape_ = Escape::none;
};

// Text with the escape sequences removed, split into lines as above: the whole log, for the final scan.
std::string clean_text(std::string_view bytes);

}  // namespace gpusage::run
