#include "run/process_tree.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace gpusage::run {
namespace {

TEST(ProcessTree, DescendantsFollowParentLinks) {
  // 10 -> 11 -> 13, 10 -> 12; 20 is unrelated; 1 is init.
  const std::map<unsigned, unsigned> parents = {{10, 1}, {11, 10}, {12, 10}, {13, 11}, {20, 1}};
  EXPECT_EQ(descendants(10, parents), (std::set<unsigned>{10, 11, 12, 13}));
  EXPECT_EQ(descendants(13, parents), (std::set<unsigned>{13}));
}

TEST(ProcessTree, ParentFromStatSkipsACommandNameWithParenthesesAndSpaces) {
  EXPECT_EQ(parent_from_stat("4242 (python) S 4200 4242 4200 0 -1"), 4200u);
  EXPECT_EQ(parent_from_stat("77 (pt_data_worker) (1)) R 76 77 76"), 76u);
  EXPECT_FALSE(parent_from_stat("garbage"));
}

TEST(ProcessTree, ReadsThisProcessFromProc) {
  const auto parents = read_parents();
  ASSERT_TRUE(parents.count(static_cast<unsigned>(::getpid())));
  EXPECT_EQ(parents.at(static_cast<unsigned>(::getpid())), static_cast<unsigned>(::getppid()));
}

}  // namespace
}  // namespace gpusage::run
