// The input pipeline: N worker threads decode and transform the images of an ImageFolder into batches
// of float32 [B, 3, S, S] (NCHW, contiguous: what torch::from_blob takes without a copy) plus int64
// labels, a bounded number of batches ahead of the consumer, in order.
//
// Determinism: the loader is an endless stream of epochs; sample k of the stream is image
// perm_e[k mod M] of epoch e = k / M (M images per shard, perm_e shuffled from (seed, e)), cropped and
// flipped with a random stream keyed by (seed, e, k). Workers claim samples one at a time, so the
// batches are bit-identical for any worker count, and a batch may straddle two epochs.
//
// Per sample: RandomResizedCrop's box is drawn from the JPEG header's size, then only that part of the
// image is decoded (at 1/2, 1/4 or 1/8 scale when it stays at least as large as the output), resampled,
// flipped and normalised straight into the batch.
//
// A file that cannot be read or decoded is counted once, named (the first kMaxNamedFailures), and
// replaced by the next image of the epoch's order, so batches stay full and the run goes on. (A JPEG
// truncated below the crop is not noticed: its missing rows are never read.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/image_folder.hpp"
#include "pipeline/transforms.hpp"

namespace gpusage::pipeline {

// Memory for one batch's images, handed in by the caller: pinned host memory for a CUDA device, so the
// copy to the device is a DMA transfer. `owner` keeps it alive.
struct BatchMemory {
  float* data = nullptr;
  std::shared_ptr<void> owner;
};
using BatchAllocator = std::function<BatchMemory(std::size_t floats)>;

struct LoaderConfig {
  int batch_size = 32;
  int image_size = 224;  // RandomResizedCrop(image_size)
  int workers = 1;
  // Batches made ahead of the one the consumer holds; 0: 2 + ceil(workers / batch_size). Workers share
  // batches sample by sample, so unlike DataLoader's prefetch_factor per worker this need not grow
  // with the worker count.
  int prefetch_batches = 0;
  std::uint64_t seed = 0;
  bool shuffle = true;
  CropParams crop;
  double flip_probability = 0.5;
  Normalization normalization;
  int shard_index = 0;  // data-parallel ranks each read every shard_count-th image of the epoch's order
  int shard_count = 1;
  BatchAllocator allocate;  // empty: 64-byte aligned heap memory
};

struct FailedFile {
  std::string path;
  std::string reason;
};

struct LoaderStats {
  int workers = 0;
  std::int64_t images = 0;         // samples written into batches
  double busy_s = 0;               // summed over the workers: reading, decoding and transforming
  std::int64_t failed_files = 0;   // distinct files that could not be read or decoded
  std::vector<FailedFile> failed;  // the first kMaxNamedFailures of them
};
constexpr std::size_t kMaxNamedFailures = 20;

namespace detail {
struct LoaderState;
}

// A batch held by the consumer. Its memory goes back to the workers when the lease is destroyed (it may
// outlive the Loader; the memory lives until the last lease is gone).
class BatchLease {
 public:
  BatchLease() = default;
  BatchLease(BatchLease&& other) noexcept;
  BatchLease& operator=(BatchLease&& other) noexcept;
  BatchLease(const BatchLease&) = delete;
  BatchLease& operator=(const BatchLease&) = delete;
  ~BatchLease();

  float* images() const;                         // batch_size * 3 * image_size * image_size floats, NCHW
  const std::int64_t* labels() const;            // batch_size class indices
  int size() const;                              // batch_size
  std::int64_t index() const { return index_; }  // position in the stream of batches

 private:
  friend class Loader;
  BatchLease(std::shared_ptr<detail::LoaderState> state, int slot, std::int64_t index)
      : state_(std::move(state)), slot_(slot), index_(index) {}
  void release();
  std::shared_ptr<detail::LoaderState> state_;
  int slot_ = -1;
  std::int64_t index_ = 0;
};

class Loader {
 public:
  // Starts the workers. Throws std::invalid_argument for a bad config.
  Loader(ImageFolder folder, LoaderConfig config);
  // Stops and joins the workers, also in the middle of an epoch.
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch of the stream; blocks until it is complete. Rethrows a worker's failure (every file
  // unreadable, out of memory). Calling it while holding prefetch_batches + 1 leases is a logic_error
  // (it would wait forever).
  BatchLease next();
  LoaderStats stats() const;
  const LoaderConfig& config() const;
  std::size_t floats_per_image() const;

 private:
  std::shared_ptr<detail::LoaderState> state_;
};

}  // namespace gpusage::pipeline
