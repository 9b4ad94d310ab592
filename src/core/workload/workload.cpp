#include "core/workload/workload.hpp"
// Placeholder: the zoo is being written.
