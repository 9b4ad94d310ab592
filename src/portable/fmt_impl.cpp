// fmt's compiled part for gpusage-portable, from the headers Debian's libfmt-dev ships (it ships no static
// archive and no src/): format-inl.h holds the out-of-line functions (FMT_FUNC is not `inline` unless
// FMT_HEADER_ONLY), and the templates that format.h and core.h declare `extern` or only declare are
// instantiated here, so the objects built against the shared libfmt link unchanged (cmake/Portable.cmake).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// Declared in format.h (dragonbox::to_decimal, the shortest round-trip float and double digits).
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

// Declared in core.h (locale_ref's std::locale constructor and accessor).
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

// The `extern template` declarations at the end of format.h.
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

// buffer<T>::append is declared in core.h and defined in format.h; the shared library exports these two.
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
