#include "core/device/xid.hpp"

#include <gtest/gtest.h>

namespace gpusage::device {
namespace {

TEST(XidTable, EveryCommonTrainingXidHasANameAMeaningAndANextStep) {
  for (std::uint64_t xid : {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119}) {
    const auto info = find_xid(xid);
    ASSERT_TRUE(info) << "XID " << xid;
    EXPECT_EQ(info->xid, xid);
    EXPECT_FALSE(info->name.empty()) << xid;
    EXPECT_FALSE(info->meaning.empty()) << xid;
    EXPECT_FALSE(info->action.empty()) << xid;
  }
}

TEST(XidTable, FallenOffTheBusNeedsTheNodeRebooted) {
  const auto info = find_xid(79);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->name, "GPU has fallen off the bus");
  EXPECT_TRUE(info->hardware);
  EXPECT_TRUE(
      describe_xid(79).starts_with("XID 79 (GPU has fallen off the bus): the GPU stopped answering on PCIe"))
      << describe_xid(79);
  EXPECT_NE(describe_xid(79).find("Next: drain the node and reboot it"), std::string::npos);
}

TEST(XidTable, ProgramFaultsAreNotHardwareFaults) {
  for (std::uint64_t xid : {13, 31, 43, 45}) EXPECT_FALSE(find_xid(xid)->hardware) << xid;
  for (std::uint64_t xid : {48, 64, 74, 79, 95, 119}) EXPECT_TRUE(find_xid(xid)->hardware) << xid;
}

TEST(XidTable, UnknownXidGetsTheGenericLineWithNvidiasList) {
  EXPECT_FALSE(find_xid(9999));
  EXPECT_EQ(
      describe_xid(9999),
      "XID 9999: a GPU error gpusage has no description of. Next: look it up in NVIDIA's XID list "
      "(https://docs.nvidia.com/deploy/xid-errors/index.html) and check `dmesg` for the driver's message "
      "around it.");
}

}  // namespace
}  // namespace gpusage::device
