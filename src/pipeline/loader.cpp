#include "pipeline/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "pipeline/decode.hpp"
#include "pipeline/random.hpp"

namespace gpusage::pipeline {
namespace detail {

struct Slot {
  BatchMemory memory;
  std::vector<std::int64_t> labels;
  std::int64_t batch = 0;  // the batch this slot holds or is being filled with
  int filled = 0;          // samples written
  bool leased = false;
};

struct LoaderState {
  ImageFolder folder;
  LoaderConfig config;
  std::size_t floats_per_image = 0;
  std::int64_t per_epoch = 0;  // images of one shard in one epoch

  std::mutex mutex;  // guards slots, stop, failure, next_batch
  std::condition_variable slot_free;
  std::condition_variable batch_ready;
  std::vector<Slot> slots;
  bool stop = false;
  std::exception_ptr failure;
  std::int64_t next_batch = 0;
  std::atomic<std::int64_t> next_sample{0};
  std::vector<std::thread> threads;

  std::mutex order_mutex;
  std::map<std::int64_t, std::shared_ptr<const std::vector<std::uint32_t>>> orders;  // epoch -> permutation

  std::unique_ptr<std::atomic<bool>[]> bad;  // per image: known unreadable
  mutable std::mutex stats_mutex;
  LoaderStats stats;

  std::shared_ptr<const std::vector<std::uint32_t>> order(std::int64_t epoch);
  void record_failure(std::size_t image, const std::string& reason);
  void fail(std::exception_ptr error);
  void work();
};

namespace {

constexpr std::uint64_t kOrderKey = 0x6f72646572ull;  // "order": keeps the shuffle apart from the crops

// Not io::read_file: an image is read into the worker's reused buffer on the hot path, and a bad one is a
// DecodeError that skips that image, not an InputError that ends the run.
std::size_t read_image_bytes(const std::string& path, std::vector<std::uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw DecodeError(fmt::format("cannot open: {}", std::strerror(errno)));
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (size < 0) {
    std::fclose(f);
    throw DecodeError("cannot read its size");
  }
  bytes.resize(static_cast<std::size_t>(size));
  const std::size_t got = size > 0 ? std::fread(bytes.data(), 1, bytes.size(), f) : 0;
  const bool error = std::ferror(f) != 0;
  std::fclose(f);
  if (error || got != bytes.size()) throw DecodeError(fmt::format("cannot read: {}", std::strerror(errno)));
  return got;
}

BatchMemory heap_memory(std::size_t floats) {
  const std::size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
  auto* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!data) throw std::bad_alloc();
  std::memset(data, 0, bytes);  // touch the pages now, not in the first timed batches
  return {data, std::shared_ptr<void>(data, [](void* p) { std::free(p); })};
}

// One worker's tools, kept between samples.
struct Worker {
  Decoder decoder;
  Resampler resampler;
  DecodedImage image;
  std::vector<std::uint8_t> bytes;

  void make(const LoaderState& s, const std::string& path, Rng& rng, float* out) {
    const LoaderConfig& c = s.config;
    read_image_bytes(path, bytes);
    const ImageFormat format = sniff_format(bytes);
    const ImageSize full = decoder.size(bytes, format);
    const CropBox box = random_resized_crop(full.height, full.width, c.crop, rng);
    const bool flip = rng.uniform01() < c.flip_probability;
    const ScalingFactor factor = format == ImageFormat::jpeg
                                     ? choose_scaling(box.width, box.height, c.image_size, fast_jpeg_scaling_factors())
                                     : ScalingFactor{};
    // The crop in the scaled image's pixels: scaled decoding shrinks both axes by (about) the factor.
    const double sx = static_cast<double>(scaled_dimension(full.width, factor)) / full.width;
    const double sy = static_cast<double>(scaled_dimension(full.height, factor)) / full.height;
    const Region crop{box.left * sx, box.top * sy, (box.left + box.width) * sx, (box.top + box.height) * sy};
    // Decode the crop and what the resample reads around it: the filter's support (1 pixel, or the
    // shrink factor), plus 2 so that the decoded part's edge columns (see decode_region) are not read.
    const int margin = static_cast<int>(std::ceil(
                           std::max({1.0, (crop.x1 - crop.x0) / c.image_size, (crop.y1 - crop.y0) / c.image_size}))) +
                       2;
    const PixelBox needed{static_cast<int>(std::floor(crop.x0)) - margin,
                          static_cast<int>(std::floor(crop.y0)) - margin, static_cast<int>(std::ceil(crop.x1)) + margin,
                          static_cast<int>(std::ceil(crop.y1)) + margin};
    decoder.decode_region(bytes, format, full, factor, needed, image);
    // The resample sees the decoded part as the image, clamping its taps to it: the same taps as on the
    // whole image wherever the margin was not cut by the image's own edge, where both clamp alike.
    const Region region{crop.x0 - image.left, crop.y0 - image.top, crop.x1 - image.left, crop.y1 - image.top};
    const ImageView view{image.rgb.data(), image.width, image.height, static_cast<std::size_t>(image.width) * 3};
    resampler.resize_normalize(view, region, c.image_size, flip, c.normalization, out);
  }
};

}  // namespace

std::shared_ptr<const std::vector<std::uint32_t>> LoaderState::order(std::int64_t epoch) {
  std::lock_guard lock(order_mutex);
  if (auto it = orders.find(epoch); it != orders.end()) return it->second;
  auto perm = std::make_shared<std::vector<std::uint32_t>>(folder.samples.size());
  std::iota(perm->begin(), perm->end(), 0u);
  if (config.shuffle) {  // Fisher-Yates
    Rng rng = Rng::keyed(config.seed, kOrderKey, static_cast<std::uint64_t>(epoch));
    for (std::size_t i = perm->size() - 1; i > 0; --i)
      std::swap((*perm)[i], (*perm)[static_cast<std::size_t>(rng.randint(0, static_cast<int>(i)))]);
  }
  // A few epochs are in flight at most (workers run a bounded number of samples ahead); a straggler
  // that needs an evicted one recomputes it, to the same result.
  if (orders.size() >= 4) orders.erase(orders.begin());
  orders.emplace(epoch, perm);
  return perm;
}

void LoaderState::record_failure(std::size_t image, const std::string& reason) {
  if (bad[image].exchange(true)) return;
  std::lock_guard lock(stats_mutex);
  ++stats.failed_files;
  if (stats.failed.size() < kMaxNamedFailures) stats.failed.push_back({folder.samples[image].path, reason});
}

void LoaderState::fail(std::exception_ptr error) {
  std::lock_guard lock(mutex);
  if (!failure) failure = error;
  stop = true;
  slot_free.notify_all();
  batch_ready.notify_all();
}

void LoaderState::work() {
  Worker w;
  const int batch = config.batch_size;
  const std::int64_t n_slots = static_cast<std::int64_t>(slots.size());
  using Clock = std::chrono::steady_clock;
  try {
    while (true) {
      const std::int64_t k = next_sample.fetch_add(1);
      const std::int64_t b = k / batch;
      const int position = static_cast<int>(k % batch);
      Slot& slot = slots[static_cast<std::size_t>(b % n_slots)];
      {
        std::unique_lock lock(mutex);
        slot_free.wait(lock, [&] { return stop || slot.batch == b; });
        if (stop) return;
      }
      const auto start = Clock::now();
      const std::int64_t epoch = k / per_epoch;
      const std::int64_t p = k % per_epoch;
      const auto perm = order(epoch);
      float* out = slot.memory.data + static_cast<std::size_t>(position) * floats_per_image;
      bool made = false;
      for (std::int64_t attempt = 0; attempt < per_epoch && !made; ++attempt) {
        const std::size_t q = static_cast<std::size_t>((p + attempt) % per_epoch);
        const std::size_t image =
            (*perm)[q * static_cast<std::size_t>(config.shard_count) + static_cast<std::size_t>(config.shard_index)];
        if (bad[image]) continue;
        Rng rng = Rng::keyed(config.seed, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(k),
                             static_cast<std::uint64_t>(attempt));
        try {
          w.make(*this, folder.samples[image].path, rng, out);
          slot.labels[static_cast<std::size_t>(position)] = folder.samples[image].label;
          made = true;
        } catch (const DecodeError& e) {
          record_failure(image, e.what());
        }
      }
      if (!made)
        throw std::runtime_error(
            fmt::format("no readable image in '{}': all {} files failed to decode", folder.root, per_epoch));
      const double busy = std::chrono::duration<double>(Clock::now() - start).count();
      {
        std::lock_guard lock(stats_mutex);
        ++stats.images;
        stats.busy_s += busy;
      }
      std::lock_guard lock(mutex);
      if (++slot.filled == batch) batch_ready.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

}  // namespace detail

BatchLease::BatchLease(BatchLease&& other) noexcept
    : state_(std::move(other.state_)), slot_(other.slot_), index_(other.index_) {
  other.slot_ = -1;
}

BatchLease& BatchLease::operator=(BatchLease&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
    slot_ = other.slot_;
    index_ = other.index_;
    other.slot_ = -1;
  }
  return *this;
}

BatchLease::~BatchLease() { release(); }

void BatchLease::release() {
  if (!state_ || slot_ < 0) return;
  {
    std::lock_guard lock(state_->mutex);
    detail::Slot& slot = state_->slots[static_cast<std::size_t>(slot_)];
    slot.leased = false;
    slot.filled = 0;
    slot.batch += static_cast<std::int64_t>(state_->slots.size());
  }
  state_->slot_free.notify_all();
  state_.reset();
  slot_ = -1;
}

float* BatchLease::images() const { return state_->slots[static_cast<std::size_t>(slot_)].memory.data; }
const std::int64_t* BatchLease::labels() const { return state_->slots[static_cast<std::size_t>(slot_)].labels.data(); }
int BatchLease::size() const { return state_->config.batch_size; }

Loader::Loader(ImageFolder folder, LoaderConfig config) : state_(std::make_shared<detail::LoaderState>()) {
  if (config.batch_size < 1) throw std::invalid_argument("Loader: batch_size must be at least 1");
  if (config.image_size < 1) throw std::invalid_argument("Loader: image_size must be at least 1");
  if (config.workers < 1) throw std::invalid_argument("Loader: workers must be at least 1");
  if (config.shard_count < 1 || config.shard_index < 0 || config.shard_index >= config.shard_count)
    throw std::invalid_argument("Loader: shard_index must be in [0, shard_count)");
  if (folder.samples.size() < static_cast<std::size_t>(config.shard_count))
    throw std::invalid_argument(
        fmt::format("Loader: {} images cannot be shared by {} ranks", folder.samples.size(), config.shard_count));
  detail::LoaderState& s = *state_;
  s.folder = std::move(folder);
  s.config = std::move(config);
  const LoaderConfig& c = s.config;
  s.floats_per_image = 3 * static_cast<std::size_t>(c.image_size) * c.image_size;
  s.per_epoch = static_cast<std::int64_t>(s.folder.samples.size()) / c.shard_count;
  s.bad = std::make_unique<std::atomic<bool>[]>(s.folder.samples.size());
  s.stats.workers = c.workers;
  const int ahead = c.prefetch_batches > 0 ? c.prefetch_batches : 2 + (c.workers + c.batch_size - 1) / c.batch_size;
  s.slots.resize(static_cast<std::size_t>(ahead) + 1);  // + the one the consumer holds
  const BatchAllocator allocate = c.allocate ? c.allocate : detail::heap_memory;
  for (std::size_t i = 0; i < s.slots.size(); ++i) {
    s.slots[i].memory = allocate(s.floats_per_image * static_cast<std::size_t>(c.batch_size));
    s.slots[i].labels.assign(static_cast<std::size_t>(c.batch_size), 0);
    s.slots[i].batch = static_cast<std::int64_t>(i);
  }
  try {
    for (int i = 0; i < c.workers; ++i) s.threads.emplace_back([&s] { s.work(); });
  } catch (...) {
    s.fail(nullptr);
    for (auto& t : s.threads) t.join();
    throw;
  }
}

Loader::~Loader() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->slot_free.notify_all();
  state_->batch_ready.notify_all();
  for (auto& t : state_->threads) t.join();
}

BatchLease Loader::next() {
  detail::LoaderState& s = *state_;
  const std::int64_t index = s.next_batch;
  const int slot_index = static_cast<int>(index % static_cast<std::int64_t>(s.slots.size()));
  detail::Slot& slot = s.slots[static_cast<std::size_t>(slot_index)];
  std::unique_lock lock(s.mutex);
  if (slot.leased)
    throw std::logic_error(
        fmt::format("Loader::next: the consumer holds all {} batches; release one first", s.slots.size()));
  s.batch_ready.wait(
      lock, [&] { return s.failure || s.stop || (slot.batch == index && slot.filled == s.config.batch_size); });
  if (s.failure) std::rethrow_exception(s.failure);
  if (s.stop) throw std::logic_error("Loader::next after stop");
  slot.leased = true;
  ++s.next_batch;
  return BatchLease(state_, slot_index, index);
}

LoaderStats Loader::stats() const {
  std::lock_guard lock(state_->stats_mutex);
  return state_->stats;
}

const LoaderConfig& Loader::config() const { return state_->config; }
std::size_t Loader::floats_per_image() const { return state_->floats_per_image; }

}  // namespace gpusage::pipeline
