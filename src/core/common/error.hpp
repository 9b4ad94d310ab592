// Errors in gpusage are exceptions, caught once at the CLI edge (src/cli/main.cpp).
//  - InputError: the user gave a bad value, file or name. The CLI prints the message as one line and
//    exits 2. The message names the bad value and says what is accepted.
//  - anything else (std::exception): an internal failure, exit 1.
#pragma once

#include <stdexcept>
#include <string>

namespace gpusage {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace gpusage
