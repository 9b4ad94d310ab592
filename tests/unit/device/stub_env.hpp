// Points the scripted NVML library at a script for the duration of a test.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <string>

namespace gpusage::testing {

inline std::string stub_script(const std::string& name) {
  return std::string(GPUSAGE_SOURCE_DIR) + "/tests/fixtures/nvml_stub/" + name;
}

class StubScript {
 public:
  explicit StubScript(const std::string& name) { ::setenv("GPUSAGE_NVML_STUB_SCRIPT", stub_script(name).c_str(), 1); }
  ~StubScript() { ::unsetenv("GPUSAGE_NVML_STUB_SCRIPT"); }
};

// The stub's call counter (a test hook it exports). The test keeps its own handle, so the library (and its
// counts) stays loaded across backends; compare counts before and after.
class StubCalls {
 public:
  explicit StubCalls(const char* library) : handle_(::dlopen(library, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_) count_ = reinterpret_cast<Count>(::dlsym(handle_, "gpusage_stub_call_count"));
  }
  ~StubCalls() {
    if (handle_) ::dlclose(handle_);
  }
  unsigned long long operator()(const char* function) const { return count_ ? count_(function) : ~0ULL; }
  bool loaded() const { return count_ != nullptr; }

 private:
  using Count = unsigned long long (*)(const char*);
  void* handle_;
  Count count_ = nullptr;
};

}  // namespace gpusage::testing
