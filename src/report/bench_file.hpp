// `--bench FILE.json` for the report: the file read from disk, parsed by the core's one reader of bench
// results (core/estimate/bench_file.hpp).
#pragma once

#include <string>

#include "core/estimate/bench_file.hpp"

namespace gpusage::report {

using estimate::BenchFile;
using estimate::BenchRun;
using estimate::parse_bench_file;

// Throws InputError for an unreadable file or one that is not gpusage bench output.
BenchFile read_bench_file(const std::string& path);

}  // namespace gpusage::report
