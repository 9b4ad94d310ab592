#include "report/bench_file.hpp"

#include "report/output_file.hpp"

namespace gpusage::report {

BenchFile read_bench_file(const std::string& path) { return parse_bench_file(read_input_file(path, "--bench"), path); }

}  // namespace gpusage::report
