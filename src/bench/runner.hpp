// gpusage-bench's command line: parse, run the sweep / batch search / distributed run, write the JSON.
#pragma once

namespace gpusage::bench {

// Exit codes as everywhere in gpusage: 0 success, 2 bad usage or input, 1 internal failure.
// A failed trial (out of memory, non-finite) is a result, not a failure of the run: exit 0.
int run_main(int argc, char** argv);

}  // namespace gpusage::bench
