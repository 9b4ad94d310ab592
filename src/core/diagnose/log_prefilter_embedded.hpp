// The scanner's trigger words compiled into a Hyperscan database at build time (issue 54, "peak memory
// unchanged"): log_prefilter_hyperscan_generate.cpp builds the same words the scanner builds at run time
// (engine_words(scanner_trigger_words())), compiles them for any x86-64 processor and writes the serialized
// database and the words into a generated source that log_prefilter_hyperscan.cpp links. At run time the
// database is only deserialized, so gpusage links Hyperscan's runtime library (libhs_runtime) and never maps
// the compiler or fills the heap it uses.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpusage::diagnose::embedded {

// hs_serialize_database's bytes.
extern const unsigned char hyperscan_database[];
extern const std::size_t hyperscan_database_size;
// The words the database was compiled from, in their pattern-id order (engine_words' order); a LiteralMatcher
// asking for other words gets no engine, as the database would report the wrong ones.
extern const std::string_view hyperscan_words[];
extern const std::size_t hyperscan_word_count;

}  // namespace gpusage::diagnose::embedded
