// The message of the InputError a call throws: tests compare what a user is told, word for word.
#pragma once

#include <string>

#include "core/common/error.hpp"

namespace gpusage::testing {

// "(no InputError)" when the call returns or throws anything else.
template <class F>
std::string input_error_message(F&& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace gpusage::testing
