# The libraries the CLI links, as the executable that links them wants them (README "Install", "What the
# portable binary links").
#   gpusage, the tests    Debian's shared libraries: libfmt, libtomlplusplus, libcpp-httplib, ncurses.
#   gpusage-portable      the same compiled objects, linked so that the result needs glibc alone: libstdc++
#                         and libgcc static; fmt, toml++ and cpp-httplib from their compiled parts built here
#                         (src/portable); OpenSSL, zlib, brotli and ncurses from Debian's static archives.
#                         It is what the wheel, the tarball and the .deb ship (as bin/gpusage).
# gpusage::fmt, gpusage::tomlplusplus, gpusage::httplib and gpusage::curses pick the form by the linking
# executable's GPUSAGE_PORTABLE property, so the libraries under src/ compile once for both binaries.
set(GPUSAGE_GLIBC_FLOOR "2.34" CACHE STRING
  "The oldest glibc the binaries may need (newest GLIBC_ symbol version; tests/portable checks it)")
set(_portable "$<BOOL:$<TARGET_PROPERTY:GPUSAGE_PORTABLE>>")

# The cpp-httplib implementation Debian compiles into libcpp-httplib.so: split from the single header of
# Debian's source package by upstream's split.py (scripts/install-deps --portable fetches it). The split header
# must be the installed /usr/include/httplib.h byte for byte, so that the objects built against it link.
# The same folder as install-deps: $XDG_CACHE_HOME, else $HOME/.cache, else /tmp/.cache.
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_cache "$ENV{XDG_CACHE_HOME}")
elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
  set(_cache "$ENV{HOME}/.cache")
else()
  set(_cache "/tmp/.cache")
endif()
set(GPUSAGE_HTTPLIB_SOURCE_DIR "${_cache}/gpusage/cpp-httplib" CACHE PATH
  "Folder with cpp-httplib's split httplib.h and httplib.cc (scripts/install-deps --portable)")
find_path(GPUSAGE_HTTPLIB_HEADER_DIR httplib.h HINTS ${HTTPLIB_INCLUDE_DIRS} /usr/include)
set(GPUSAGE_PORTABLE_AVAILABLE OFF)
set(_why "")
if(NOT GPUSAGE_BUILD_CLI)
  set(_why "GPUSAGE_BUILD_CLI is OFF")
elseif(NOT EXISTS "${GPUSAGE_HTTPLIB_SOURCE_DIR}/httplib.cc")
  set(_why "no ${GPUSAGE_HTTPLIB_SOURCE_DIR}/httplib.cc (run scripts/install-deps --portable)")
else()
  file(SHA256 "${GPUSAGE_HTTPLIB_SOURCE_DIR}/httplib.h" _split)
  file(SHA256 "${GPUSAGE_HTTPLIB_HEADER_DIR}/httplib.h" _installed)
  if(NOT _split STREQUAL _installed)
    set(_why "${GPUSAGE_HTTPLIB_SOURCE_DIR}/httplib.h is not the installed httplib.h (run scripts/install-deps --portable)")
  endif()
endif()
# Debian's static archives (libssl-dev, zlib1g-dev, libbrotli-dev, libncurses-dev, libyaml-cpp-dev).
foreach(lib ssl crypto z brotlienc brotlidec brotlicommon ncurses tinfo yaml-cpp)
  find_library(GPUSAGE_STATIC_${lib} NAMES lib${lib}.a)
  if(NOT GPUSAGE_STATIC_${lib} AND NOT _why)
    set(_why "no static lib${lib}.a")
  endif()
endforeach()
if(_why)
  message(STATUS "gpusage-portable: not built: ${_why}")
else()
  set(GPUSAGE_PORTABLE_AVAILABLE ON)
endif()

add_library(gpusage_dep_fmt INTERFACE)
add_library(gpusage::fmt ALIAS gpusage_dep_fmt)
add_library(gpusage_dep_tomlplusplus INTERFACE)
add_library(gpusage::tomlplusplus ALIAS gpusage_dep_tomlplusplus)
add_library(gpusage_dep_httplib INTERFACE)
add_library(gpusage::httplib ALIAS gpusage_dep_httplib)
add_library(gpusage_dep_curses INTERFACE)
add_library(gpusage::curses ALIAS gpusage_dep_curses)
add_library(gpusage_dep_yamlcpp INTERFACE)
add_library(gpusage::yamlcpp ALIAS gpusage_dep_yamlcpp)
if(NOT GPUSAGE_PORTABLE_AVAILABLE)
  target_link_libraries(gpusage_dep_fmt INTERFACE fmt::fmt)
  target_link_libraries(gpusage_dep_yamlcpp INTERFACE yaml-cpp)
  target_link_libraries(gpusage_dep_tomlplusplus INTERFACE tomlplusplus::tomlplusplus)
  if(GPUSAGE_BUILD_CLI)
    target_link_libraries(gpusage_dep_httplib INTERFACE PkgConfig::HTTPLIB)
    target_link_libraries(gpusage_dep_curses INTERFACE ${CURSES_LIBRARIES})
  endif()
  return()
endif()

# The compiled parts, with the usage requirements (include folders, definitions) of the libraries they stand
# in for, so that every translation unit of either binary sees the same declarations.
add_library(gpusage_portable_fmt STATIC ${CMAKE_SOURCE_DIR}/src/portable/fmt_impl.cpp)
target_include_directories(gpusage_portable_fmt SYSTEM PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(gpusage_portable_fmt PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)
add_library(gpusage_portable_toml STATIC ${CMAKE_SOURCE_DIR}/src/portable/toml_impl.cpp)
target_include_directories(gpusage_portable_toml SYSTEM PUBLIC
  $<TARGET_PROPERTY:tomlplusplus::tomlplusplus,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_options(gpusage_portable_toml PUBLIC -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1)
# Debian's build of the library: its meson options and debian/rules' CPPHTTPLIB_USE_POLL.
add_library(gpusage_portable_httplib STATIC ${GPUSAGE_HTTPLIB_SOURCE_DIR}/httplib.cc)
target_include_directories(gpusage_portable_httplib SYSTEM PRIVATE ${GPUSAGE_HTTPLIB_SOURCE_DIR})
target_compile_definitions(gpusage_portable_httplib PRIVATE CPPHTTPLIB_USE_POLL)
target_compile_options(gpusage_portable_httplib PUBLIC -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT
  -DCPPHTTPLIB_BROTLI_SUPPORT)
set_target_properties(gpusage_portable_fmt gpusage_portable_toml gpusage_portable_httplib PROPERTIES
  UNITY_BUILD OFF EXCLUDE_FROM_ALL ON)
# Third-party code nobody steps through here: no debug info for httplib.cc (6,600 lines with OpenSSL's headers,
# the longest compile of the portable parts).
target_compile_options(gpusage_portable_httplib PRIVATE -g0)
# Static archives in dependency order; OpenSSL's libcrypto calls dlopen (providers) and threads.
target_link_libraries(gpusage_portable_httplib PUBLIC ${GPUSAGE_STATIC_ssl} ${GPUSAGE_STATIC_crypto}
  ${GPUSAGE_STATIC_brotlienc} ${GPUSAGE_STATIC_brotlidec} ${GPUSAGE_STATIC_brotlicommon} ${GPUSAGE_STATIC_z}
  ${CMAKE_DL_LIBS} Threads::Threads)

# One generator expression per item: a list inside $<IF:...> would be split at its semicolons.
function(gpusage_portable_choice target portable_items shared_items)
  foreach(item ${portable_items})
    target_link_libraries(${target} INTERFACE "$<${_portable}:${item}>")
  endforeach()
  foreach(item ${shared_items})
    target_link_libraries(${target} INTERFACE "$<$<NOT:${_portable}>:${item}>")
  endforeach()
endfunction()
gpusage_portable_choice(gpusage_dep_fmt gpusage_portable_fmt fmt::fmt)
gpusage_portable_choice(gpusage_dep_tomlplusplus gpusage_portable_toml tomlplusplus::tomlplusplus)
gpusage_portable_choice(gpusage_dep_httplib gpusage_portable_httplib PkgConfig::HTTPLIB)
# yaml-cpp (--train-config): Debian's libyaml-cpp.a, with the headers of its shared form.
target_include_directories(gpusage_dep_yamlcpp SYSTEM INTERFACE $<TARGET_PROPERTY:yaml-cpp,INTERFACE_INCLUDE_DIRECTORIES>)
gpusage_portable_choice(gpusage_dep_yamlcpp "${GPUSAGE_STATIC_yaml-cpp}" yaml-cpp)
gpusage_portable_choice(gpusage_dep_curses "${GPUSAGE_STATIC_ncurses};${GPUSAGE_STATIC_tinfo}" "${CURSES_LIBRARIES}")
