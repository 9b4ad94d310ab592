// The error-code table (data/doctor/error_codes.toml): every code classifies from a log line that names it by
// number and from one that names it by name (and by each alias), in the wrapper its frameworks print.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/common/error.hpp"
#include "core/diagnose/error_codes.hpp"
#include "core/diagnose/log_rules.hpp"
#include "core/diagnose/log_scan.hpp"

namespace gpusage::diagnose {
namespace {

const ErrorCodeTable& table() { return ErrorCodeTable::builtin(); }

// The findings a code of `kind` may come first as. A CUDA out-of-memory code is the framework's OOM: the
// driver API's CUDA_ERROR_OUT_OF_MEMORY is what TensorFlow and JAX print.
std::set<std::string> expected_findings(ErrorKind kind) {
  if (kind == ErrorKind::cuda_oom) return {"log-cuda-oom", "log-tf-oom", "log-jax-oom"};
  return {finding_id(kind)};
}

std::string number_line(const ErrorCode& c) {
  if (c.family == "cuda") return fmt::format("RuntimeError: CUDA error {}", c.number);
  if (c.family == "nccl") return fmt::format("torch.distributed.DistBackendError: NCCL error {}", c.number);
  if (c.family == "cudnn8" || c.family == "cudnn9") return fmt::format("RuntimeError: cuDNN error {}", c.number);
  return fmt::format("jaxlib.xla_extension.XlaRuntimeError: status code {}", c.number);
}

std::string name_line(const ErrorCode& c, const std::string& name) {
  if (c.family == "absl") return fmt::format("jaxlib.xla_extension.XlaRuntimeError: {}: the step failed", name);
  return fmt::format("RuntimeError: {}", name);
}

std::vector<const ErrorCode*> identify(const std::string& line) {
  std::string lower = line;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return table().identify(line, lower);
}

class EachCode : public ::testing::TestWithParam<std::size_t> {
 protected:
  const ErrorCode& code() const { return table().codes()[GetParam()]; }
  // The line names this code (or, for a name two cuDNN versions share, a code of the same kind).
  void expect_classified(const std::string& line, bool by_number) const {
    const auto found = identify(line);
    const bool named = std::any_of(found.begin(), found.end(), [&](const ErrorCode* c) {
      return by_number ? c == &code() : c->kind == code().kind;
    });
    EXPECT_TRUE(named) << line;
    if (code().kind == ErrorKind::none) return;  // not a failure: nothing to report for the code itself
    const auto findings = check_log(scan_log(line + "\n"), RunContext{});
    EXPECT_TRUE(expected_findings(code().kind).count(findings.front().id)) << line << " -> " << findings.front().id;
  }
};

TEST_P(EachCode, ClassifiesFromALineNamingItsNumber) { expect_classified(number_line(code()), true); }

TEST_P(EachCode, ClassifiesFromALineNamingItsNameOrAnyAlias) {
  expect_classified(name_line(code(), code().name), false);
  for (const auto& alias : code().aliases) expect_classified(name_line(code(), alias), false);
}

std::string code_test_name(const ::testing::TestParamInfo<std::size_t>& info) {
  const ErrorCode& c = table().codes()[info.param];
  std::string name = c.family + "_" + std::to_string(c.number);
  return name;
}

INSTANTIATE_TEST_SUITE_P(ErrorCodeTable, EachCode,
                         ::testing::Range<std::size_t>(0, ErrorCodeTable::builtin().codes().size()), code_test_name);

TEST(ErrorCodeTable, HasTheCodesUsersHitWithTheirNumbersFromNvidiasHeaders) {
  const std::vector<std::pair<int, std::string>> cuda = {
      {2, "cudaErrorMemoryAllocation"},      {3, "cudaErrorInitializationError"},
      {35, "cudaErrorInsufficientDriver"},   {46, "cudaErrorDevicesUnavailable"},
      {100, "cudaErrorNoDevice"},            {200, "cudaErrorInvalidKernelImage"},
      {209, "cudaErrorNoKernelImageForDevice"}, {217, "cudaErrorPeerAccessUnsupported"},
      {222, "cudaErrorUnsupportedPtxVersion"}, {700, "cudaErrorIllegalAddress"},
      {710, "cudaErrorAssert"},              {719, "cudaErrorLaunchFailure"},
      {803, "cudaErrorSystemDriverMismatch"}, {804, "cudaErrorCompatNotSupportedOnDevice"},
      {999, "cudaErrorUnknown"}};
  for (const auto& [number, name] : cuda) {
    const ErrorCode* c = table().by_number("cuda", number);
    ASSERT_NE(c, nullptr) << number;
    EXPECT_EQ(c->name, name);
  }
  EXPECT_EQ(table().by_name("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")->number, 804);
  EXPECT_EQ(table().by_number("nccl", 2)->name, "ncclSystemError");
  EXPECT_EQ(table().by_number("nccl", 6)->message, "remote process exited or there was a network error");
  // cuDNN 8 and 9 number the same status differently.
  EXPECT_EQ(table().by_number("cudnn8", 8)->name, "CUDNN_STATUS_EXECUTION_FAILED");
  EXPECT_EQ(table().by_number("cudnn9", 5000)->name, "CUDNN_STATUS_EXECUTION_FAILED");
  EXPECT_EQ(table().by_number("absl", 8)->name, "RESOURCE_EXHAUSTED");
  for (const auto& f : table().families()) EXPECT_EQ(f.url.rfind("https://", 0), 0u) << f.id;
}

TEST(ErrorCodeTable, ReadsTheWrappersFrameworksPrint) {
  auto first = [](const std::string& line) {
    const auto found = identify(line);
    return found.empty() ? std::string("(none)") : found.front()->name;
  };
  EXPECT_EQ(first("F0101 check.cpp:12] Check failed: error == cudaSuccess (803 vs. 0)"), "cudaErrorSystemDriverMismatch");
  EXPECT_EQ(first("Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to \"an illegal memory access\""),
            "cudaErrorIllegalAddress");
  EXPECT_EQ(first("CUDA error at main.cu:42 code=710(cudaErrorAssert)"), "cudaErrorAssert");
  EXPECT_EQ(first("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 804: "
                  "forward compatibility was attempted on non supported HW"),
            "cudaErrorCompatNotSupportedOnDevice");
  EXPECT_EQ(first("RuntimeError: NCCL Error 2: unhandled system error"), "ncclSystemError");
  EXPECT_EQ(first("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"), "CUDNN_STATUS_EXECUTION_FAILED");
  // Pre-CUDA-10.1 numbers differ, the message does not: "(77)" is read by its message.
  EXPECT_EQ(first("RuntimeError: cuda runtime error (77) : an illegal memory access was encountered"),
            "cudaErrorIllegalAddress");
  EXPECT_EQ(first("loss 0.25 step 700"), "(none)");
}

TEST(ErrorCodeTable, AMalformedTableNamesTheEntry) {
  try {
    ErrorCodeTable::parse("[[family]]\nid = \"cuda\"\ntitle = \"t\"\nurl = \"https://x\"\n[[code]]\nfamily = \"cuda\"\n"
                          "number = 1\nname = \"cudaErrorX\"\nkind = \"sideways\"\n",
                          "codes.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "codes.toml: code[0] (cudaErrorX): unknown kind 'sideways'");
  }
}

}  // namespace
}  // namespace gpusage::diagnose
