#include "bench/runner.hpp"

int main(int argc, char** argv) { return gpusage::bench::run_main(argc, argv); }
