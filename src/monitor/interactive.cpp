#include "monitor/interactive.hpp"

#include <curses.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <string>

#include "core/common/text.hpp"
#include "core/common/time.hpp"
#include "core/common/units.hpp"
#include "monitor/views.hpp"

namespace gpusage::monitor {

namespace {

using Clock = std::chrono::steady_clock;

// endwin() on every way out of the view, including exceptions.
struct CursesSession {
  CursesSession() {
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(1, COLOR_GREEN, -1);
      init_pair(2, COLOR_YELLOW, -1);
      init_pair(3, COLOR_RED, -1);
    }
  }
  ~CursesSession() { endwin(); }
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;
};

constexpr std::size_t kHistory = 512;

struct History {
  std::deque<double> util, memory, power;  // fractions 0..1, -1 where unknown
  void push(const device::GpuSample& g) {
    auto add = [](std::deque<double>& d, std::optional<double> v) {
      d.push_back(v ? std::clamp(*v, 0.0, 1.0) : -1.0);
      if (d.size() > kHistory) d.pop_front();
    };
    add(util, g.utilization_gpu_percent ? std::optional<double>(*g.utilization_gpu_percent / 100.0) : std::nullopt);
    add(memory, g.memory_used_fraction());
    add(power, g.power_w && g.power_limit_w && *g.power_limit_w > 0
                   ? std::optional<double>(*g.power_w / *g.power_limit_w)
                   : std::nullopt);
  }
};

int level_color(double fraction) { return fraction >= 0.9 ? 3 : fraction >= 0.7 ? 2 : 1; }

void put(int y, int x, const std::string& text, attr_t attributes = A_NORMAL) {
  if (y >= LINES || x >= COLS) return;
  attron(attributes);
  mvaddnstr(y, x, text.c_str(), COLS - x);
  attroff(attributes);
}

// "[#####.....]" with a colour by level; "[ n/a ]" when unknown.
void bar(int y, int x, int width, std::optional<double> fraction) {
  if (width < 3) return;
  if (!fraction) {
    put(y, x, "[" + std::string(static_cast<std::size_t>(width - 2), ' ') + "]");
    put(y, x + 1, "n/a");
    return;
  }
  double f = std::clamp(*fraction, 0.0, 1.0);
  int filled = static_cast<int>(f * (width - 2) + 0.5);
  put(y, x, "[");
  put(y, x + 1, std::string(static_cast<std::size_t>(filled), '#'),
      has_colors() ? COLOR_PAIR(level_color(f)) : A_NORMAL);
  put(y, x + 1 + filled, std::string(static_cast<std::size_t>(width - 2 - filled), '.') + "]");
}

// The newest values that fit, one character per sample, ten levels (ASCII, so any terminal shows it).
std::string sparkline(const std::deque<double>& values, int width) {
  static const char levels[] = " .:-=+*#%@";
  std::string out;
  std::size_t n = std::min<std::size_t>(values.size(), static_cast<std::size_t>(std::max(width, 0)));
  for (std::size_t i = values.size() - n; i < values.size(); ++i)
    // Blank only for exactly zero, so a GPU at 5% is visibly not idle.
    out += values[i] < 0 ? '?' : values[i] <= 0 ? levels[0] : levels[1 + std::min(8, static_cast<int>(values[i] * 9))];
  return out;
}

// Word wrap at `width` columns (alerts are sentences, not meant to be cut).
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines(1);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back("  ");
    if (!lines.back().empty() && lines.back() != "  ") lines.back() += ' ';
    lines.back() += word;
    start = end + 1;
  }
  return lines;
}

std::string or_na(const std::optional<unsigned>& v, const char* suffix) {
  return v ? fmt::format("{}{}", *v, suffix) : "n/a";
}

void draw(const Tick& tick, std::map<unsigned, History>& histories, double interval_s) {
  const device::Sample& s = tick.sample;
  erase();
  int y = 0;
  std::string title =
      fmt::format(" gpusage monitor   driver {}   CUDA {}   {}   every {:g} s   q quits ",
                  s.driver_version.value_or("n/a"), s.cuda_driver_version ? s.cuda_driver_version->to_string() : "n/a",
                  wallclock::iso_utc(s.unix_time_s).substr(11, 8), interval_s);
  put(y++, 0, text::pad_right(title, static_cast<std::size_t>(std::max(0, COLS))), A_REVERSE);
  int bar_width = std::clamp((COLS - 40) / 3, 10, 40);
  const auto& host = s.host;
  put(y, 0, "Host CPU");
  bar(y, 9, bar_width, host.cpu_percent ? std::optional<double>(*host.cpu_percent / 100) : std::nullopt);
  put(y, 10 + bar_width, host.cpu_percent ? fmt::format("{:3.0f}%", *host.cpu_percent) : " n/a");
  int x = 16 + bar_width;
  put(y, x, "memory");
  std::optional<double> host_memory;
  if (host.memory_used_bytes && host.memory_total_bytes && *host.memory_total_bytes > 0)
    host_memory = static_cast<double>(*host.memory_used_bytes) / static_cast<double>(*host.memory_total_bytes);
  bar(y, x + 7, bar_width, host_memory);
  if (host.memory_used_bytes && host.memory_total_bytes)
    put(y, x + 8 + bar_width,
        units::format_bytes(static_cast<double>(*host.memory_used_bytes)) + " / " +
            units::format_bytes(static_cast<double>(*host.memory_total_bytes)));
  y += 2;
  if (!s.gpu_available) put(y++, 0, "GPU: " + s.gpu_message, A_BOLD);
  int history_width = std::max(10, COLS - 16);
  for (const auto& g : s.gpus) {
    History& h = histories[g.index];
    put(y++, 0,
        fmt::format("GPU {}  {}   {}  {}  fan {}  throttle: {}", g.index, g.name, or_na(g.temperature_c, " C"),
                    g.pstate ? fmt::format("P{}", *g.pstate) : "P?", or_na(g.fan_percent, "%"),
                    g.throttle_mask ? device::throttle::describe(*g.throttle_mask) : "n/a"),
        A_BOLD);
    put(y, 2, "util");
    bar(y, 8, bar_width, h.util.empty() || h.util.back() < 0 ? std::nullopt : std::optional<double>(h.util.back()));
    put(y, 9 + bar_width, or_na(g.utilization_gpu_percent, "%"));
    x = 15 + bar_width;
    put(y, x, "mem");
    bar(y, x + 4, bar_width, g.memory_used_fraction());
    put(y, x + 5 + bar_width,
        g.memory_used_bytes && g.memory_total_bytes
            ? units::format_bytes(static_cast<double>(*g.memory_used_bytes)) + " / " +
                  units::format_bytes(static_cast<double>(*g.memory_total_bytes))
            : "n/a");
    y++;
    put(y, 2, "power");
    bar(y, 8, bar_width, h.power.empty() || h.power.back() < 0 ? std::nullopt : std::optional<double>(h.power.back()));
    put(y, 9 + bar_width,
        g.power_w ? fmt::format("{:.0f} / {} W", *g.power_w,
                                g.power_limit_w ? fmt::format("{:.0f}", *g.power_limit_w) : "n/a")
                  : "n/a");
    y++;
    put(y++, 2,
        fmt::format("clocks SM {} / {} MHz   memory {} / {} MHz   PCIe gen {} x{}", or_na(g.sm_clock_mhz, ""),
                    or_na(g.sm_clock_max_mhz, ""), or_na(g.memory_clock_mhz, ""), or_na(g.memory_clock_max_mhz, ""),
                    or_na(g.pcie_gen, ""), or_na(g.pcie_width, "")));
    put(y++, 2, "util  |" + sparkline(h.util, history_width));
    put(y++, 2, "mem   |" + sparkline(h.memory, history_width));
    put(y++, 2, "power |" + sparkline(h.power, history_width));
    y++;
  }
  put(y++, 0, fmt::format("{:<5}{:>8}  {:<24}{:>12}{:>8}", "GPU", "PID", "Process", "GPU memory", "CPU %"),
      A_UNDERLINE);
  bool any = false;
  for (const auto& g : s.gpus)
    for (const auto& p : g.processes) {
      any = true;
      put(y++, 0,
          // By display width: a process name may be Chinese (two columns a character).
          fmt::format("{:<5}{:>8}  {}{:>12}{:>8}", g.index, p.pid, text::pad_right(text::cut_to_width(p.name, 23), 24),
                      p.used_memory_bytes ? units::format_bytes(static_cast<double>(*p.used_memory_bytes)) : "n/a",
                      p.cpu_percent ? fmt::format("{:.0f}", *p.cpu_percent) : "n/a"));
    }
  if (!any) put(y++, 0, "  no GPU processes");
  y++;
  put(y++, 0, tick.alerts.empty() ? "Alerts: none" : "Alerts:", A_BOLD);
  for (const auto& a : tick.alerts)
    for (const auto& line :
         wrap(fmt::format("[{}] {}", a.severity, a.message), static_cast<std::size_t>(std::max(20, COLS - 4))))
      put(y++, 2, line, has_colors() ? COLOR_PAIR(a.severity == "critical" ? 3 : 2) : A_NORMAL);
  refresh();
}

}  // namespace

void run_interactive(double interval_s, const std::function<bool(Tick&)>& next, const std::atomic<bool>& stop) {
  CursesSession session;
  std::map<unsigned, History> histories;
  Tick tick;
  auto advance = [&] {
    if (!next(tick)) return false;
    for (const auto& g : tick.sample.gpus) histories[g.index].push(g);
    return true;
  };
  if (!advance()) return;
  draw(tick, histories, interval_s);
  auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
  auto deadline = Clock::now() + interval;
  while (!stop) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // Wake at least every 250 ms so a stop request is seen even if the signal did not interrupt the wait.
    timeout(static_cast<int>(std::clamp<long long>(wait, 0, 250)));
    int key = getch();
    if (key == 'q' || key == 'Q') break;
    if (key == KEY_RESIZE) draw(tick, histories, interval_s);
    if (Clock::now() >= deadline) {
      if (!advance()) break;
      draw(tick, histories, interval_s);
      deadline += interval;
      if (deadline < Clock::now()) deadline = Clock::now() + interval;  // fell behind: do not burst
    }
  }
}

}  // namespace gpusage::monitor
