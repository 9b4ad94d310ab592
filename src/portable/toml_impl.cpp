// toml++'s compiled part for gpusage-portable. Debian's libtomlplusplus-dev is built as a shared library
// (TOML_HEADER_ONLY=0) and ships no static archive; toml++ documents TOML_IMPLEMENTATION as the way to put
// its implementation in exactly one translation unit of a program that includes it in that mode.
#define TOML_IMPLEMENTATION 1
#include <toml++/toml.h>
