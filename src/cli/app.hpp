#pragma once

namespace gpusage::cli {
// Runs gpusage with these arguments and returns the process exit code (0 ok, 2 bad input, 1 internal).
int run(int argc, char** argv);
}  // namespace gpusage::cli
