#include "bench/batch_search.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpusage::bench {

BatchSearch::BatchSearch(int start, int limit) : limit_(limit) {
  if (start < 1 || limit < start) throw std::invalid_argument("BatchSearch: need 1 <= start <= limit");
  next_ = start;
}

std::optional<int> BatchSearch::next() const { return next_; }

void BatchSearch::record(int batch, bool fits, std::string reason) {
  if (!next_ || batch != *next_) throw std::logic_error("BatchSearch::record: not the batch next() asked for");
  trials_.push_back({batch, fits, fits ? std::string{} : std::move(reason)});
  if (fits) {
    last_fit_ = std::max(last_fit_, batch);
  } else {
    first_failure_ = std::min(first_failure_.value_or(batch), batch);
  }
  if (!first_failure_) {
    // Growing: double until the first failure or the cap.
    next_ = batch >= limit_ ? std::nullopt : std::optional<int>(std::min(batch * 2, limit_));
    return;
  }
  // Bisecting between the last success and the first failure.
  const int low = last_fit_;
  const int high = *first_failure_;
  if (high - low <= 1) {
    next_.reset();
  } else {
    next_ = low + (high - low) / 2;
  }
}

}  // namespace gpusage::bench
