// Output files are never half-written: content goes to a temporary file beside the target, then a rename.
#pragma once

#include <string>
#include <string_view>

namespace gpusage::report {

// Throws InputError when the directory cannot be written (a user's bad path).
void write_file_atomically(const std::string& path, std::string_view content);

// The whole of an input file the user named with `option` ("--bench"). Throws InputError when it cannot be read.
std::string read_input_file(const std::string& path, const std::string& option);

}  // namespace gpusage::report
