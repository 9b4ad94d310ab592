// gpusage: parses the command line and dispatches. Everything else lives in the library and front ends.
#include "cli/app.hpp"

int main(int argc, char** argv) { return gpusage::cli::run(argc, argv); }
