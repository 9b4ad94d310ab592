#include "bench/data_source.hpp"

#include <chrono>

namespace gpusage::bench {
namespace {

// Pinned (page-locked) host memory from LibTorch's allocator, kept alive by the tensor that owns it.
pipeline::BatchMemory pinned_memory(std::size_t floats) {
  torch::Tensor t = torch::empty({static_cast<std::int64_t>(floats)},
                                 torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  float* data = t.data_ptr<float>();
  return {data, std::shared_ptr<void>(data, [t](void*) mutable { t = torch::Tensor(); })};
}

}  // namespace

ImageFolderSource::ImageFolderSource(pipeline::ImageFolder folder, pipeline::LoaderConfig config,
                                     const torch::Device& device, bool channels_last)
    : device_(device), channels_last_(channels_last), image_size_(config.image_size) {
  if (device.is_cuda()) config.allocate = pinned_memory;
  loader_ = std::make_unique<pipeline::Loader>(std::move(folder), std::move(config));
}

Batch ImageFolderSource::next() {
  auto lease = std::make_shared<pipeline::BatchLease>(loader_->next());
  const std::int64_t b = lease->size();
  // The tensors share the lease: the batch memory is recycled when both are gone.
  auto release = [lease](void*) mutable { lease.reset(); };
  Batch batch;
  batch.input = torch::from_blob(lease->images(), {b, 3, image_size_, image_size_}, release,
                                 torch::TensorOptions().dtype(torch::kFloat));
  batch.target = torch::from_blob(const_cast<std::int64_t*>(lease->labels()), {b}, release,
                                  torch::TensorOptions().dtype(torch::kLong));
  lease.reset();
  if (device_.is_cuda()) {
    // A synchronous copy from pinned memory: the loop has synchronised at the end of the previous step
    // anyway, and the buffer may be recycled as soon as this returns.
    batch.input = batch.input.to(device_);
    batch.target = batch.target.to(device_);
    if (channels_last_) batch.input = batch.input.contiguous(at::MemoryFormat::ChannelsLast);
  }
  return batch;
}

std::string ImageFolderSource::mode() const { return "ImageFolder from disk"; }

ImageFolderSource::Probe ImageFolderSource::probe(int batches) {
  loader_->next();  // untimed, released at once
  const pipeline::LoaderStats before = loader_->stats();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < batches; ++i) loader_->next();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const pipeline::LoaderStats after = loader_->stats();
  Probe p;
  p.images = static_cast<std::int64_t>(batches) * loader_->config().batch_size;
  p.images_per_s = wall_s > 0 ? static_cast<double>(p.images) / wall_s : 0;
  const double busy_s = after.busy_s - before.busy_s;
  p.per_worker_images_per_s = busy_s > 0 ? static_cast<double>(after.images - before.images) / busy_s : 0;
  return p;
}

}  // namespace gpusage::bench
