// Test helper shared by the catalog tests (one definition, so that a unity batch of them compiles).
#pragma once

#include <string>

namespace gpusage::catalog {

// The path of a catalog fixture: tests/fixtures/catalog/NAME.
inline std::string fixture(const std::string& name) {
  return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/catalog/" + name;
}

}  // namespace gpusage::catalog
