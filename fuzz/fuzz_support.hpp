// What every harness shares. A harness feeds one input to one parser and then checks what came out.
// Expected errors are the parser's contract (an InputError is a one-line message and exit 2 at the CLI);
// any other exception escapes LLVMFuzzerTestOneInput and libFuzzer reports it as a crash, as it does a
// sanitizer report or a failed invariant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/common/error.hpp"

// An invariant of the parsed result; abort() so libFuzzer keeps the input as a crasher.
#define FUZZ_CHECK(condition)                                                                          \
  do {                                                                                                 \
    if (!(condition)) {                                                                                \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                                    \
    }                                                                                                  \
  } while (false)

namespace gpusage::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `body`; an InputError is an accepted answer to a bad input.
template <class Body>
int accepting_input_errors(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  }
  return 0;
}

}  // namespace gpusage::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
