// The fonts the report page, its Vega charts and the SVG charts name: system fonts only (no font is shipped),
// Latin first, then a font with the Chinese characters on each platform, so that Chinese text renders in a
// browser on macOS (PingFang SC, Hiragino Sans GB), Windows (Microsoft YaHei) and Linux (Noto Sans CJK SC,
// Source Han Sans SC, WenQuanYi Micro Hei), whichever language the page is in.
#pragma once

namespace gpusage::report {

// CSS and Vega's `font`: names with spaces quoted.
inline constexpr const char* kPageFonts =
    R"(system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "PingFang SC", "Hiragino Sans GB", )"
    R"("Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif)";
// An SVG font-family attribute's value (double-quoted in the markup, so names are single-quoted): DejaVu Sans
// first, whose widths the chart's text layout assumes.
inline constexpr const char* kSvgFonts =
    "'DejaVu Sans', Helvetica, Arial, 'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', 'Noto Sans CJK SC', "
    "'Source Han Sans SC', 'WenQuanYi Micro Hei', sans-serif";

}  // namespace gpusage::report
