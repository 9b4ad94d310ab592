// run/fit_batch: the search's order of tries, the command's {batch}, and the accumulation plan.
#include "run/fit_batch.hpp"

#include <gtest/gtest.h>

namespace gpusage::run {
namespace {

// The batches tried against a trainer that runs up to `limit`.
std::vector<int> tries(int start, int limit, int max_batch = 65536) {
  BatchSearch search(start, max_batch);
  std::vector<int> out;
  while (auto b = search.next()) {
    out.push_back(*b);
    search.record(*b, *b <= limit);
  }
  return out;
}

TEST(BatchSearch, DoublesFromOneThenBisects) {
  EXPECT_EQ(tries(1, 37), (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
}

TEST(BatchSearch, StartsFromThePredictionAndBisectsBelowIt) {
  EXPECT_EQ(tries(50, 37), (std::vector<int>{50, 25, 37, 43, 40, 38}));
}

TEST(BatchSearch, StopsAtTheLargestBatchAllowed) {
  EXPECT_EQ(tries(16, 1000, 40), (std::vector<int>{16, 32, 40}));
  BatchSearch none(4, 100);
  none.record(4, false);
  none.record(2, false);
  none.record(1, false);
  EXPECT_FALSE(none.next());
  EXPECT_EQ(none.largest_ran(), 0);
}

TEST(FitBatch, EveryBatchPlaceholderIsReplaced) {
  EXPECT_EQ(with_batch({"python", "train.py", "--bs={batch}", "{batch}"}, 37),
            (std::vector<std::string>{"python", "train.py", "--bs=37", "37"}));
}

TEST(FitBatch, AccumulationPlanPrefersAnExactSplit) {
  EXPECT_EQ(accumulation_plan(37, 148), "batch 37 x 4 accumulation steps = 148 per GPU (target 148)");
  EXPECT_EQ(accumulation_plan(37, 100),
            "batch 34 x 3 accumulation steps = 102 per GPU (target 100, the nearest "
            "reachable above it)");
  EXPECT_EQ(accumulation_plan(64, 32), "batch 32 x 1 accumulation step = 32 per GPU (target 32)");
}

TEST(FitBatch, AnOomFindingIsOutOfMemoryAndStoppedAtTheStepsRan) {
  RunSummary s;
  s.exit_code = 143;
  s.stopped_by = "steps";
  EXPECT_EQ(classify(s), TryResult::ran);
  s.stopped_by = "time-limit";
  EXPECT_EQ(classify(s), TryResult::failed);
  s.findings.push_back({});
  s.findings.back().id = "log-cuda-oom";
  EXPECT_EQ(classify(s), TryResult::out_of_memory);
}

}  // namespace
}  // namespace gpusage::run
