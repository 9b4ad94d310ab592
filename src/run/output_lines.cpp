#include "run/output_lines.hpp"

namespace gpusage::run {

void LineAssembler::end_line(std::vector<std::string>& out) {
  if (!line_.empty()) out.push_back(std::move(line_));
  line_.clear();
}

std::vector<std::string> LineAssembler::feed(std::string_view bytes) {
  std::vector<std::string> out;
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    // ECMA-48: ESC [ … final byte 0x40-0x7E (CSI); ESC ] … BEL or ESC \ (OSC, e.g. window titles); ESC X (two
    // bytes).
    switch (escape_) {
      case Escape::esc: escape_ = c == '[' ? Escape::csi : c == ']' ? Escape::osc : Escape::none; continue;
      case Escape::csi:
        if (u >= 0x40 && u <= 0x7e) escape_ = Escape::none;
        continue;
      case Escape::osc:
        if (c == '\a')
          escape_ = Escape::none;
        else if (c == '\x1b')
          escape_ = Escape::osc_esc;
        continue;
      case Escape::osc_esc: escape_ = c == '\\' ? Escape::none : Escape::osc; continue;
      case Escape::none: break;
    }
    if (c == '\x1b') {
      escape_ = Escape::esc;
    } else if (c == '\n' || c == '\r') {
      end_line(out);
    } else if (line_.size() < max_) {
      line_.push_back(c == '\t' || u >= 0x20 ? c : ' ');
    }
  }
  return out;
}

std::vector<std::string> LineAssembler::finish() {
  std::vector<std::string> out;
  end_line(out);
  escape_ = Escape::none;
  return out;
}

std::string clean_text(std::string_view bytes) {
  LineAssembler lines(1u << 16);
  std::string text;
  auto append = [&](const std::vector<std::string>& done) {
    for (const auto& l : done) text += l + "\n";
  };
  append(lines.feed(bytes));
  append(lines.finish());
  return text;
}

}  // namespace gpusage::run
