#include "run/throughput.hpp"

#include <array>
#include <charconv>
#include <regex>
#include <string>

namespace gpusage::run {

namespace {

std::optional<double> number(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > 0)) return std::nullopt;
  return value;
}

// tqdm's units that count training work (tqdm's default "it", and the unit= names training loops pass).
bool training_unit(const std::string& unit) {
  static const std::array<std::string_view, 17> units = {"it",   "img",      "imgs", "images", "samples", "sample",
                                                         "ex",   "examples", "tok",  "tokens", "batch",   "batches",
                                                         "step", "steps",    "seq",  "seqs",   "frames"};
  for (auto u : units)
    if (unit == u) return true;
  return false;
}

// tqdm's format_sizeof with unit_scale: k, M, G, T are powers of 1000.
double scale(const std::string& prefix) {
  if (prefix == "k") return 1e3;
  if (prefix == "M") return 1e6;
  if (prefix == "G") return 1e9;
  if (prefix == "T") return 1e12;
  return 1;
}

template <class F>
void last_match(const std::string& text, const std::regex& re, F&& take) {
  std::smatch found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) found = *it;
  if (!found.empty()) take(found);
}

}  // namespace

std::optional<Throughput> parse_throughput(std::string_view line_view) {
  // Cheap filter first, so that a flood of ordinary lines (paths like "runs/s1" included) never reaches the
  // regular expressions: every format above has one of these, and tqdm's custom units come in its "[…]".
  auto has = [&](std::string_view part) { return line_view.find(part) != std::string_view::npos; };
  if (!has("it/s") && !has("s/it") && !has("/step") && !has("_per_sec") && !(has("[") && (has("/s") || has("s/"))))
    return std::nullopt;
  const std::string line(line_view);
  std::optional<Throughput> out;

  static const std::regex hf(R"('train_(samples|steps)_per_second'\s*:\s*'?([0-9]+(?:\.[0-9]+)?))");
  last_match(line, hf, [&](const std::smatch& m) {
    if (auto v = number(m[2].str())) out = Throughput{*v, m[1].str(), "hf-trainer"};
  });
  if (out) return out;

  static const std::regex lightning(
      R"((samples|batches)_per_sec['"]?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?))");
  last_match(line, lightning, [&](const std::smatch& m) {
    if (auto v = number(m[2].str())) out = Throughput{*v, m[1].str(), "lightning"};
  });
  if (out) return out;

  // Keras 2 and 3 print the time per step as "%.0fs/step", "%.0fms/step" or "%.0fus/step".
  static const std::regex keras(R"((?:^|[\s\]])([0-9]+(?:\.[0-9]+)?)(s|ms|us|\xC2\xB5s)/step\b)");
  last_match(line, keras, [&](const std::smatch& m) {
    auto v = number(m[1].str());
    if (!v) return;
    const std::string unit = m[2].str();
    const double seconds = *v * (unit == "s" ? 1.0 : unit == "ms" ? 1e-3 : 1e-6);
    out = Throughput{1.0 / seconds, "steps", "keras"};
  });
  if (out) return out;

  // tqdm's rate: "{n:.2f}{unit}/s", or "{n:.2f}s/{unit}" below one per second.
  static const std::regex rate(R"((?:^|[\s,|\[])([0-9]+(?:\.[0-9]+)?)([kMGT]?)([A-Za-z]+)/s\b)");
  last_match(line, rate, [&](const std::smatch& m) {
    if (!training_unit(m[3].str())) return;
    if (auto v = number(m[1].str())) out = Throughput{*v * scale(m[2].str()), m[3].str(), "tqdm"};
  });
  if (out) return out;
  static const std::regex inverse(R"((?:^|[\s,|\[])([0-9]+(?:\.[0-9]+)?)s/([A-Za-z]+)\b)");
  last_match(line, inverse, [&](const std::smatch& m) {
    if (!training_unit(m[2].str())) return;
    if (auto v = number(m[1].str())) out = Throughput{1.0 / *v, m[2].str(), "tqdm"};
  });
  return out;
}

}  // namespace gpusage::run
